"""Deadlocks of mbarrier waiters on the host JIT (PTX ISA §9.7.13.15).

A failed ``test_wait``/``try_wait`` stops its thread with ``YIELD`` at the wait's site
(lift/ops/mbarrier.py), and the executor lets every other thread run before it tries again. When
every live thread of the batch either yields at an mbarrier wait or waits at a CTA barrier, and
a whole round changed no byte of shared memory (where every mbarrier object lives: an arrival
would have changed one), the round is idle; ``IDLE_ROUNDS`` idle rounds in a row mean nobody is
left to arrive, and the launch ends with the deadlock report the interpreter gives
(machine/mbarrier.stall_message; the object's fields are not known here, its waiters are).
"""

from __future__ import annotations

import numpy as np

from ..errors import DeadlockError
from ..machine import mbarrier as mb
from . import layout as L

IDLE_ROUNDS = 200


class StallWatch:
    def __init__(self, sites) -> None:
        flags = np.zeros(len(sites) + 1, dtype=bool)
        for st in sites:
            flags[st.index] = st.instruction.opcode in mb.WAIT_OPCODES
        self.wait_sites = flags
        self.idle = 0
        self.snapshot: np.ndarray | None = None


def raise_if_stalled(batch, state: np.ndarray, at_barrier: np.ndarray) -> None:
    """Called before each round's settling (``_Batch._settle``): raises the deadlock."""
    err = check(batch, state, at_barrier)
    if err is not None:
        raise err


def check(batch, state: np.ndarray, at_barrier: np.ndarray) -> DeadlockError | None:
    """The deadlock, or None (see the module docstring)."""
    watch = getattr(batch, "_mbar_watch", None)
    if watch is None:
        watch = batch._mbar_watch = StallWatch(batch.launch.program.lifted.sites)
    if not watch.wait_sites.any():
        return None
    sites = batch.view["site"].astype(np.int64)
    spinning = (state == L.State.YIELD) & watch.wait_sites[np.clip(sites, 0, watch.wait_sites.size - 1)]
    live = state != L.State.EXITED
    if not spinning.any() or (live & ~spinning & ~at_barrier).any():
        watch.idle, watch.snapshot = 0, None
        return None
    if watch.snapshot is not None and np.array_equal(watch.snapshot, batch.shared):
        watch.idle += 1
    else:
        watch.idle, watch.snapshot = 0, batch.shared.copy()
    if watch.idle < IDLE_ROUNDS:
        return None
    return _report(batch, state, spinning, at_barrier)


def _report(batch, state, spinning, at_barrier) -> DeadlockError:
    v = batch.view
    blocks = []
    for cta in range(batch.n_ctas):
        sel = batch.cta_slot == cta
        who = np.nonzero(sel & spinning)[0]
        if who.size == 0:
            continue
        spinners = []
        for s in np.unique(v["site"][who])[:4]:
            ins = batch.launch.program.lifted.sites[int(s) - 1].instruction
            here = who[v["site"][who] == s]
            spinners.append(mb.Spinner(None, None, tuple(batch._where(int(t))[1] for t in here[:3]), here.size > 3,
                                       ins.span.line, str(ins)))
        blocks.append(mb.StalledBlock(batch._where(int(who[0]))[0], int(who.size),
                                      int((sel & (state != L.State.EXITED)).sum()),
                                      int((sel & at_barrier).sum()), tuple(spinners)))
    t = int(np.nonzero(spinning)[0][0])
    return batch._error(DeadlockError, t, mb.stall_message(blocks))
