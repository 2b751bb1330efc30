"""Atomics of many lanes on few addresses, in lane order, without one numpy round per lane.

The interpreter defines an atomic instruction's outcome as the lanes applying it one after
another in lane order (``ops.atomics.atomic_rmw``): each lane's old value is what the lanes
before it on the same address left. Done round by round (every address's next lane at once)
that costs one round per lane on the busiest address: 16,384 rounds when a whole launch adds
to one counter. The same sequential outcome, computed another way:

* integer add, and, or, xor, min, max (associative and commutative, exact: integer adds wrap):
  a segmented inclusive scan per address (Hillis-Steele, log2(lanes) steps);
* exch: each lane's old value is the previous lane's operand;
* cas: a walk over the successes (the next lane whose compare value equals the current one);
* float add, min, max: ``ufunc.accumulate`` per address, which is the same left fold, operand
  for operand, as the rounds; a segment whose fold meets a NaN is left to the rounds (their
  NaN policy is the float operations' own).

Addresses with few lanes still go through the rounds (``run_rounds``), at most as many as
their longest list of lanes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

_INT_SCANS = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
              "min": np.minimum, "max": np.maximum}
_FLOAT_FOLDS = {"add": np.add, "min": np.fmin, "max": np.fmax}
ROUNDS_WORTH = 4                 # up to this many lanes per address the rounds are as cheap
SEGMENT_COST = 2.0               # one per-address fold costs about this many rounds


class Segments:
    """Lanes grouped by address, each group in lane order."""

    def __init__(self, idx: np.ndarray) -> None:
        self.order = np.argsort(idx, kind="stable")          # stable: lane order within an address
        sidx = idx[self.order]
        first = np.ones(sidx.size, dtype=bool)
        first[1:] = sidx[1:] != sidx[:-1]
        self.first = first
        self.starts = np.flatnonzero(first)
        self.sizes = np.diff(np.append(self.starts, sidx.size))
        self.ends = self.starts + self.sizes - 1
        self.cell = sidx[self.starts]                        # the element each group updates
        self.seg = np.cumsum(first) - 1                      # group of each sorted lane


def sequential_rmw(view: np.ndarray, idx: np.ndarray, op: str, args: list, old: np.ndarray,
                   apply: Callable | None, run_rounds: Callable) -> None:
    """Apply ``op`` lane by lane in lane order to ``view[idx]``, old values into ``old``.
    ``run_rounds(sel)`` does it the round-by-round way for the lanes ``sel`` (indices)."""
    s = Segments(idx)
    if s.sizes.max() <= ROUNDS_WORTH or apply is not None:
        run_rounds(np.arange(idx.size))
        return
    if op in _INT_SCANS and view.dtype.kind in "iu":
        _int_scan(view, s, _INT_SCANS[op], args[0], old)
    elif op == "exch":
        _exchange(view, s, args[0], old)
    elif op == "cas" or (op in _FLOAT_FOLDS and view.dtype.kind == "f"):
        _per_segment(view, s, op, args, old, run_rounds)
    else:                                                    # inc, dec: the rounds
        run_rounds(np.arange(idx.size))


def _int_scan(view, s: Segments, ufunc, v: np.ndarray, old: np.ndarray) -> None:
    x = v[s.order].astype(view.dtype, copy=True)
    d = 1
    while d < s.sizes.max():
        same = s.seg[d:] == s.seg[:-d]
        x[d:] = np.where(same, ufunc(x[:-d], x[d:]), x[d:])
        d *= 2
    cur = view[s.cell]                                       # each address's value before the lanes
    cur_of = cur[s.seg]
    prev = np.empty_like(x)
    prev[1:] = x[:-1]
    with np.errstate(all="ignore"):
        old[s.order] = np.where(s.first, cur_of, ufunc(cur_of, prev))
        view[s.cell] = ufunc(cur, x[s.ends])


def _exchange(view, s: Segments, v: np.ndarray, old: np.ndarray) -> None:
    x = v[s.order].astype(view.dtype, copy=False)
    cur = view[s.cell]
    prev = np.empty_like(x)
    prev[1:] = x[:-1]
    old[s.order] = np.where(s.first, cur[s.seg], prev)
    view[s.cell] = x[s.ends]


def _per_segment(view, s: Segments, op: str, args: list, old: np.ndarray, run_rounds: Callable) -> None:
    """The busiest addresses one by one, the others by rounds: whichever split costs least."""
    sizes = np.sort(s.sizes)
    # cost(T) = T rounds for the groups of at most T lanes + SEGMENT_COST per larger group
    cand = np.unique(np.append(sizes, 0))
    larger = sizes.size - np.searchsorted(sizes, cand, side="right")
    t = int(cand[np.argmin(cand + SEGMENT_COST * larger)])
    small = []
    for g in np.flatnonzero(s.sizes > t):
        lanes = s.order[s.starts[g]:s.ends[g] + 1]
        if not _fold(view, int(s.cell[g]), op, [a[lanes] for a in args], lanes, old):
            small.append(lanes)
    rest = s.order[np.repeat(s.sizes <= t, s.sizes)]
    if small:
        rest = np.concatenate([rest] + small)
    if rest.size:
        run_rounds(np.sort(rest))


def _fold(view, cell: int, op: str, args: list, lanes: np.ndarray, old: np.ndarray) -> bool:
    """One address's lanes in order; False (nothing written) when the rounds must do it."""
    cur = view[cell]
    if op == "cas":
        cmp, new = args[0].astype(view.dtype, copy=False), args[1].astype(view.dtype, copy=False)
        out = np.empty(lanes.size, dtype=view.dtype)
        pos = 0
        while pos < lanes.size:
            hits = np.flatnonzero(cmp[pos:] == cur)
            if not hits.size:
                out[pos:] = cur
                break
            j = pos + int(hits[0])
            out[pos:j + 1] = cur
            cur = new[j]
            pos = j + 1
        old[lanes] = out
        view[cell] = cur
        return True
    vals = args[0].astype(view.dtype, copy=False)
    with np.errstate(all="ignore"):
        run = _FLOAT_FOLDS[op].accumulate(np.concatenate([np.array([cur], dtype=view.dtype), vals]))
    if np.isnan(run).any():
        return False
    old[lanes] = run[:-1]
    view[cell] = run[-1]
    return True
