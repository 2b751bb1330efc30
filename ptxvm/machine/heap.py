"""The device heap behind `malloc`/`free` called from PTX (CUDA's device-side allocator).

Blocks come from the device's global allocator, so every access to them is bounds-checked and a
freed block faults on use like any freed allocation. The heap keeps what CUDA keeps: blocks live
until freed, across launches; the heap has a size limit (CUDA's default `cudaLimitMallocHeapSize`,
8 MiB) past which `malloc` returns NULL; `free(NULL)` does nothing. Freeing anything but a live
block's start address is a fault here (undefined behaviour in C, a heap corruption on the GPU).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from ..errors import ResourceError
from .memory import Allocation, DeviceMemory, MemoryFault

HEAP_LIMIT = 8 << 20          # bytes, CUDA's default device heap size


@dataclass
class Heap:
    live: dict[int, Allocation] = field(default_factory=dict)    # base address -> block
    freed: dict[int, Allocation] = field(default_factory=dict)   # freed blocks, for precise faults
    used: int = 0                                                 # bytes of live blocks
    count: int = 0                                                # blocks ever allocated (names)


# One heap per device memory, keyed by identity (DeviceMemory compares by value, so it is not
# hashable) and dropped with the memory.
_HEAPS: dict[int, Heap] = {}


def heap_of(memory: DeviceMemory) -> Heap:
    h = _HEAPS.get(id(memory))
    if h is None:
        h = _HEAPS[id(memory)] = Heap()
        weakref.finalize(memory, _HEAPS.pop, id(memory), None)
    return h


def malloc(memory: DeviceMemory, sizes: np.ndarray) -> np.ndarray:
    """One block per lane, in lane order; 0 (NULL) for size 0 or when the heap (or the device
    memory limit) is exhausted."""
    h = heap_of(memory)
    out = np.zeros(sizes.shape, dtype=np.uint64)
    for i, size in enumerate(int(s) for s in sizes):
        if size == 0 or h.used + size > HEAP_LIMIT:
            continue
        try:
            a = memory.alloc(size, f"malloc #{h.count + 1} ({size} bytes)")
        except ResourceError:
            continue           # device memory (ptxvm.limits) exhausted: NULL, as CUDA's malloc
        h.count += 1
        h.live[a.base] = a
        h.used += size
        out[i] = a.base
    return out


def free(memory: DeviceMemory, ptrs: np.ndarray, lanes: np.ndarray) -> None:
    """Free each lane's block in lane order; a pointer that is not a live block's start faults."""
    h = heap_of(memory)
    for lane, p in zip(lanes, (int(x) for x in ptrs)):
        if p == 0:
            continue
        a = h.live.pop(p, None)
        if a is None:
            if p in h.freed:
                why = f"double free of `{h.freed[p].name}` at 0x{p:x}"
            else:
                why = (f"free of 0x{p:x}, which is not the start of a block from malloc "
                       f"({memory.nearest(p)})")
            raise MemoryFault(why, int(lane), p, "global")
        memory.free(a)
        h.freed[p] = a
        h.used -= a.size
