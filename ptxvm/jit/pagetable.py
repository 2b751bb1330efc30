"""The page and allocation tables the generated code checks global accesses against, kept per
``DeviceMemory`` from one launch to the next and updated by the allocations that came and went.

Generated code (``checked._global``) finds an address's allocation as
``allocs[pages[(address - GLOBAL_BASE) >> PAGE_SHIFT]]`` (a page entry < 0: no allocation),
so the page table spans every address from GLOBAL_BASE to the newest allocation's end. Device
memory never hands an address range out twice, so that span grows with every allocation a
process ever made; rebuilt for each launch it cost a ``np.full`` of all of it plus the page
faults of fresh memory (0.2 to 0.35 ms a launch after a few hundred launches of 64 KB
arguments, more than a small kernel's own run). Kept, a launch writes only the pages of the
allocations made or freed since the previous one.

Rows of the allocation table are reused only while no generated code runs (``quiescent``): a
host thread that read a page entry just before the allocation was freed then still finds that
allocation's row, not a newer allocation's.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from ..machine.addressmap import GLOBAL_BASE
from ..machine.memory import Allocation, DeviceMemory
from . import layout as L

_ROW = L.ALLOC_ENTRY // 8              # base, end, host pointer, is-const


class PageTable:
    """``pages`` (int32, a row of ``allocs`` or -1 per 2^PAGE_SHIFT bytes) and ``allocs``
    (uint64 rows), matching the live allocations as of the last ``sync``."""

    def __init__(self) -> None:
        self.pages = np.full(1024, -1, dtype=np.int32)
        self.allocs = np.zeros((16, _ROW), dtype=np.uint64)
        self.npages = 1                          # pages the generated code may index
        self._rows: dict[int, tuple[Allocation, int]] = {}    # base -> (allocation, row)
        self._free_rows: list[int] = []
        self._pending_rows: list[int] = []       # freed while code ran: reusable at the next quiescent sync
        self._used_rows = 0
        self._seen: list[Allocation] | None = None
        self.lock = threading.Lock()

    def sync(self, live: list[Allocation], quiescent: bool) -> list[np.ndarray]:
        """Bring the tables up to ``live`` (the memory's allocation snapshot); returns the arrays
        replaced by larger ones, which the caller keeps alive while generated code may hold them."""
        if live is self._seen:                   # no allocation came or went since
            return []
        seen = live
        retired: list[np.ndarray] = []
        if quiescent:
            self._free_rows += self._pending_rows
            self._pending_rows = []
        live = [a for a in live if not a.freed]
        bases = {a.base for a in live}
        for base in [b for b in self._rows if b not in bases]:
            a, row = self._rows.pop(base)
            self.pages[_first(a):_last(a) + 1] = -1
            self.allocs[row] = 0
            (self._free_rows if quiescent else self._pending_rows).append(row)
        for a in live:
            if a.base in self._rows and self._rows[a.base][0] is a:
                continue
            row = self._row(retired)
            self._rows[a.base] = (a, row)
            self.allocs[row] = (a.base, a.base + a.size, a.data.ctypes.data, a.space == "const")
            first, last = _first(a), _last(a)
            if last >= self.pages.size:
                retired.append(self.pages)
                grown = np.full(max(2 * self.pages.size, last + 1), -1, dtype=np.int32)
                grown[:self.pages.size] = self.pages
                self.pages = grown
            self.pages[first:last + 1] = row
        self.npages = max((_last(a) + 1 for a, _ in self._rows.values()), default=1)
        self._seen = seen
        return retired

    def _row(self, retired: list[np.ndarray]) -> int:
        if self._free_rows:
            return self._free_rows.pop()
        if self._used_rows == len(self.allocs):
            retired.append(self.allocs)
            grown = np.zeros((2 * len(self.allocs), _ROW), dtype=np.uint64)
            grown[:len(self.allocs)] = self.allocs
            self.allocs = grown
        self._used_rows += 1
        return self._used_rows - 1


def _first(a: Allocation) -> int:
    return (a.base - GLOBAL_BASE) >> L.PAGE_SHIFT


def _last(a: Allocation) -> int:
    return (a.base + max(a.size, 1) - 1 - GLOBAL_BASE) >> L.PAGE_SHIFT


_TABLES: "weakref.WeakKeyDictionary[DeviceMemory, PageTable]" = weakref.WeakKeyDictionary()
_TABLES_LOCK = threading.Lock()


def table_for(memory: DeviceMemory) -> PageTable:
    """The page table kept for ``memory`` (made at its first launch)."""
    with _TABLES_LOCK:
        t = _TABLES.get(memory)
        if t is None:
            t = _TABLES[memory] = PageTable()
        return t
