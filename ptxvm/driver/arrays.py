"""Simulated devices and the arrays in their memory.

A ``DeviceArray`` belongs to one ``Device``; its memory is released by ``free()`` or when the
array (and every view of it) is garbage collected, as CuPy does. Launching with an array of
another device, or one already freed, is a ``LaunchError``; so is reading a freed array.

Threads: ``to_device``, ``free`` and launches may be called from several Python threads.
Allocation is atomic (``DeviceMemory``'s lock); launches run one at a time, process-wide
(``LAUNCH_LOCK``), so two launches never interleave their writes or their executors' state.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

import numpy as np

from ..errors import LaunchError
from ..machine.addressmap import function_addresses
from ..machine.image import ModuleImage, place_globals
from ..machine.memory import Allocation, DeviceMemory

if TYPE_CHECKING:
    from .api import Module

# Held for the whole of every launch (reentrant: a launch's own callbacks may allocate).
LAUNCH_LOCK = threading.RLock()
_DEVICE_LOCK = threading.Lock()


class Device:
    """One simulated device: its memory and the modules placed in it."""

    def __init__(self) -> None:
        self.memory = DeviceMemory()
        # Keyed by the Module itself, weakly: keyed by id(), a new Module that got a dead one's
        # id was handed the dead module's globals (found reading a `.global` initialiser).
        self.images: weakref.WeakKeyDictionary[Module, ModuleImage] = weakref.WeakKeyDictionary()

    def image(self, module: "Module") -> ModuleImage:
        with LAUNCH_LOCK:
            img = self.images.get(module)
            if img is None:
                funcs = function_addresses(module.ir.functions)
                img = self.images[module] = place_globals(module.ir, self.memory, funcs)
            return img


_DEVICE: Device | None = None


def default_device() -> Device:
    """The device launches run on (one per process, made on first use)."""
    global _DEVICE
    if _DEVICE is None:
        with _DEVICE_LOCK:          # two threads must not each make "the" default device
            if _DEVICE is None:
                _DEVICE = Device()
    return _DEVICE


class DeviceArray:
    """An N-D array in device memory, like CuPy's ``ndarray`` and numba's ``DeviceNDArray``.

    ``ptr`` is the device address of element ``[0, ..., 0]``; ``strides`` are in bytes (C order
    unless it is a view). Basic indexing (ints, slices with steps, ``None``, ``...``),
    ``reshape``, ``T``/``transpose`` give views that share the memory; element writes from the
    host go through ``d[...] = value``. ``__cuda_array_interface__`` (version 3) describes it
    with ptxvm's device addresses; DLPack export (``np.from_dlpack(d)``) is a zero-copy numpy
    view, since ptxvm's device memory is this process's memory (device type kDLCPU).
    """

    def __init__(self, alloc: Allocation, shape: tuple[int, ...], dtype: np.dtype, offset: int = 0,
                 device: Device | None = None, owner: "DeviceArray | None" = None,
                 strides: tuple[int, ...] | None = None) -> None:
        self._alloc, self.shape, self.dtype, self._offset = alloc, tuple(int(n) for n in shape), np.dtype(dtype), offset
        self.strides = tuple(strides) if strides is not None else _c_strides(self.shape, self.dtype.itemsize)
        self.device = device or default_device()
        self._owner = owner           # a view keeps the array that owns the memory alive

    # ------------------------------------------------------------------ properties
    @property
    def ptr(self) -> int:
        return self._alloc.base + self._offset

    def data_ptr(self) -> int:
        """``ptr`` under PyTorch's name (what Triton's launcher asks a tensor for)."""
        return self.ptr

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def freed(self) -> bool:
        return self._alloc.freed

    @property
    def is_c_contiguous(self) -> bool:
        # Strides of length-1 axes do not matter (numpy's rule too).
        c = _c_strides(self.shape, self.itemsize)
        return self.size <= 1 or all(st == cs for n, st, cs in zip(self.shape, self.strides, c) if n > 1)

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "strides": None if self.is_c_contiguous else self.strides, "version": 3}

    def free(self) -> None:
        """Release the memory now (every view of it too); later use is a LaunchError."""
        self.device.memory.free(self._alloc)

    def check_live(self, what: str) -> None:
        if self._alloc.freed:
            raise LaunchError(f"{what}: the DeviceArray at 0x{self.ptr:x} ({self.dtype}{list(self.shape)}) "
                              "was freed; allocate a new one with ptxvm.to_device")

    # ------------------------------------------------------------------ host views and copies
    def _view(self, what: str) -> np.ndarray:
        """A numpy view of the device bytes (shares them: writes go to device memory)."""
        self.check_live(what)
        return np.ndarray(self.shape, self.dtype, buffer=self._alloc.data, offset=self._offset, strides=self.strides)

    def _from_view(self, v: np.ndarray, what: str) -> "DeviceArray":
        data = self._alloc.data
        base = data.__array_interface__["data"][0]
        if not (isinstance(v, np.ndarray) and np.may_share_memory(v, data)):
            raise TypeError(f"{what} would copy the data (numpy made a new array); DeviceArray views "
                            "must share memory: copy_to_host() first, or index with ints and slices")
        off = v.__array_interface__["data"][0] - base
        return DeviceArray(self._alloc, v.shape, v.dtype, off, self.device, self._owner or self, v.strides)

    def copy_to_host(self, out: np.ndarray | None = None, stream=None) -> np.ndarray:
        """A host copy (C order), or the data written into ``out`` (same shape and dtype)."""
        v = self._view("copy_to_host")
        if out is None:
            return v.copy(order="K")                       # a Fortran-ordered array stays one
        if not isinstance(out, np.ndarray) or out.shape != self.shape or out.dtype != self.dtype:
            got = f"{out.dtype}{list(out.shape)}" if isinstance(out, np.ndarray) else type(out).__name__
            raise LaunchError(f"copy_to_host(out=): out must be a {self.dtype}{list(self.shape)} numpy array, got {got}")
        np.copyto(out, v)
        return out

    get = copy_to_host                                     # CuPy's name

    def copy_from_host(self, array, stream=None) -> None:
        a = np.asarray(array)
        v = self._view("copy_from_host")
        if a.shape != self.shape:
            if a.size * a.dtype.itemsize != self.nbytes or not self.is_c_contiguous:
                raise LaunchError(f"copy_from_host: a {a.dtype}{list(a.shape)} array ({a.nbytes} bytes) into a "
                                  f"{self.dtype}{list(self.shape)} device array ({self.nbytes} bytes)")
            a = np.ascontiguousarray(a, dtype=self.dtype).reshape(self.shape)
        np.copyto(v, a.astype(self.dtype, copy=False))

    set = copy_from_host                                   # CuPy's name

    def copy_to_device(self, src, stream=None) -> None:
        """Copy ``src`` (a DeviceArray of the same shape, or a host array) into this array,
        as numba's ``DeviceNDArray.copy_to_device``; overlapping source and destination are
        copied as if through a temporary."""
        if isinstance(src, DeviceArray):
            if src.shape != self.shape:
                raise LaunchError(f"copy_to_device: source {src.dtype}{list(src.shape)} and destination "
                                  f"{self.dtype}{list(self.shape)} differ in shape")
            np.copyto(self._view("copy_to_device"), src._view("copy_to_device").astype(self.dtype, copy=False))
        else:
            self.copy_from_host(src)

    def copy(self) -> "DeviceArray":
        """A new device array holding a copy (C order)."""
        return to_device(self._view("copy"), self.device)

    def fill(self, value) -> None:
        self._view("fill")[...] = value

    def memset(self, byte: int) -> None:
        """Every byte of the array set to ``byte`` (``cudaMemset``); a contiguous array only."""
        if not 0 <= int(byte) <= 255:
            raise LaunchError(f"memset: the value is one byte (0..255), got {byte}")
        if not self.is_c_contiguous:
            raise LaunchError("memset: the array is a strided view; memset needs contiguous memory (use fill)")
        self.check_live("memset")
        self._alloc.data[self._offset:self._offset + self.nbytes] = int(byte)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        a = self.copy_to_host()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        v = self._view("__dlpack__")
        return v.__dlpack__() if max_version is None else v.__dlpack__(max_version=max_version)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)                                      # kDLCPU: the memory is this process's

    # ------------------------------------------------------------------ views
    def __getitem__(self, key):
        v = self._view("indexing")[key]
        if not isinstance(v, np.ndarray):
            return v.copy() if hasattr(v, "copy") else v   # one element: a host scalar
        return self._from_view(v, f"indexing with {key!r}")

    def __setitem__(self, key, value) -> None:
        self._view("item assignment")[key] = value.copy_to_host() if isinstance(value, DeviceArray) else value

    def reshape(self, *shape) -> "DeviceArray":
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return self._from_view(self._view("reshape").reshape(shape), f"reshape{tuple(shape)}")

    def ravel(self) -> "DeviceArray":
        return self._from_view(self._view("ravel").ravel(), "ravel() of a strided view")

    def transpose(self, *axes) -> "DeviceArray":
        return self._from_view(self._view("transpose").transpose(*axes), "transpose")

    @property
    def T(self) -> "DeviceArray":
        return self.transpose()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self) -> str:
        gone = ", freed" if self._alloc.freed else ""
        view = "" if self.is_c_contiguous else f", strides={self.strides}"
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x}{view}{gone})"


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    out, step = [], itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def host_array_problem(a: np.ndarray) -> str | None:
    """Why a numpy array cannot be device memory, or None."""
    if a.ndim == 0:
        return ("is a 0-d numpy array; pass an array of 1 or more dimensions for a pointer, "
                "or a scalar (a.item(), np.float32(x)) for a value")
    if a.dtype.hasobject:
        return (f"is a numpy array of dtype {a.dtype}, which holds Python objects; pass an array "
                "of a numeric dtype (e.g. float32, int32, uint8)")
    return None


def to_device(array, device: Device | None = None) -> DeviceArray:
    """A copy of ``array`` in device memory (freed with the returned array); a Fortran-ordered
    array keeps its layout (its strides), anything else is copied in C order."""
    a = np.asarray(array)
    fortran = a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous
    a = a if fortran else np.ascontiguousarray(a)
    problem = host_array_problem(a)
    if problem:
        raise LaunchError(f"to_device: the array {problem}")
    dev = device or default_device()
    alloc = dev.memory.alloc(a.nbytes, f"device array {a.dtype}{list(a.shape)}", data=a.T if fortran else a)
    d = DeviceArray(alloc, a.shape, a.dtype, device=dev, strides=a.strides if fortran else None)
    weakref.finalize(d, dev.memory.free, alloc)
    return d


def empty(shape, dtype=np.float64, device: Device | None = None) -> DeviceArray:
    """An uninitialised device array (ptxvm's memory is zeroed: reading it gives zeros, as
    ``cudaMalloc``'s memory may hold anything, so do not rely on it)."""
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise LaunchError(f"empty/zeros: negative dimension in shape {shape}")
    dt = np.dtype(dtype)
    if dt.hasobject:
        raise LaunchError(f"empty/zeros: dtype {dt} holds Python objects; use a numeric dtype")
    dev = device or default_device()
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    alloc = dev.memory.alloc(nbytes, f"device array {dt}{list(shape)}")
    d = DeviceArray(alloc, shape, dt, device=dev)
    weakref.finalize(d, dev.memory.free, alloc)
    return d


def zeros(shape, dtype=np.float64, device: Device | None = None) -> DeviceArray:
    d = empty(shape, dtype, device)
    d.memset(0)
    return d


def memset(array: DeviceArray, byte: int) -> None:
    """``cudaMemset``: every byte of ``array`` set to ``byte``."""
    if not isinstance(array, DeviceArray):
        raise LaunchError(f"memset takes a DeviceArray, got {type(array).__name__}")
    array.memset(byte)


def from_dlpack(x, device: Device | None = None) -> DeviceArray:
    """A DeviceArray over a DLPack tensor's memory (a CPU tensor: numpy, PyTorch, JAX on the
    CPU), without a copy when it is contiguous and writable, so kernel writes show in ``x``;
    otherwise a copy."""
    try:
        a = np.from_dlpack(x)
    except (AttributeError, TypeError, RuntimeError, BufferError) as exc:
        raise LaunchError(f"from_dlpack: {type(x).__name__} does not export a CPU DLPack tensor ({exc})") from None
    dev = device or default_device()
    if not (a.flags.c_contiguous and a.flags.writeable) or a.nbytes == 0 or host_array_problem(a):
        return to_device(a, dev)
    alloc = dev.memory.alloc(a.nbytes, f"device array {a.dtype}{list(a.shape)} (DLPack)",
                             share=a.reshape(-1).view(np.uint8))
    d = DeviceArray(alloc, a.shape, a.dtype, device=dev)
    d._keep = a                     # the exporter's memory lives as long as the array
    weakref.finalize(d, dev.memory.free, alloc)
    return d
