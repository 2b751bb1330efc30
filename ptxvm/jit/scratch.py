"""Zeroed byte buffers that batches of the JIT executor reuse from one launch to the next.

A batch needs tens of MB at once (thread records, local and shared memory, warp exchange
slots). Fresh ones come from the kernel as untouched pages, and the first write of each page
is a fault plus the kernel zeroing it: a third of a 256x256 tiled matmul's time, launched
on host arrays, went there.
A buffer given back is zeroed again with ``fill(0)`` on its next use, pages already mapped.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np


class ScratchPool:
    """Buffers by exact size, most recently returned last; at most ``limit`` bytes kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._free: list[np.ndarray] = []
        self._lock = threading.Lock()

    def take(self, nbytes: int, zero: bool = True) -> np.ndarray:
        """A ``uint8`` buffer of ``nbytes``, zeroed unless ``zero=False`` (its user writes every
        byte before reading it): a returned one when the size matches."""
        with self._lock:
            for i in range(len(self._free) - 1, -1, -1):
                if self._free[i].size == nbytes:
                    buf = self._free.pop(i)
                    break
            else:
                buf = None
        if buf is None:
            return np.zeros(nbytes, dtype=np.uint8) if zero else np.empty(nbytes, dtype=np.uint8)
        if zero:
            buf.fill(0)
        return buf

    def give(self, bufs: Iterable[np.ndarray]) -> None:
        """Return buffers no one uses any more; the oldest are dropped past the limit."""
        with self._lock:
            self._free.extend(b for b in bufs if b.size <= self.limit)
            total = sum(b.size for b in self._free)
            while total > self.limit:
                total -= self._free.pop(0).size

    @property
    def held(self) -> int:
        with self._lock:
            return sum(b.size for b in self._free)
