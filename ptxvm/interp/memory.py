"""Device memory of the interpreter: one flat 64-bit generic address space.

Layout (generic addresses):

* ``[0, NULL_LIMIT)``: never mapped, so null and small pointers fault.
* ``SHARED_BASE + offset``: the executing thread's own CTA's shared memory
  (a `.shared` state-space address is the bare offset, as on NVIDIA GPUs).
* ``LOCAL_BASE + offset``: the executing thread's own local memory.
* ``GLOBAL_BASE`` upwards: global allocations (user buffers, module `.global`
  and `.const` variables), each followed by a guard gap, so a run off the end
  of one buffer faults instead of reading its neighbour. Global and const
  state-space addresses equal their generic addresses (cvta is the identity).

Every access is checked against this map: bounds, allocation, alignment.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

NULL_LIMIT = 0x1_0000
SHARED_BASE = 0x1_0000_0000
SHARED_LIMIT = 0x2_0000_0000
LOCAL_BASE = 0x2_0000_0000
LOCAL_LIMIT = 0x3_0000_0000
GLOBAL_BASE = 0x7_0000_0000
GUARD_BYTES = 256
ALIGN = 256


@dataclass
class Allocation:
    base: int
    size: int
    data: np.ndarray            # uint8, padded to a multiple of 16 bytes
    name: str
    space: str = "global"       # "global" or "const"
    freed: bool = False

    @property
    def end(self) -> int:
        return self.base + self.size

    def view(self, dtype: np.dtype) -> np.ndarray:
        # A shared host array need not be a multiple of 16 bytes long: view the whole elements
        # (every access is checked against ``size`` and aligned, so it lies within them).
        d = self.data
        k = np.dtype(dtype).itemsize
        return (d[:d.size - d.size % k] if d.size % k else d).view(dtype)


class MemoryFault(Exception):
    """Raised by the memory layer; the executor turns it into a KernelFault with context."""

    def __init__(self, message: str, lane: int, address: int, space: str, allocation: str | None = None):
        super().__init__(message)
        self.message, self.lane, self.address, self.space, self.allocation = message, lane, address, space, allocation


@dataclass
class DeviceMemory:
    """Global allocations of one device (shared across launches)."""

    allocations: list[Allocation] = field(default_factory=list)   # sorted by base
    _bases: list[int] = field(default_factory=list)
    _next: int = GLOBAL_BASE
    # Opt-in write attribution (differential testing); the store paths check it once per step.
    writes: "WriteTracker | None" = None

    def alloc(self, size: int, name: str, *, space: str = "global", data: bytes | np.ndarray | None = None,
              share: np.ndarray | None = None) -> Allocation:
        """A new allocation of ``size`` bytes: zeros, a copy of ``data``, or ``share`` itself (uint8,
        at least ``size`` bytes, used in place: the interpreter's view of a host array)."""
        size = max(int(size), 1)
        padded = (size + 15) // 16 * 16
        if share is not None:
            assert share.dtype == np.uint8 and share.size >= size
            buf = share
        elif data is None:
            buf = np.zeros(padded, dtype=np.uint8)
        else:
            raw = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) \
                else data.reshape(-1).view(np.uint8)
            buf = np.empty(padded, dtype=np.uint8)      # one pass: copy, then zero the rest
            buf[:raw.size] = raw
            buf[raw.size:] = 0
        a = Allocation(self._next, size, buf, name, space)
        self._next += (size + GUARD_BYTES + ALIGN - 1) // ALIGN * ALIGN
        self.allocations.append(a)
        self._bases.append(a.base)
        return a

    def free(self, a: Allocation) -> None:
        a.freed = True

    def find(self, address: int) -> Allocation | None:
        i = bisect.bisect_right(self._bases, address) - 1
        if i >= 0 and not self.allocations[i].freed and address < self.allocations[i].end:
            return self.allocations[i]
        return None

    def nearest(self, address: int) -> str:
        """A human description of the allocation nearest to ``address``."""
        if not self.allocations:
            return "no allocations exist"
        i = bisect.bisect_right(self._bases, address) - 1
        best = []
        for j in (i, i + 1):
            if 0 <= j < len(self.allocations):
                a = self.allocations[j]
                where = f"`{a.name}` [0x{a.base:x}, 0x{a.end:x})"
                if address >= a.end:
                    k = address - a.end
                    best.append((k, f"just past the end of {where}" if k == 0 else
                                 f"{k} byte{'s' * (k != 1)} after the end of {where}"))
                elif address < a.base:
                    k = a.base - address
                    best.append((k, f"{k} byte{'s' * (k != 1)} before {where}"))
                else:
                    best.append((0, f"inside `{a.name}` [0x{a.base:x}, 0x{a.end:x})"
                                 + (" which was freed" if a.freed else "")))
        return min(best)[1]

    # --------------------------------------------------------------- vector access
    def _single(self, addr: np.ndarray, nbytes: int, space: str) -> Allocation | None:
        """The one allocation holding every address, when there is one (the common case)."""
        if addr.size == 0:
            return None
        lo, hi = int(addr.min()), int(addr.max())
        a = self.find(lo)
        if a is not None and hi + nbytes <= a.end and (space != "const" or a.space == "const"):
            return a
        return None

    def _locate(self, addr: np.ndarray, nbytes: int, space: str) -> tuple[np.ndarray, list]:
        """Allocation index per lane (checked); returns (index array, allocation list)."""
        bases = np.asarray(self._bases, dtype=np.uint64)
        idx = np.searchsorted(bases, addr, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        ends = np.asarray([a.end if not a.freed else a.base for a in self.allocations], dtype=np.uint64)
        ok &= (addr + np.uint64(nbytes)) <= ends[safe]
        if space == "const":
            ok &= np.asarray([a.space == "const" for a in self.allocations])[safe]
        if not ok.all():
            lane = int(np.argmin(ok))
            a = int(addr[lane])
            raise MemoryFault(f"out-of-bounds {space} access of {nbytes} bytes at 0x{a:x} "
                              f"({self.nearest(a)})", lane, a, space)
        return safe, self.allocations

    def load(self, addr: np.ndarray, dtype: np.dtype, space: str = "global") -> np.ndarray:
        dtype = np.dtype(dtype)
        n = dtype.itemsize
        a = self._single(addr, n, space)
        if a is not None:
            return a.view(dtype)[((addr - np.uint64(a.base)) >> np.uint64(n.bit_length() - 1)).astype(np.intp)]
        idx, allocs = self._locate(addr, n, space)
        out = np.empty(addr.shape, dtype=dtype)
        for k in np.unique(idx):
            sel = idx == k
            a = allocs[int(k)]
            out[sel] = a.view(dtype)[((addr[sel] - np.uint64(a.base)) // np.uint64(n)).astype(np.int64)]
        return out

    def store(self, addr: np.ndarray, values: np.ndarray, space: str = "global") -> None:
        n = values.dtype.itemsize
        if space == "const":
            raise MemoryFault("store to the read-only .const state space", 0, int(addr[0]), space)
        a = self._single(addr, n, space)
        if a is not None:
            a.view(values.dtype)[((addr - np.uint64(a.base)) >> np.uint64(n.bit_length() - 1)).astype(np.intp)] = values
            return
        idx, allocs = self._locate(addr, n, space)
        for k in np.unique(idx):
            sel = idx == k
            a = allocs[int(k)]
            a.view(values.dtype)[((addr[sel] - np.uint64(a.base)) // np.uint64(n)).astype(np.int64)] = values[sel]

    def element_index(self, addr: np.ndarray, nbytes: int, space: str = "global"
                      ) -> list[tuple[np.ndarray, Allocation, np.ndarray]]:
        """(lane selector, allocation, element index) groups for read-modify-write (atomics)."""
        idx, allocs = self._locate(addr, nbytes, space)
        out = []
        for k in np.unique(idx):
            sel = np.nonzero(idx == k)[0]
            a = allocs[int(k)]
            out.append((sel, a, ((addr[sel] - np.uint64(a.base)) // np.uint64(nbytes)).astype(np.int64)))
        return out


class WriteTracker:
    """Who wrote what: per byte of chosen allocations, the global linear thread id
    (CTA-major, x fastest) of the last thread that stored to it; -1 = never written.

    Installed as ``DeviceMemory.writes`` for one launch; ``st``, ``atom`` and ``red``
    report their global and generic accesses through ``record``.
    """

    def __init__(self, allocations: list[Allocation]) -> None:
        self.owners: dict[int, tuple[Allocation, np.ndarray]] = {
            a.base: (a, np.full(a.size, -1, dtype=np.int64)) for a in allocations}

    def owner(self, a: Allocation) -> np.ndarray:
        return self.owners[a.base][1]

    def record(self, addr: np.ndarray, nbytes: int, tids: np.ndarray) -> None:
        """Lanes in ``addr``/``tids`` order: where two lanes hit one byte the later one wins,
        as it does in the store itself (numpy assignment keeps the last duplicate). The
        store has already checked bounds, so an access that starts in an allocation ends there."""
        for a, owner in self.owners.values():
            sel = (addr >= np.uint64(a.base)) & (addr < np.uint64(a.end))
            if sel.all():
                off, who = (addr - np.uint64(a.base)).astype(np.intp), tids
            elif sel.any():
                off, who = (addr[sel] - np.uint64(a.base)).astype(np.intp), tids[sel]
            else:
                continue
            for j in range(nbytes):
                owner[off + j if j else off] = who


def check_alignment(addr: np.ndarray, nbytes: int, space: str) -> None:
    if nbytes == 1:
        return
    bad = (addr & np.uint64(nbytes - 1)) != 0     # sizes are powers of two
    if bad.any():
        lane = int(np.argmax(bad))
        a = int(addr[lane])
        raise MemoryFault(f"misaligned {space} access: {nbytes}-byte access at 0x{a:x} is not "
                          f"{nbytes}-byte aligned", lane, a, space)


def window_offsets(addr: np.ndarray, nbytes: int, size: int, space: str) -> np.ndarray:
    """Bounds-check state-space offsets into a per-CTA (shared) or per-thread (local) window."""
    bad = addr + np.uint64(nbytes) > np.uint64(size)
    if bad.any():
        lane = int(np.argmax(bad))
        a = int(addr[lane])
        raise MemoryFault(f"out-of-bounds {space} access of {nbytes} bytes at offset 0x{a:x}; "
                          f"the {space} window holds {size} bytes", lane, a, space)
    return addr.astype(np.int64)
