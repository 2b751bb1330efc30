"""Texture and surface instructions as pure functions over lane arrays, shared by every executor
that runs them on the host (PTX ISA 9.0 §9.7.10 tex, tld4, txq; §9.7.11 suld, sust, sured, suq).

An executor parses an instruction once (``plan``), reads its operands however it holds
registers (the interpreter: numpy readers over a batch; the host JIT: one thread's values
passed through a callback), and calls ``tex``/``tld4``/``txq``/``suld``/``sust``/``sured``/``suq``
with them. Sharing these functions is what makes the executors agree bit for bit, errors included:
a fetch the model refuses raises ``TextureError`` naming the position of the lane in the arrays,
which the executor turns into its KernelFault for that thread.
"""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Callable, Iterator

import numpy as np

from ..ir.texture import Plan, plan, unsupported
from ..ir.types import ScalarType
from ..resources import data_dir
from . import texfetch
from .textures import CudaArray, SurfaceObject, TextureObject, lookup

F32 = np.float32
UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
RED_TYPES = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64,
             "b64": np.uint64}


class TextureError(Exception):
    """A fetch or access the model refuses, for the lane at position ``index`` of the arrays."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index, self.message = index, message


# ---------------------------------------------------------------------------- objects

def argument_of(params: np.ndarray, offsets: dict[str, int], handle: int) -> str:
    """' in argument i (`name`)' for the kernel parameter that holds ``handle``, else ''."""
    for i, (name, off) in enumerate(offsets.items()):
        raw = params[off:off + 8]
        if raw.size == 8 and int(raw.view(np.uint64)[0]) == handle:
            return f" in argument {i} (`{name}`)"
    return ""


def reference_handle(textures, name: str) -> int:
    """The handle of the object bound to reference ``name`` (``textures``: the launch's bindings)."""
    obj = dict(textures).get(name)
    if obj is None:
        raise TextureError(0, f"texture/surface reference `{name}` is not bound "
                              "(Module.bind_texture(name, ...) before the launch)")
    return obj.handle


def objects(handles: np.ndarray, kind: type, where: Callable[[int], str]) -> Iterator[tuple[object, np.ndarray]]:
    """(object, lane mask) per distinct handle; a handle that is no live ``kind`` is an error
    (``where(handle)`` names the launch argument that carried it, when one did)."""
    what = "texture" if kind is TextureObject else "surface"
    for h in np.unique(handles):
        sel = handles == h
        obj = lookup(int(h), kind)
        if obj is None:
            raise TextureError(_first(sel), f"{what} handle 0x{int(h):x}{where(int(h))} is not a {what} object")
        yield obj, sel


def _first(sel: np.ndarray) -> int:
    return int(np.nonzero(sel)[0][0])


# ---------------------------------------------------------------------------- fetches

def _check_format(tex: TextureObject, p: Plan, k: int) -> None:
    returns_float = tex.array.dtype.kind == "f" or tex.read.name == "NORMALIZED_FLOAT"
    if returns_float != (p.dtype.kind == "f"):
        got = "float" if returns_float else "integer"
        raise TextureError(k, f"`{p.full_opcode}` returns .{p.dtype.value} but {tex.array!r} read with "
                              f"read_mode={tex.read.name.lower()} gives {got} texels")


def _layers(arr: CudaArray, layer: np.ndarray | None, sel: np.ndarray, p: Plan) -> np.ndarray:
    count = arr.layers if (arr.layered or arr.cubemap) else 0
    if layer is None:
        return np.zeros(int(sel.sum()), dtype=np.int64)
    lay = layer[sel].view(np.uint32).astype(np.int64)
    bad = lay >= max(count, 1) if (arr.layered or arr.cubemap) else lay != 0
    if bad.any():
        k = int(np.nonzero(bad)[0][0])
        raise TextureError(int(np.nonzero(sel)[0][k]), f"`{p.full_opcode}` reads layer {int(lay[k])} of {arr!r}, "
                                                       f"which has {count} layer(s)")
    return lay


def _linear_fetch(tex: TextureObject, idx: np.ndarray, integer: bool, k: int, p: Plan) -> np.ndarray:
    if not integer:
        raise TextureError(k, f"`{p.full_opcode}` samples linear memory with float coordinates; "
                              "linear memory is fetched by integer index (tex1Dfetch)")
    # Linear memory has no addressing: an index out of range returns zeros (programming guide).
    data = tex.array.data[:, 0] if tex.array.data.ndim == 2 else tex.array.data.reshape(-1)
    n = data.shape[0]
    i = idx.astype(np.int64)
    inside = (i >= 0) & (i < n)
    vals = texfetch.convert(data[np.clip(i, 0, n - 1)][:, None], tex.array.dtype, tex.read, tex.srgb)
    vals = np.where(inside[:, None], vals, np.zeros_like(vals))
    out = np.zeros((i.shape[0], 4), dtype=vals.dtype)
    out[:, :1] = vals
    return out


def _fetch_lanes(tex: TextureObject, p: Plan, spatial, layer, k: int, lod=None) -> np.ndarray:
    """The lanes' fetch; ``lod`` (float32 per lane, or None: level 0 + bias) picks mip levels."""
    if len(tex.levels) == 1:
        return _fetch_level(texfetch.Sampler.of(tex), p, spatial, layer, k)
    if lod is None:
        lod = np.zeros(layer.shape, dtype=F32)
    d1, d2, frac = texfetch.mip_levels(tex, lod)
    if frac is None:
        return _by_level(tex, p, spatial, layer, k, d1)
    lo = _by_level(tex, p, spatial, layer, k, d1)
    hi = _by_level(tex, p, spatial, layer, k, d2)
    w = frac[:, None]
    return ((F32(1) - w).astype(F32) * lo + (w * hi).astype(F32)).astype(F32)


def _by_level(tex: TextureObject, p: Plan, spatial, layer, k: int, level: np.ndarray) -> np.ndarray:
    out = None
    for lv in np.unique(level):
        sel = level == lv
        got = _fetch_level(texfetch.Sampler.of(tex, int(lv)), p, [c[sel] for c in spatial], layer[sel], k)
        if out is None:
            out = np.zeros((level.size, 4), dtype=got.dtype)
        out[sel] = got
    return out


def _fetch_level(tex: texfetch.Sampler, p: Plan, spatial, layer, k: int) -> np.ndarray:
    arr = tex.array
    if p.geom in ("cube", "acube"):
        if not arr.cubemap:
            raise TextureError(k, f"`{p.full_opcode}` samples {arr!r}, which is not a cubemap")
        face, s, t = texfetch.cube_face(*[v.view(F32) for v in spatial])
        return texfetch.sample(tex.faces(), [s, t], layer * 6 + face, False)
    if arr.cubemap or len(arr.extent) != len(spatial):
        raise TextureError(k, f"`{p.full_opcode}` ({p.geom}) reads {arr!r}, an array of another geometry")
    coords = [v.view(np.int32) if p.integer else v.view(F32) for v in spatial]
    if arr.linear:
        return _linear_fetch(tex, coords[0], p.integer, k, p)
    return texfetch.sample(tex, coords, layer, p.integer)


def _raw(values: np.ndarray, dtype: ScalarType) -> np.ndarray:
    if dtype.kind == "f":
        return values.astype(F32).view(np.uint32)
    return (values.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)


def _u32(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint32) if a.dtype.itemsize == 4 else a.astype(np.uint32)


def _lod(tex: TextureObject, p: Plan, lod, sel: np.ndarray) -> np.ndarray | None:
    """tex.level: the operand; tex.grad: from the gradients (dPdx then dPdy, ``axes`` each);
    plain tex: None (level 0 + the bias). Only a mip chain looks at it."""
    if len(tex.levels) == 1 or not lod:
        return None
    vals = [_u32(v)[sel].view(F32) for v in lod]
    if p.lod == "level":
        return vals[0]
    sizes = tex.levels[0].extent
    return texfetch.lod_from_gradients(vals[:p.axes], vals[p.axes:2 * p.axes], sizes)


def tex(p: Plan, handles: np.ndarray, layer, coords, where, lod=()) -> np.ndarray:
    """tex: (lanes, 4) uint32, the four components' bits. ``lod``: the .level operand or the
    .grad vectors' elements (float32 bits per lane); a texture of one level ignores them."""
    coords = [_u32(c) for c in coords]
    result = np.zeros((handles.size, 4), dtype=np.int64 if p.dtype.kind != "f" else F32)
    for obj, sel in objects(handles, TextureObject, where):
        k = _first(sel)
        _check_format(obj, p, k)
        lay = _layers(obj.array, None if layer is None else _u32(layer), sel, p)
        result[sel] = _fetch_lanes(obj, p, [c[sel] for c in coords], lay, k, _lod(obj, p, lod, sel))
    return _raw(result, p.dtype)


def tld4(p: Plan, handles: np.ndarray, layer, coords, where) -> np.ndarray:
    """tld4: (lanes, 4) uint32, one component of the bilinear footprint's four texels."""
    coords = [_u32(c) for c in coords]
    result = np.zeros((handles.size, 4), dtype=np.int64 if p.dtype.kind != "f" else F32)
    for obj, sel in objects(handles, TextureObject, where):
        k = _first(sel)
        _check_format(obj, p, k)
        cube = p.geom in ("cube", "acube")
        if obj.array.cubemap != cube or obj.array.linear or len(obj.array.extent) != 2:
            raise TextureError(k, f"`{p.full_opcode}` gathers from {obj.array!r}, not a "
                                  f"{'cubemap' if cube else '2D array'}")
        lay = _layers(obj.array, None if layer is None else _u32(layer), sel, p)
        xyz = [c[sel].view(F32) for c in coords]
        if cube:
            # the footprint on the face the direction selects, clamped at the face's edges
            face, s, t = texfetch.cube_face(*xyz)
            samp = texfetch.Sampler.of(obj).faces()
            result[sel] = texfetch.gather4(samp, [s, t], lay * 6 + face, p.component)
        else:
            result[sel] = texfetch.gather4(obj, xyz, lay, p.component)
    return _raw(result, p.dtype)


@cache
def _codes() -> dict:
    return tomllib.loads((data_dir("isa") / "texture_queries.toml").read_text(encoding="utf-8"))


def array_query(arr: CudaArray, q: str, tex: TextureObject | None = None) -> int:
    """txq/suq of an array (and a texture object's sampler state): extents (0 for an axis the
    array lacks, as cudaArrayGetInfo's extent has it), the layer count, formats as
    isa/texture_queries.toml encodes them."""
    codes = _codes()
    if q == "array_size":
        return arr.layers
    if q == "channel_data_type":
        norm = tex is not None and tex.read.name == "NORMALIZED_FLOAT"
        return codes["channel_data_type"][f"{arr.dtype}{'+norm' if norm else ''}"]
    if q == "channel_order":
        srgb = tex is not None and tex.srgb
        return codes["channel_order"][f"{arr.channels}{'+srgb' if srgb else ''}"]
    if q == "memory_layout":
        return codes["memory_layout"]["linear" if arr.linear else "array"]
    ext = tuple(arr.extent) + (0, 0)
    return int(ext[("width", "height", "depth").index(q)])


def texture_query(tex: TextureObject, q: str) -> int:
    """txq of a texture object: the sampler state in CUDA's enums (cudaTextureAddressMode,
    cudaTextureFilterMode), the mip level count (1 without a mipmapped array), one sample."""
    if q == "normalized_coords":
        return int(bool(tex.normalized_coords))
    if q == "force_unnormalized_coords":
        return int(not tex.normalized_coords)
    if q == "filter_mode":
        return tex.filter.value
    if q.startswith("addr_mode_"):
        return tex.address[int(q[-1])].value
    if q == "num_mipmap_levels":
        return len(tex.levels)
    if q == "num_samples":
        return 1
    return array_query(tex.array, q, tex)


def query(p: Plan, handles: np.ndarray, where, level=None) -> np.ndarray:
    """txq / suq: (lanes,) uint32; txq.level: the extent of mip level ``level`` (per lane)."""
    kind = TextureObject if p.op == "txq" else SurfaceObject
    out = np.zeros(handles.size, dtype=np.uint32)
    for obj, sel in objects(handles, kind, where):
        if p.op == "suq":
            out[sel] = array_query(obj.array, p.query)
        elif level is None:
            out[sel] = texture_query(obj, p.query)
        else:
            lv = _u32(level)[sel].astype(np.int64)
            for v in np.unique(lv):
                if v >= len(obj.levels):
                    k = int(np.nonzero(sel)[0][int(np.nonzero(lv == v)[0][0])])
                    raise TextureError(k, f"`{p.full_opcode}` queries level {int(v)} of {obj.resource!r}, "
                                          f"which has {len(obj.levels)} level(s)")
                out[np.nonzero(sel)[0][lv == v]] = array_query(obj.levels[int(v)], p.query)
    return out


__all__ = ["Plan", "TextureError", "plan", "tex", "tld4", "query", "array_query", "texture_query", "argument_of",
           "reference_handle", "objects", "unsupported", "UINT", "RED_TYPES"]
