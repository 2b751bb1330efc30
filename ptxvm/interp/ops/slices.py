"""Loads and stores whose address is a formula (lanevalues.Affine): memory touched as slices.

A formula address ``c + s * lane`` (global) or ``c + s * tid`` in every CTA
(shared) with a positive step is an arithmetic progression: the access is one
strided numpy slice, and it is in bounds and aligned iff its first and last
elements are (the progression is monotone and all its terms share the first
one's alignment when the step is a multiple of the access size). Each function
returns False, having done nothing, whenever that does not hold, and the
caller takes the general per-lane path, which raises the exact fault report.
"""

from __future__ import annotations

import numpy as np

from ...machine.addressmap import PARAM_LIMIT, SHARED_BASE, SHARED_LIMIT
from ..lanevalues import Affine, linear_stride
from ..state import window_stride

_M64 = 1 << 64


def _signed64(v: int) -> int:
    return v - _M64 if v >> 63 else v


def _global_region(b, space: str, af: Affine, total: int, stores: bool):
    """(allocation, first byte offset in it, step in bytes) for a global progression, or None."""
    if space not in ("global", "const", "generic") or (stores and space == "const"):
        return None
    step = linear_stride(af, b.geometry.threads_per_cta)
    if step is None:
        return None
    step = _signed64(step)
    lo = af.c
    hi = lo + step * (b.n - 1) + total
    if step < (total if stores else 0) or lo % total or step % total or hi > _M64:
        return None
    if space == "generic" and lo < PARAM_LIMIT:          # a window (shared/local/param), not global
        return None
    a = b.memory.find(lo)
    if a is None or hi > a.end or (space == "const" and a.space != "const"):
        return None
    return a, lo - a.base, step


def _shared_region(b, space: str, af: Affine, total: int, stores: bool):
    """(first byte offset in each CTA's window, step in bytes per thread) for a shared-memory
    progression over the threads of every CTA, or None."""
    c = af.c
    if space == "generic":
        c -= SHARED_BASE
        if not 0 <= c < SHARED_LIMIT - SHARED_BASE:
            return None
    elif space != "shared":
        return None
    if af.q or af.bits != 64:
        return None
    step = _signed64(af.a)
    tpc = b.geometry.threads_per_cta
    window = window_stride(b.shared_bytes)
    if step < (total if stores else 0) or c % total or step % total or window % total:
        return None
    if c + step * (tpc - 1) + total > b.shared_bytes:
        return None
    return c, step


def load(b, space: str, af: Affine, writers, size: int, dtype) -> bool:
    """Every thread loads ``len(writers)`` elements of ``size`` bytes at ``af``; False if not done."""
    total = size * len(writers)
    g = _global_region(b, space, af, total, stores=False)
    if g is not None:
        alloc, off, step = g
        view = alloc.view(dtype)
        first, k = off // size, step // size
        for i, w in enumerate(writers):
            if k == 0:      # one address for everybody: one value
                w(b, b.all, Affine.make(size * 8, int(view[first + i])))
            else:
                w(b, b.all, view[first + i: first + i + k * (b.n - 1) + 1: k].copy())
        return True
    s = _shared_region(b, space, af, total, stores=False)
    if s is not None:
        c, step = s
        tpc = b.geometry.threads_per_cta
        rows = b.shared.view(dtype).reshape(b.n_ctas, -1)
        first, k = c // size, step // size
        for i, w in enumerate(writers):
            if k == 0:      # one address per CTA: its value in each of the CTA's threads
                w(b, b.all, np.repeat(rows[:, first + i], tpc))
            else:
                w(b, b.all, np.array(rows[:, first + i: first + i + k * (tpc - 1) + 1: k]).reshape(-1))
        return True
    return False


def store(b, space: str, af: Affine, readers, size: int) -> bool:
    """Every thread stores ``len(readers)`` elements at ``af`` (no two threads' bytes overlap);
    False if not done."""
    total = size * len(readers)
    g = _global_region(b, space, af, total, stores=True)
    s = None if g is not None else _shared_region(b, space, af, total, stores=True)
    if g is None and s is None:
        return False
    values = [r(b, b.all) for r in readers]
    if any(v.dtype.itemsize != size for v in values):
        return False
    if g is not None:
        alloc, off, step = g
        first, k = off // size, step // size
        view = alloc.view(values[0].dtype)
        for i, v in enumerate(values):
            view[first + i: first + i + k * (b.n - 1) + 1: k] = v
        return True
    c, step = s
    tpc = b.geometry.threads_per_cta
    rows = b.shared.view(values[0].dtype).reshape(b.n_ctas, -1)
    first, k = c // size, step // size
    for i, v in enumerate(values):
        rows[:, first + i: first + i + k * (tpc - 1) + 1: k] = v.reshape(b.n_ctas, tpc)
    return True
