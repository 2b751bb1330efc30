"""CTA barriers: `bar`/`barrier` `.sync`, `.arrive` and `.red` (PTX ISA 9.0 §9.7.13.1).

Each CTA has sixteen barriers. A barrier phase collects arrivals: threads
that wait at it (`sync`, `red`) and threads that only mark their arrival and
run on (`arrive`, the producer side of a producer/consumer pair). It
completes when

* a thread count was given (by any participant; they must agree): the
  arrivals reach it, counted per warp as the ISA counts them: a warp waiting
  at the barrier counts as 32 threads once all its non-exited threads wait
  there (a `bar.arrive` thread of a partial last warp weighs 32/population);
* no count was given: every non-exited thread of the CTA waits at it or has
  arrived at it in this phase.

On completion the waiters run on, `bar.red` delivers its reduction, and the
barrier is reinitialised for its next phase. Arrivals are kept per CTA and
barrier (a weighted tally, the largest count announced, and per thread a
mask of the barriers it arrived at) in the batch.
"""

from __future__ import annotations

import numpy as np

N_BARRIERS = 16
WARP = 32
_EPS = 1e-6                # weighted tallies are sums of 32/p: compare with a tolerance


class BarrierMisuse(Exception):
    """A barrier used against the ISA's rules (bad id or count, `red` mixed with `arrive`)."""

    def __init__(self, lane: int, message: str, pc: int | None = None) -> None:
        super().__init__(message)
        self.lane, self.message, self.pc = lane, message, pc


def check_operands(b, lanes: np.ndarray, ids: np.ndarray, counts: np.ndarray | None, arrive: bool) -> None:
    """Barrier ids 0..15; counts (when given) positive multiples of the warp size (§9.7.13.1)."""
    bad = (ids < 0) | (ids >= N_BARRIERS)
    if bad.any():
        k = int(np.argmax(bad))
        raise BarrierMisuse(int(lanes[k]), f"barrier id {int(ids[k])} is out of range (a CTA has "
                                           f"barriers 0..{N_BARRIERS - 1})")
    if counts is None:
        return
    bad = (counts <= 0) if arrive else (counts < 0)
    bad |= counts % WARP != 0
    if bad.any():
        k = int(np.argmax(bad))
        what = "a non-zero multiple" if arrive else "a multiple"
        raise BarrierMisuse(int(lanes[k]), f"barrier thread count {int(counts[k])} is not {what} of the "
                                           f"warp size ({WARP})")


def arrive(b, lanes: np.ndarray, ids: np.ndarray, counts: np.ndarray) -> None:
    """`bar.arrive a, b`: mark the lanes' arrival at barrier ``ids`` without waiting."""
    cta = b.cta_slot[lanes]
    np.add.at(b.bar_arrived, (cta, ids), b.warp_weight[lanes])
    np.maximum.at(b.bar_arrive_want, (cta, ids), counts)
    b.bar_arrive_mask[lanes] |= (np.uint16(1) << ids.astype(np.uint16))
    release(b, b.program)


def _complete(b, bid: int, done: np.ndarray) -> None:
    """Reinitialise barrier ``bid`` of the CTAs in ``done`` (bool per CTA slot) for its next phase."""
    b.bar_arrived[done, bid] = 0.0
    b.bar_arrive_want[done, bid] = 0
    if b.bar_arrive_mask.any():
        sel = done[b.cta_slot]
        b.bar_arrive_mask[sel] &= np.uint16(~(1 << bid) & 0xFFFF)


def status(b, bid: int) -> tuple[np.ndarray, ...]:
    """Per CTA slot, for barrier ``bid``: (waiting-thread mask, weighted arrivals incl. waiters,
    expected count (0: all non-exited threads), complete?)."""
    at = b.waiting & (b.bar_id == bid)
    cta = b.cta_slot
    # A warp arrives once all its non-exited threads wait here (§9.7.13.1: the instruction waits
    # for the rest of the warp, then marks the warp's arrival); it counts as 32 threads.
    nw = (b.geometry.threads_per_cta + WARP - 1) // WARP
    warp = cta.astype(np.int64) * nw + b.warpid
    live = np.bincount(warp[~b.exited], minlength=b.n_ctas * nw)
    here = np.bincount(warp[at], minlength=b.n_ctas * nw)
    whole = (here > 0) & (here == live)
    weighted = WARP * np.bincount(np.arange(b.n_ctas * nw) // nw, weights=whole, minlength=b.n_ctas) \
        + b.bar_arrived[:, bid]
    want = np.zeros(b.n_ctas, dtype=np.int64)
    if at.any():
        np.maximum.at(want, cta[at], b.bar_count[at])
    want = np.maximum(want, b.bar_arrive_want[:, bid])
    # Without a count: every non-exited thread waits here or has arrived here in this phase.
    arrived_here = (b.bar_arrive_mask >> np.uint16(bid)) & np.uint16(1) != 0 if b.bar_arrive_mask.any() \
        else np.zeros(b.n, dtype=bool)
    missing = np.bincount(cta[~b.exited & ~at & ~arrived_here], minlength=b.n_ctas)
    has_any = (np.bincount(cta[at], minlength=b.n_ctas) > 0) | (b.bar_arrived[:, bid] > 0)
    done = has_any & np.where(want > 0, weighted >= want - _EPS, missing == 0)
    return at, weighted, want, done


def release(b, program=None) -> bool:
    """Complete every barrier phase whose arrivals are in; True if a waiting thread was released."""
    arrivals = b.bar_arrived.any()
    if not b.waiting.any() and not arrivals:
        return False
    bids = set(np.unique(b.bar_id[b.waiting]).tolist())
    if arrivals:
        bids.update(np.nonzero(b.bar_arrived.any(axis=0))[0].tolist())
    released = False
    for bid in sorted(bids):
        at, _, _, done = status(b, bid)
        if not done.any():
            continue
        rel = at & done[b.cta_slot]
        idx = np.nonzero(rel)[0]
        if program is not None and idx.size:
            pcs = np.unique(b.bar_pc[idx])
            reds = [int(pc) for pc in pcs if pc >= 0 and getattr(program.ops[int(pc)].run, "on_release", None)]
            if reds and (b.bar_arrived[done, bid] > 0).any():
                lane = int(idx[b.bar_pc[idx] == reds[0]][0])
                raise BarrierMisuse(lane, f"barrier {bid} is used by `bar.red` and by `bar.arrive` in one "
                                          "phase (PTX ISA 9.7.13.1: unpredictable)", reds[0])
        _complete(b, bid, done)
        if idx.size:
            b.waiting[rel] = False
            released = True
            if program is not None:
                # bar.red delivers its reduction when the barrier completes.
                for pc in np.unique(b.bar_pc[idx]):
                    on_release = getattr(program.ops[int(pc)].run, "on_release", None) if pc >= 0 else None
                    if on_release is not None:
                        on_release(b, idx[b.bar_pc[idx] == pc])
    return released
