"""Device memory: the global allocations of one device, and the checks every access passes.

Owns ``DeviceMemory`` (allocation, free, lookup, vectorised load/store of global and const
memory), ``Allocation``, ``MemoryFault`` (what the memory layer raises; each executor turns it
into a ``KernelFault`` with its context), ``WriteTracker`` (who wrote which byte, for
differential testing) and the alignment and window bounds checks. Where each state space lies
is ``addressmap``'s; the host JIT's generated code maps the same allocations by address.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .. import limits
from ..limits import describe
from . import reports
from .addressmap import ALIGN, GLOBAL_BASE, GUARD_BYTES
_EMPTY = np.zeros(0, dtype=np.uint8)     # a freed allocation's bytes


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


def _buffer(size: int, data: bytes | np.ndarray | None, share: np.ndarray | None) -> np.ndarray:
    padded = (size + 15) // 16 * 16
    if share is not None:
        assert share.dtype == np.uint8 and share.size >= size
        return share
    if data is None:
        return np.zeros(padded, dtype=np.uint8)
    raw = np.frombuffer(bytes(data), dtype=np.uint8) if not isinstance(data, np.ndarray) \
        else data.reshape(-1).view(np.uint8)
    buf = np.empty(padded, dtype=np.uint8)      # one pass: copy, then zero the rest
    buf[:raw.size] = raw
    buf[raw.size:] = 0
    return buf


class MemoryFault(Exception):
    """Raised by the memory layer; the executor turns it into a KernelFault with context."""

    def __init__(self, message: str, lane: int, address: int, space: str, allocation: str | None = None):
        super().__init__(message)
        self.message, self.lane, self.address, self.space, self.allocation = message, lane, address, space, allocation


class DeviceMemory:
    """Global allocations of one device (shared across launches).

    Thread safety: ``alloc`` and ``free`` are atomic (one lock). The allocation table is
    replaced, never changed in place, so a reader (a running launch, ``find``) that took
    ``allocations`` once sees one consistent table even while another thread allocates.
    ``free`` drops the allocation's bytes (at once, or when the running launches end: see
    ``holding``); its address range is never handed out again, so a stale pointer faults
    instead of reaching new data.
    """

    # Freed ranges remembered for fault messages ("inside `x` which was freed"), newest last.
    GRAVEYARD = 4096

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._table: tuple[list[Allocation], list[int]] = ([], [])     # sorted by base
        self._freed: collections.deque[Allocation] = collections.deque(maxlen=self.GRAVEYARD)
        self._next = GLOBAL_BASE
        self._used = 0                   # bytes of live allocations (ptxvm.limits device_memory)
        self._holds = 0                  # launches running: freed bytes are kept until they end
        self._deferred: list[np.ndarray] = []
        # Opt-in write attribution (differential testing); the store paths check it once per step.
        self.writes: "WriteTracker | None" = None

    @property
    def allocations(self) -> list[Allocation]:
        """The live allocations, sorted by base (a snapshot: do not modify)."""
        return self._table[0]

    @property
    def _bases(self) -> list[int]:
        return self._table[1]

    def live_bytes(self) -> int:
        """Bytes held by live allocations and by frees deferred while a launch runs (what a
        leak check counts)."""
        with self._lock:
            return sum(a.data.nbytes for a in self._table[0]) + sum(d.nbytes for d in self._deferred)

    def reserved_bytes(self) -> int:
        """Bytes counted against ``ptxvm.limits`` device_memory: the requested sizes of live
        allocations. Less than ``live_bytes`` (buffers are padded to 16 bytes, and deferred
        frees are already released here), so headroom under the limit is measured with this."""
        with self._lock:
            return self._used

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """While a launch runs: a freed allocation leaves the table at once (a new access
        faults), but its bytes are released only when the launch ends, because generated code
        may still hold their address (the JIT's tables, another CTA thread)."""
        with self._lock:
            self._holds += 1
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1
                if not self._holds:
                    self._deferred.clear()

    def alloc(self, size: int, name: str, *, space: str = "global", data: bytes | np.ndarray | None = None,
              share: np.ndarray | None = None) -> Allocation:
        """A new allocation of ``size`` bytes: zeros, a copy of ``data``, or ``share`` itself (uint8,
        at least ``size`` bytes, used in place: the interpreter's view of a host array).
        Refused with ``ResourceError`` beyond ``ptxvm.limits`` (allocation, device_memory)
        before any buffer is made; the buffer is made outside the lock."""
        size = max(int(size), 1)
        self._reserve(size, name)
        try:
            buf = _buffer(size, data, share)
        except BaseException:
            with self._lock:
                self._used -= size
            raise
        with self._lock:
            a = Allocation(self._next, size, buf, name, space)
            self._next += (size + GUARD_BYTES + ALIGN - 1) // ALIGN * ALIGN
            allocs, bases = self._table
            # Bases only grow, so the new allocation goes last; new lists, published at once.
            self._table = (allocs + [a], bases + [a.base])
        return a

    def _reserve(self, size: int, name: str) -> None:
        lim = limits.current()
        lim.check("allocation", size, f"allocation `{name}`")
        with self._lock:
            lim.check("device_memory", self._used + size,
                      f"allocation `{name}` with {describe(self._used)} of device memory in use")
            self._used += size

    def free(self, a: Allocation) -> None:
        """Release ``a`` (idempotent): out of the table, its bytes dropped."""
        with self._lock:
            if a.freed:
                return
            a.freed = True
            self._used -= a.size
            allocs, bases = self._table
            i = bisect.bisect_left(bases, a.base)
            if i < len(bases) and allocs[i] is a:
                self._table = (allocs[:i] + allocs[i + 1:], bases[:i] + bases[i + 1:])
            if self._holds:
                self._deferred.append(a.data)
            a.data = _EMPTY
            self._freed.append(a)

    def find(self, address: int) -> Allocation | None:
        allocs, bases = self._table
        i = bisect.bisect_right(bases, address) - 1
        if i >= 0 and address < allocs[i].end:
            return allocs[i]
        return None

    def _freed_at(self, address: int) -> Allocation | None:
        for a in reversed(self._freed):
            if a.base <= address < a.end:
                return a
        return None

    def nearest(self, address: int) -> str:
        """A human description of the allocation nearest to ``address``."""
        gone = self._freed_at(address)
        if gone is not None:
            return f"inside `{gone.name}` [0x{gone.base:x}, 0x{gone.end:x}) which was freed"
        allocs, bases = self._table
        if not allocs:
            return "no allocations exist"
        i = bisect.bisect_right(bases, address) - 1
        best = []
        for j in (i, i + 1):
            if 0 <= j < len(allocs):
                a = allocs[j]
                where = f"`{a.name}` [0x{a.base:x}, 0x{a.end:x})"
                if address >= a.end:
                    k = address - a.end
                    best.append((k, f"just past the end of {where}" if k == 0 else
                                 f"{k} byte{'s' * (k != 1)} after the end of {where}"))
                elif address < a.base:
                    k = a.base - address
                    best.append((k, f"{k} byte{'s' * (k != 1)} before {where}"))
                else:
                    best.append((0, f"inside `{a.name}` [0x{a.base:x}, 0x{a.end:x})"))
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
        allocs, bases_list = self._table
        bases = np.asarray(bases_list, dtype=np.uint64)
        idx = np.searchsorted(bases, addr, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        ends = np.asarray([a.end for a in allocs] or [0], dtype=np.uint64)
        # end - nbytes, not addr + nbytes: an address near 2**64 would wrap past the check.
        end = ends[safe]
        ok &= (end >= np.uint64(nbytes)) & (addr <= end - np.uint64(nbytes))
        if space == "const":
            ok &= np.asarray([a.space == "const" for a in allocs] or [False])[safe]
        if not ok.all():
            lane = int(np.argmin(ok))
            a = int(addr[lane])
            raise MemoryFault(reports.out_of_bounds(space, nbytes, a, self.nearest(a)), lane, a, space)
        return safe, allocs

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
            raise MemoryFault(reports.STORE_TO_CONST, 0, int(addr[0]), space)
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
        raise MemoryFault(reports.misaligned(space, nbytes, a), lane, a, space)


def window_offsets(addr: np.ndarray, nbytes: int, size: int, space: str) -> np.ndarray:
    """Bounds-check state-space offsets into a per-CTA (shared) or per-thread (local) window.

    Both ends: an offset "below" the window is a huge unsigned one (``buf - 4`` is
    0xfff...fc), and ``addr + nbytes`` must not be allowed to wrap around to a small value."""
    bad = window_bad(addr, nbytes, size)
    if bad.any():
        lane = int(np.argmax(bad))
        a = int(addr[lane])
        raise MemoryFault(reports.window_out_of_bounds(space, nbytes, a, size), lane, a, space)
    return addr.astype(np.int64)


def window_bad(addr: np.ndarray, nbytes: int, size: int) -> np.ndarray:
    """Per lane: does the ``nbytes`` access at offset ``addr`` leave a ``size``-byte window?"""
    if size < nbytes:
        return np.ones(addr.shape, dtype=bool)
    return addr > np.uint64(size - nbytes)
