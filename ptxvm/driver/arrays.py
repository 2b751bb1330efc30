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
    """An array in device memory; ``ptr`` is its device address, slicing gives views."""

    def __init__(self, alloc: Allocation, shape: tuple[int, ...], dtype: np.dtype, offset: int = 0,
                 device: Device | None = None, owner: "DeviceArray | None" = None) -> None:
        self._alloc, self.shape, self.dtype, self._offset = alloc, tuple(shape), np.dtype(dtype), offset
        self.device = device or default_device()
        self._owner = owner           # a view keeps the array that owns the memory alive

    @property
    def ptr(self) -> int:
        return self._alloc.base + self._offset

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def freed(self) -> bool:
        return self._alloc.freed

    def free(self) -> None:
        """Release the memory now (every view of it too); later use is a LaunchError."""
        self.device.memory.free(self._alloc)

    def check_live(self, what: str) -> None:
        if self._alloc.freed:
            raise LaunchError(f"{what}: the DeviceArray at 0x{self.ptr:x} ({self.dtype}{list(self.shape)}) "
                              "was freed; allocate a new one with ptxvm.to_device")

    def copy_to_host(self) -> np.ndarray:
        self.check_live("copy_to_host")
        raw = self._alloc.data[self._offset:self._offset + self.nbytes]
        return raw.view(self.dtype).reshape(self.shape).copy()

    def copy_from_host(self, array) -> None:
        self.check_live("copy_from_host")
        a = np.ascontiguousarray(array, dtype=self.dtype)
        if a.nbytes != self.nbytes:
            raise LaunchError(f"copy_from_host: {a.nbytes} bytes into a {self.nbytes}-byte device array")
        self._alloc.data[self._offset:self._offset + self.nbytes] = a.reshape(-1).view(np.uint8)

    def __getitem__(self, key) -> "DeviceArray":
        if len(self.shape) != 1 or not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("DeviceArray supports contiguous 1-D slices like d[k:] or d[a:b]")
        start, stop, _ = key.indices(self.shape[0])
        stop = max(stop, start)
        return DeviceArray(self._alloc, (stop - start,), self.dtype, self._offset + start * self.dtype.itemsize,
                           self.device, self._owner or self)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        gone = ", freed" if self._alloc.freed else ""
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x}{gone})"


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
    """A copy of ``array`` in device memory (freed with the returned array)."""
    a = np.ascontiguousarray(array)
    problem = host_array_problem(a)
    if problem:
        raise LaunchError(f"to_device: the array {problem}")
    dev = device or default_device()
    alloc = dev.memory.alloc(a.nbytes, f"device array {a.dtype}{list(a.shape)}", data=a)
    d = DeviceArray(alloc, a.shape, a.dtype, device=dev)
    weakref.finalize(d, dev.memory.free, alloc)
    return d
