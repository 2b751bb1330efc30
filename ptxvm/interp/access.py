"""Which lanes of a memory instruction fault, and the fault-write rule.

**The fault-write rule** (both executors): a thread's memory accesses before its faulting
access are done; the faulting access itself reads and writes nothing. For one
instruction executed by many threads at once, as the interpreter does:

* every thread whose access is in range, aligned and allowed completes it (its whole
  access: all elements of a vector store, the read-modify-write of an atomic, both the
  read and the write of a ``cp.async``), in lane order as without a fault;
* a thread whose access faults writes nothing of it: a ``st.v4`` that runs off the end
  of an allocation in its third element writes none of its four elements (the access is
  checked as one span, as on the GPU and the host JIT);
* then the launch stops with the fault of the lowest faulting thread (lowest in the
  batch's thread order: CTA-major, then linear thread index). CTAs of earlier batches
  have run to completion; later batches never start.

A GPU that faults leaves the other threads' in-flight writes in memory too; this rule makes
what is left deterministic. The host JIT runs a CTA's threads one by one to their next
synchronisation point, so there threads *after* the faulting one in its CTA have not yet
run the instruction (and threads before it may have run past it): the two executors leave
identical memory when the faulting thread is the last to reach the instruction, and
``tests/test_interp_windows.py`` pins the cases where they differ.

Messages and addresses are the memory layer's (``memory.py``), with a vector access
reported as its whole span at its first byte, and a generic address reported in the
window it falls in (as the host JIT does).
"""

from __future__ import annotations

import numpy as np

from ..machine import reports
from ..machine.addressmap import WINDOWS, window_of
from ..machine.memory import MemoryFault, window_bad
from .state import Batch


def faulting_lanes(b: Batch, space: str, addr: np.ndarray, nbytes: int, *, write: bool,
                   align: int | None = None) -> np.ndarray | None:
    """Per lane, whether its ``nbytes`` access at ``addr`` faults (misaligned to ``align``,
    default ``nbytes``; out of range; a write to read-only memory). None when no lane faults,
    decided without a per-lane mask where the common case allows."""
    align = nbytes if align is None else align
    bad = _misaligned(addr, align)
    oob = _out_of_range(b, space, addr, nbytes, write)
    if oob is not None:
        bad = oob if bad is None else bad | oob
    return bad


def fault_for(b: Batch, space: str, addr: int, nbytes: int, lane: int, *, write: bool,
              align: int | None = None) -> MemoryFault:
    """The fault of one access that :func:`faulting_lanes` marked, worded as the memory layer
    words it; ``lane`` is the batch lane to report."""
    align = nbytes if align is None else align
    kind, at = window_of(addr) if space == "generic" else (space, addr)
    if align > 1 and addr & (align - 1):
        return MemoryFault(reports.misaligned(kind, align, at), lane, at, kind)
    if write and kind == "const":
        return MemoryFault(reports.STORE_TO_CONST, lane, at, kind)
    if write and kind == "param":
        return MemoryFault(reports.STORE_TO_PARAM, lane, at, kind)
    if kind in ("global", "const"):
        return MemoryFault(reports.out_of_bounds(kind, nbytes, at, b.memory.nearest(at)), lane, at, kind)
    return MemoryFault(reports.window_out_of_bounds(kind, nbytes, at, window_size(b, kind)), lane, at, kind)


def first_fault(b: Batch, space: str, addr: np.ndarray, nbytes: int, lanes: np.ndarray, bad: np.ndarray, *,
                write: bool, align: int | None = None) -> MemoryFault:
    """The fault of the lowest lane in ``bad`` (``lanes`` are in ascending batch order)."""
    i = int(np.argmax(bad))
    return fault_for(b, space, int(addr[i]), nbytes, int(lanes[i]), write=write, align=align)


def window_size(b: Batch, space: str) -> int:
    if space == "shared":
        return b.shared_bytes
    if space == "local":
        return b.local_bytes
    return int(b.params.size)


def _misaligned(addr: np.ndarray, align: int) -> np.ndarray | None:
    if align <= 1:
        return None
    bad = (addr & np.uint64(align - 1)) != 0
    return bad if bad.any() else None


def _out_of_range(b: Batch, space: str, addr: np.ndarray, nbytes: int, write: bool) -> np.ndarray | None:
    if addr.size == 0:
        return None
    if space in ("global", "const"):
        if write and space == "const":
            return np.ones(addr.shape, dtype=bool)
        return _global_bad(b, addr, nbytes, space == "const")
    if space == "generic":
        return _generic_bad(b, addr, nbytes, write)
    if space == "param" and write:
        return np.ones(addr.shape, dtype=bool)
    bad = window_bad(addr, nbytes, window_size(b, space))
    return bad if bad.any() else None


def _generic_bad(b: Batch, addr: np.ndarray, nbytes: int, write: bool) -> np.ndarray | None:
    out = None
    rest = np.ones(addr.shape, dtype=bool)
    for w in WINDOWS:
        sel = (addr >= np.uint64(w.base)) & (addr < np.uint64(w.limit))
        if not sel.any():
            continue
        rest &= ~sel
        sub = _out_of_range(b, w.space, addr[sel] - np.uint64(w.base), nbytes, write)
        if sub is not None:
            out = np.zeros(addr.shape, dtype=bool) if out is None else out
            out[sel] = sub
    if rest.any():
        sub = _global_bad(b, addr[rest], nbytes, False) if not rest.all() else _global_bad(b, addr, nbytes, False)
        if sub is not None:
            out = np.zeros(addr.shape, dtype=bool) if out is None else out
            out[rest] = sub
    return out


def _global_bad(b: Batch, addr: np.ndarray, nbytes: int, const: bool) -> np.ndarray | None:
    """Lanes whose access lies in no single live allocation (a const one for ``const``)."""
    mem = b.memory
    lo, hi = int(addr.min()), int(addr.max())
    a = mem.find(lo)
    if a is not None and hi + nbytes <= a.end and (not const or a.space == "const"):
        return None
    allocs = mem.allocations
    if not allocs:
        return np.ones(addr.shape, dtype=bool)
    bases = np.asarray([x.base for x in allocs], dtype=np.uint64)
    ends = np.asarray([x.end for x in allocs], dtype=np.uint64)
    idx = np.searchsorted(bases, addr, side="right").astype(np.int64) - 1
    safe = np.maximum(idx, 0)
    # ``addr + nbytes`` may wrap past 2^64: compare with the end minus the size instead.
    ok = (idx >= 0) & (addr <= ends[safe] - np.uint64(nbytes))
    if const:
        ok &= np.asarray([x.space == "const" for x in allocs])[safe]
    return None if ok.all() else ~ok
