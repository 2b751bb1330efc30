"""Textures and surfaces shared by every executor: CUDA arrays, texture/surface objects, samplers.

Names and defaults follow the CUDA runtime's ``cudaResourceDesc``/``cudaTextureDesc`` (address
mode, filter mode, read mode, normalized coordinates, border colour). A texture or surface object
is a 64-bit handle, as ``cudaCreateTextureObject`` makes them: the handle carries a tag in its top
16 bits and an index into the process-wide table of live objects, so a value that is no object's
handle (an uninitialised argument, a pointer) is recognised, never read through.
The fetch formulas themselves are in ``texfetch`` (pure numpy, all lanes at once).
"""

from __future__ import annotations

import enum
import itertools
import threading
from dataclasses import dataclass, field

import numpy as np

from ..errors import LaunchError


class AddressMode(enum.Enum):
    """cudaTextureAddressMode (the enum's values are CUDA's)."""
    WRAP = 0
    CLAMP = 1
    MIRROR = 2
    BORDER = 3


class FilterMode(enum.Enum):
    POINT = 0
    LINEAR = 1


class ReadMode(enum.Enum):
    ELEMENT_TYPE = 0
    NORMALIZED_FLOAT = 1


# Element formats a CUDA array holds (cudaChannelFormatKind x bits).
ELEMENT_DTYPES = tuple(np.dtype(t) for t in ("int8", "uint8", "int16", "uint16", "int32", "uint32",
                                             "float16", "float32"))
CHANNELS = (1, 2, 4)

_TAG_TEX = 0x7E58          # top 16 bits of a texture object's handle ("tex")
_TAG_SURF = 0x5F52         # ... of a surface object's
_INDEX_MASK = (1 << 48) - 1


class CudaArray:
    """A CUDA array (cudaMallocArray / cudaMalloc3DArray): texels of one element type, 1, 2 or 4
    channels. ``shape`` is in numpy order, outermost first: ``(w,)``, ``(h, w)``, ``(d, h, w)``;
    layered arrays put the layer first (``(layers, w)``, ``(layers, h, w)``); a cubemap is
    ``(6, h, h)`` (faces +x, -x, +y, -y, +z, -z), a layered cubemap ``(6 * layers, h, h)``.
    The texels are ``self.data``, a numpy array of ``shape + (channels,)``."""

    def __init__(self, shape, dtype=np.float32, channels: int = 1, *, layered: bool = False,
                 cubemap: bool = False, data=None) -> None:
        shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        dt = np.dtype(dtype)
        if dt not in ELEMENT_DTYPES:
            raise LaunchError(f"CudaArray: element type {dt} is not a CUDA array format; use one of "
                              + ", ".join(str(t) for t in ELEMENT_DTYPES))
        if channels not in CHANNELS:
            raise LaunchError(f"CudaArray: {channels} channels; a CUDA array has 1, 2 or 4")
        spatial = len(shape) - (1 if layered or cubemap else 0)
        if not 1 <= spatial <= 3 or any(s <= 0 for s in shape):
            raise LaunchError(f"CudaArray: shape {shape} is not a 1D, 2D or 3D extent"
                              + (" plus a layer count" if layered or cubemap else ""))
        if cubemap and (spatial != 2 or shape[-1] != shape[-2] or shape[0] % 6):
            raise LaunchError(f"CudaArray: a cubemap is (6 * layers, n, n); got {shape}")
        self.shape, self.dtype, self.channels = shape, dt, channels
        self.layered, self.cubemap = layered, cubemap
        self.linear = False          # linear memory (tex1Dfetch): integer index, no addressing
        self.data = np.zeros(shape + (channels,), dtype=dt)
        if data is not None:
            self.copy_from_host(data)

    @classmethod
    def from_numpy(cls, a, channels: int = 1, *, layered: bool = False, cubemap: bool = False) -> "CudaArray":
        """``a`` of the array's shape, with a last axis of ``channels`` when channels > 1."""
        a = np.asarray(a)
        if channels > 1 and (a.ndim < 2 or a.shape[-1] != channels):
            raise LaunchError(f"CudaArray.from_numpy: {channels} channels need a last axis of {channels}; "
                              f"got shape {list(a.shape)}")
        return cls(a.shape[:-1] if channels > 1 else a.shape, a.dtype, channels, layered=layered,
                   cubemap=cubemap, data=a)

    def copy_from_host(self, a) -> None:
        a = np.asarray(a)
        if a.size != self.data.size:
            raise LaunchError(f"CudaArray{list(self.shape)}x{self.channels}: {a.size} values given, "
                              f"{self.data.size} needed")
        self.data[...] = a.reshape(self.data.shape).astype(self.dtype, copy=False)

    def to_numpy(self) -> np.ndarray:
        """A copy of the texels: the array's shape, plus a channel axis when channels > 1."""
        return (self.data[..., 0] if self.channels == 1 else self.data).copy()

    @property
    def extent(self) -> tuple[int, ...]:
        """Width, height, depth (as many as the geometry has), innermost first."""
        spatial = self.shape[1:] if self.layered or self.cubemap else self.shape
        return tuple(reversed(spatial))

    @property
    def layers(self) -> int:
        if self.cubemap:
            return self.shape[0] // 6
        return self.shape[0] if self.layered else 0

    @property
    def element_bytes(self) -> int:
        return self.dtype.itemsize * self.channels

    def __repr__(self) -> str:
        kind = "cubemap " if self.cubemap else "layered " if self.layered else ""
        return f"CudaArray({kind}{self.dtype}x{self.channels}{list(self.shape)})"


class MipmappedArray:
    """A mipmapped CUDA array (cudaMallocMipmappedArray): ``levels`` CudaArrays, level 0 of
    ``shape`` and each next one halving every spatial extent (at least 1); layers and cube faces
    stay. ``level(i)`` is cudaGetMipmappedArrayLevel: the level's own CudaArray (writes through it,
    or a SurfaceObject over it, are what later fetches see)."""

    def __init__(self, shape, dtype=np.float32, channels: int = 1, *, levels: int = 0,
                 layered: bool = False, cubemap: bool = False) -> None:
        base = CudaArray(shape, dtype, channels, layered=layered, cubemap=cubemap)
        most = max(base.extent).bit_length()          # floor(log2(largest extent)) + 1
        levels = int(levels) or most
        if not 1 <= levels <= most:
            raise LaunchError(f"MipmappedArray: {levels} levels for extent {list(base.extent)}; "
                              f"it has at most {most} (each level halves every extent, down to 1)")
        lead = base.shape[:1] if layered or cubemap else ()
        self.levels = [base]
        for i in range(1, levels):
            ext = tuple(max(1, e >> i) for e in base.extent)
            self.levels.append(CudaArray(lead + tuple(reversed(ext)), dtype, channels, layered=layered,
                                         cubemap=cubemap))
        self.shape, self.dtype, self.channels = base.shape, base.dtype, channels
        self.layered, self.cubemap = layered, cubemap

    @property
    def num_levels(self) -> int:
        return len(self.levels)

    def level(self, i: int) -> CudaArray:
        if not 0 <= int(i) < len(self.levels):
            raise LaunchError(f"MipmappedArray.level({i}): the array has levels 0..{len(self.levels) - 1}")
        return self.levels[int(i)]

    def __repr__(self) -> str:
        return f"MipmappedArray({self.levels[0]!r} x {len(self.levels)} levels)"


def as_resource(resource) -> CudaArray:
    """A texture's backing: a CudaArray, or a numpy array as linear (1D) or pitched (2D) memory;
    the numpy array's own bytes are the texels (a view: later writes to it are seen)."""
    if isinstance(resource, CudaArray):
        return resource
    if isinstance(resource, MipmappedArray):
        return resource.levels[0]
    if isinstance(resource, np.ndarray):
        if resource.ndim not in (1, 2) or resource.dtype not in ELEMENT_DTYPES:
            raise LaunchError(f"texture resource: a numpy array {resource.dtype}{list(resource.shape)}; "
                              "linear memory is 1D, pitched memory 2D, of a CUDA array element type "
                              "(for several channels use a ptxvm.CudaArray)")
        arr = CudaArray(resource.shape, resource.dtype, 1)
        arr.data = resource[..., None]       # the caller's bytes, not a copy
        arr.linear = resource.ndim == 1
        return arr
    raise LaunchError(f"texture resource: {type(resource).__name__}; pass a ptxvm.CudaArray, a "
                      "ptxvm.MipmappedArray or a numpy array (linear or pitched memory)")


def _modes(address_mode, ndim: int = 3) -> tuple[AddressMode, ...]:
    given = address_mode if isinstance(address_mode, (tuple, list)) else (address_mode,) * ndim
    out = []
    for m in given:
        if isinstance(m, AddressMode):
            out.append(m)
            continue
        try:
            out.append(AddressMode[str(m).upper()])
        except KeyError:
            raise LaunchError(f"address_mode {m!r}: use wrap, clamp, mirror or border") from None
    return tuple(out) + (out[-1],) * (3 - len(out))


def _enum(cls, value, what: str):
    if isinstance(value, cls):
        return value
    try:
        return cls[str(value).upper()]
    except KeyError:
        raise LaunchError(f"{what} {value!r}: use " + " or ".join(m.name.lower() for m in cls)) from None


_REGISTRY: dict[int, object] = {}
_NEXT = itertools.count(1)
_LOCK = threading.Lock()


def _register(obj, tag: int) -> int:
    with _LOCK:
        handle = (tag << 48) | next(_NEXT)
        _REGISTRY[handle] = obj
    return handle


@dataclass(eq=False)
class TextureObject:
    """cudaCreateTextureObject(resource, texture description); pass it as a kernel argument."""

    resource: object
    address_mode: object = "clamp"
    filter_mode: object = "point"
    read_mode: object = "element_type"
    normalized_coords: bool = False
    border_color: tuple = (0.0, 0.0, 0.0, 0.0)
    srgb: bool = False
    # Mipmap sampling (cudaTextureDesc's fields; used when the resource is a MipmappedArray).
    # max_mipmap_level_clamp=None means the last level (a zeroed cudaTextureDesc clamps at 0).
    mipmap_filter_mode: object = "point"
    mipmap_level_bias: float = 0.0
    min_mipmap_level_clamp: float = 0.0
    max_mipmap_level_clamp: float | None = None
    max_anisotropy: int = 0
    handle: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.array = as_resource(self.resource)
        self._mip_state()
        self.address = _modes(self.address_mode)
        self.filter = _enum(FilterMode, self.filter_mode, "filter_mode")
        self.read = _enum(ReadMode, self.read_mode, "read_mode")
        self.border = tuple(float(c) for c in self.border_color) + (0.0,) * (4 - len(self.border_color))
        dt = self.array.dtype
        if self.read is ReadMode.NORMALIZED_FLOAT and (dt.kind == "f" or dt.itemsize > 2):
            raise LaunchError(f"TextureObject: read_mode=normalized_float needs 8- or 16-bit integer "
                              f"texels; the resource holds {dt}")
        if self.filter is FilterMode.LINEAR and dt.kind != "f" and self.read is not ReadMode.NORMALIZED_FLOAT:
            raise LaunchError(f"TextureObject: filter_mode=linear needs textures that return floats; {dt} "
                              "texels with read_mode=element_type return integers")
        if self.srgb and not (dt == np.uint8 and self.read is ReadMode.NORMALIZED_FLOAT):
            raise LaunchError("TextureObject: srgb needs uint8 texels read as normalized_float")
        self.handle = _register(self, _TAG_TEX)

    def _mip_state(self) -> None:
        mip = self.resource if isinstance(self.resource, MipmappedArray) else None
        self.levels = mip.levels if mip is not None else [self.array]
        self.mip_filter = _enum(FilterMode, self.mipmap_filter_mode, "mipmap_filter_mode")
        top = float(len(self.levels) - 1)
        lo = np.float32(self.min_mipmap_level_clamp)
        hi = np.float32(top if self.max_mipmap_level_clamp is None else self.max_mipmap_level_clamp)
        self.lod_bias, self.lod_range = np.float32(self.mipmap_level_bias), (lo, hi)
        if int(self.max_anisotropy) > 1:
            # NVIDIA's anisotropic footprint is not documented: refused rather than ignored.
            raise LaunchError(f"TextureObject: max_anisotropy={self.max_anisotropy}; ptxvm filters "
                              "isotropically only (0 or 1)")
        if mip is None:
            return
        if not self.normalized_coords:
            raise LaunchError("TextureObject: a MipmappedArray is sampled with normalized_coords=True "
                              "(a texel coordinate names no texel across levels of different sizes)")
        dt = self.array.dtype
        returns_float = dt.kind == "f" or _enum(ReadMode, self.read_mode, "read_mode") is ReadMode.NORMALIZED_FLOAT
        if self.mip_filter is FilterMode.LINEAR and not returns_float:
            raise LaunchError(f"TextureObject: mipmap_filter_mode=linear needs textures that return floats; "
                              f"{dt} texels with read_mode=element_type return integers")

    def destroy(self) -> None:
        """cudaDestroyTextureObject: the handle stops being a texture object."""
        with _LOCK:
            _REGISTRY.pop(self.handle, None)


@dataclass(eq=False)
class SurfaceObject:
    """cudaCreateSurfaceObject(array): byte-addressed loads and stores of a CudaArray's texels."""

    array: CudaArray
    handle: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if not isinstance(self.array, CudaArray):
            raise LaunchError(f"SurfaceObject: {type(self.array).__name__}; a surface is made from a "
                              "ptxvm.CudaArray (a MipmappedArray's .level(i) for one level)")
        self.handle = _register(self, _TAG_SURF)

    def destroy(self) -> None:
        with _LOCK:
            _REGISTRY.pop(self.handle, None)


def lookup(handle: int, kind: type):
    """The live object of ``kind`` a handle names, or None."""
    obj = _REGISTRY.get(int(handle))
    return obj if isinstance(obj, kind) else None


__all__ = ["AddressMode", "FilterMode", "ReadMode", "CudaArray", "MipmappedArray", "TextureObject", "SurfaceObject",
           "as_resource", "lookup", "ELEMENT_DTYPES"]
