"""mbarrier objects (PTX ISA 9.0 §9.7.13.15) and the bulk async copies that complete their
transactions (§9.7.9.25.4.1 cp.async.bulk, §9.7.9.25.6 bulk groups).

The object is the 64-bit word in shared memory that ``ptxvm.machine.mbarrier`` encodes; every
instruction reads and rewrites it there, in lane order, so many lanes arriving at one object in
one step see the phases change between them as the ISA's atomic arrive-on operations do.

Waiting: ``test_wait`` and ``try_wait`` answer at once (try_wait's suspend time hint "may return
early", §9.7.13.15.16). Programs loop on them; ``interp.polling`` counts those loops as poll loops,
so a spinning thread runs only when nobody else can, and the threads it waits for get their turn.
A wait that fails while every other live thread is waiting at a barrier or spinning in a poll loop
too, for ``STALL_ROUNDS`` consecutive times with no mbarrier changing in between, is a deadlock:
nobody is left to arrive. It is reported as ``bar.sync`` deadlocks are, with the objects' fields.

Bulk copies are done when the instruction executes, then complete their bytes on the mbarrier
(`.mbarrier::complete_tx::bytes`). The ISA lets the copy finish any time before the phase it
completes does, so an immediate copy is one legal execution; the bulk groups and
``fence.proxy.async`` have nothing left to order.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import mbarrier as mb
from ...machine.addressmap import SHARED_BASE, SHARED_LIMIT
from ...machine.memory import MemoryFault
from ..program import CompileContext, address, reader, writer
from . import impl
from .common import _thread_ids
from .control import _Trap
from .memory import fault_lane

STALL_ROUNDS = 1000          # failed waits in a row with nothing else able to run: a deadlock


class MbarrierDeadlock(_Trap):
    """Every live thread waits on mbarrier phases (or barriers) that no thread can complete."""

    deadlock = True                  # the executor reports it as a DeadlockError


def _space(ins: ir.Instruction, index: int = 0) -> str:
    """"shared" for `.shared`, `.shared::cta`, `.shared::cluster` (a launch without clusters:
    every CTA is a cluster of one, §9.7.13.15.1), "generic" with no state space."""
    sp = ins.mod("space")
    if sp is None:
        return "generic"
    part = sp.split(".")[index] if "." in sp else sp
    return "shared" if part.startswith("shared") else part


def object_offsets(ctx: CompileContext, ins: ir.Instruction, op: ir.Operand, space: str):
    """Per lane: the shared-window offset of the mbarrier object at ``[op]``."""
    if space not in ("shared", "generic"):
        raise ctx.unsupported(ins, "needs its mbarrier object in shared memory (PTX ISA 9.7.13.15.1)")
    addr = address(ctx, op, space, ins)
    if space == "shared":
        return addr

    def generic(b, lanes):
        a = addr(b, lanes)
        bad = (a < np.uint64(SHARED_BASE)) | (a >= np.uint64(SHARED_LIMIT))
        if bad.any():
            i = int(np.argmax(bad))
            raise MemoryFault(f"`{ins.opcode}` needs an mbarrier object in shared memory; generic address "
                              f"0x{int(a[i]):x} is not in the shared window (PTX ISA 9.7.13.15.1)",
                              int(lanes[i]), int(a[i]), "generic")
        return a - np.uint64(SHARED_BASE)
    return generic


def _words(b, off: np.ndarray, lanes: np.ndarray) -> np.ndarray:
    try:
        return b.load("shared", off, np.uint64, lanes)        # 8-byte aligned, inside the window
    except MemoryFault as e:
        raise fault_lane(e, off, lanes) from None


def update(b, lanes: np.ndarray, off: np.ndarray, fn, what: str) -> np.ndarray:
    """Apply ``fn(word, i) -> (word, result)`` to each lane's object in lane order (one object's
    updates see each other's), write the objects back; returns the per-lane results."""
    words = _words(b, off, lanes)
    keys = (b.take(b.cta_slot, lanes).astype(np.uint64) << np.uint64(32)) | off
    cur: dict[int, int] = {}
    last: dict[int, int] = {}
    out = np.zeros(lanes.size, dtype=np.uint64)
    for i in range(lanes.size):
        k = int(keys[i])
        w = cur.get(k, int(words[i]))
        try:
            w, r = fn(w, i)
        except mb.MbarrierError as e:
            raise _Trap(int(lanes[i]), f"`{what}`: {e}") from None
        cur[k], last[k] = w, i
        out[i] = r
    idx = np.fromiter(last.values(), dtype=np.int64, count=len(last))
    b.store("shared", off[idx], np.array([cur[k] for k in last], dtype=np.uint64), lanes[idx], aligned=True)
    b.mbar_idle = 0                  # an object changed: a waiter may see its phase complete
    return out


def _count_reader(ctx, ins, index: int):
    ops = ins.operands
    return reader(ctx, ops[index], ScalarType.U32, ins) if len(ops) > index else None


@impl("mbarrier.init")
def _init(ctx: CompileContext, ins: ir.Instruction):
    off = object_offsets(ctx, ins, ins.operands[0], _space(ins))
    count = reader(ctx, ins.operands[1], ScalarType.U32, ins)

    def run(b, lanes):
        c = count(b, lanes)
        update(b, lanes, off(b, lanes), lambda w, i: (mb.init(int(c[i])), 0), str(ins))
    return run, 0, -1


@impl("mbarrier.inval")
def _inval(ctx: CompileContext, ins: ir.Instruction):
    off = object_offsets(ctx, ins, ins.operands[0], _space(ins))
    return (lambda b, lanes: update(b, lanes, off(b, lanes), lambda w, i: (0, 0), str(ins))), 0, -1


@impl("mbarrier.expect_tx", "mbarrier.complete_tx")
def _tx(ctx: CompileContext, ins: ir.Instruction):
    off = object_offsets(ctx, ins, ins.operands[0], _space(ins))
    n = reader(ctx, ins.operands[1], ScalarType.U32, ins)
    fn = mb.expect_tx if ins.opcode == "mbarrier.expect_tx" else mb.complete_tx

    def run(b, lanes):
        v = n(b, lanes)
        update(b, lanes, off(b, lanes), lambda w, i: (fn(w, int(v[i]), ins.opcode), 0), str(ins))
    return run, 0, -1


@impl("mbarrier.arrive", "mbarrier.arrive_drop")
def _arrive(ctx: CompileContext, ins: ir.Instruction):
    """`state, [a]{, count}`; with `.expect_tx` the third operand is the tx-count and one thread
    arrives (§9.7.13.15.13); `.noComplete` must not complete the phase (undefined: a trap)."""
    off = object_offsets(ctx, ins, ins.operands[1], _space(ins))
    third = _count_reader(ctx, ins, 2)
    dst = writer(ctx, ins.operands[0], ScalarType.B64, ins)
    drop, tx, no_complete = ins.opcode == "mbarrier.arrive_drop", ins.has("expect_tx"), ins.has("noComplete")

    def run(b, lanes):
        v = third(b, lanes) if third is not None else None

        def one(w, i):
            count = 1 if tx or v is None else int(v[i])
            before = mb.unpack(w).phase
            new, token = mb.arrive(w, count, drop=drop, expect_tx=int(v[i]) if tx else 0, what=ins.opcode)
            if no_complete and mb.unpack(new).phase != before:
                raise mb.MbarrierError("`.noComplete` arrival completed the phase (PTX ISA 9.7.13.15.13: "
                                       "undefined)")
            return new, token
        dst(b, lanes, update(b, lanes, off(b, lanes), one, str(ins)))
    return run, 0, -1


@impl("cp.async.mbarrier.arrive")
def _cp_async_arrive(ctx: CompileContext, ins: ir.Instruction):
    """The arrive-on that tracks this thread's earlier cp.async copies (§9.7.13.15.15). They
    completed when they executed (interp.ops.async_copy), so it happens now: `.noinc` is one
    arrival; without it the pending count is raised by one first, a net change of zero."""
    off = object_offsets(ctx, ins, ins.operands[0], _space(ins))
    noinc = ins.has("noinc")

    def run(b, lanes):
        fn = (lambda w, i: (mb.arrive(w, 1, what=ins.opcode)[0], 0)) if noinc else \
            (lambda w, i: (mb.expect_tx(w, 0, ins.opcode), 0))        # checks the object, changes nothing
        update(b, lanes, off(b, lanes), fn, str(ins))
    return run, 0, -1


@impl("mbarrier.test_wait", "mbarrier.test_wait.parity", "mbarrier.try_wait", "mbarrier.try_wait.parity")
def _wait(ctx: CompileContext, ins: ir.Instruction):
    off = object_offsets(ctx, ins, ins.operands[1], _space(ins))
    parity_form = ins.opcode.endswith(".parity")
    which = reader(ctx, ins.operands[2], ScalarType.U32 if parity_form else ScalarType.B64, ins)
    dst = writer(ctx, ins.operands[0], ScalarType.PRED, ins)
    pc = [-1]

    def run(b, lanes):
        o = off(b, lanes)
        words = _words(b, o, lanes)
        w = which(b, lanes).astype(np.uint64)
        parity = (w & np.uint64(1)) if parity_form else (w >> np.uint64(mb.PHASE_BIT))
        valid = (words >> np.uint64(mb.VALID_BIT)) & np.uint64(1)
        if not valid.all():
            i = int(np.argmax(valid == 0))
            raise _Trap(int(lanes[i]), f"`{ins}`: mbarrier object at shared offset 0x{int(o[i]):x} is not "
                                       "initialised (mbarrier.init; PTX ISA 9.7.13.15: undefined)")
        done = (words >> np.uint64(mb.PHASE_BIT)) != parity
        dst(b, lanes, done)
        if not done.all():
            _note_stall(b, lanes[~done], o[~done], words[~done], pc[0], ins)
    run.set_pc = lambda p: pc.__setitem__(0, p)
    return run, 0, -1


def _poll_pcs(b) -> frozenset[int]:
    pcs = getattr(b, "mbar_poll_pcs", None)
    if pcs is None:
        ops = b.program.ops
        pcs = frozenset(p for e in (b.poll_edges or ()) for p in range(ops[e].target, e + 1))
        b.mbar_poll_pcs = pcs
    return pcs


def _note_stall(b, failed: np.ndarray, off: np.ndarray, words: np.ndarray, pc: int, ins) -> None:
    """Count a failed wait when nothing but spinners and barrier waiters is left (see the
    module docstring); past STALL_ROUNDS in a row, report the deadlock."""
    if pc not in _poll_pcs(b):
        return                       # after a failed wait outside a poll loop the thread may do anything
    others = ~b.exited & ~b.waiting
    others[failed] = False
    if b.polling is not None:
        others &= ~b.polling
    if others.any():
        b.mbar_idle = 0
        return
    b.mbar_idle = getattr(b, "mbar_idle", 0) + 1
    if b.mbar_idle > STALL_ROUNDS:
        raise MbarrierDeadlock(int(failed[0]), stall_message(b, failed, off, words, ins))


def stall_message(b, failed: np.ndarray, off: np.ndarray, words: np.ndarray, ins) -> str:
    """The deadlock report: per block, which threads wait on which object, its fields."""
    blocks = []
    cta = b.cta_slot[failed]
    for c in np.unique(cta)[:8]:
        sel = cta == c
        spinners = []
        for o in np.unique(off[sel])[:4]:
            at = failed[sel][off[sel] == o]
            spinners.append(mb.Spinner(int(o), int(words[sel][off[sel] == o][0]),
                                       tuple(tuple(int(x[t]) for x in b.tid) for t in at[:3]), at.size > 3,
                                       ins.span.line, str(ins)))
        blocks.append(mb.StalledBlock(tuple(int(x[failed[sel][0]]) for x in b.ctaid), int(sel.sum()),
                                      int((~b.exited & (b.cta_slot == c)).sum()),
                                      int((b.waiting & (b.cta_slot == c)).sum()), tuple(spinners)))
    return mb.stall_message(blocks)


@impl("mbarrier.pending_count")
def _pending(ctx: CompileContext, ins: ir.Instruction):
    state = reader(ctx, ins.operands[1], ScalarType.B64, ins)
    dst = writer(ctx, ins.operands[0], ScalarType.U32, ins)

    def run(b, lanes):
        dst(b, lanes, (state(b, lanes) & np.uint64(mb.FIELD)).astype(np.uint32))
    return run, 0, -1


# -- bulk copies (§9.7.9.25.4.1) ----------------------------------------------------------------

@impl("cp.async.bulk")
def _bulk(ctx: CompileContext, ins: ir.Instruction):
    if ins.has("multicast::cluster"):
        raise ctx.unsupported(ins, "multicasts to a cluster, which needs cluster launches")
    dst_space, src_space = _space(ins, 0), _space(ins, 1)
    dst = address(ctx, ins.operands[0], dst_space, ins)
    src = address(ctx, ins.operands[1], src_space, ins)
    size = reader(ctx, ins.operands[2], ScalarType.U32, ins)
    to_shared = dst_space == "shared"
    mbar = object_offsets(ctx, ins, ins.operands[3], "shared") if to_shared else None
    if not to_shared and (len(ins.operands) > 4 or ins.has("cp_mask")):
        raise ctx.unsupported(ins, "with a byte mask is not executable yet")

    def run(b, lanes):
        d, s, n = dst(b, lanes), src(b, lanes), size(b, lanes).astype(np.int64)
        for i in range(lanes.size):
            copy(b, int(lanes[i]), int(d[i]), int(s[i]), int(n[i]))
        if mbar is not None:
            update(b, lanes, mbar(b, lanes), lambda w, i: (mb.complete_tx(w, int(n[i]), ins.opcode), 0), str(ins))

    def copy(b, lane, d, s, n):
        if n % 16 or d % 16 or s % 16:
            raise _Trap(lane, f"`{ins}`: size {n} and both addresses must be multiples of 16 "
                              "(PTX ISA 9.7.9.25.4.1)")
        if n == 0:
            return
        one = np.full(n, lane, dtype=np.int64)
        span = np.arange(n, dtype=np.uint64)
        try:
            data = b.load(src_space, np.uint64(s) + span, np.uint8, one, aligned=True)
        except MemoryFault as e:
            e.lane = lane
            raise
        try:
            b.store(dst_space, np.uint64(d) + span, data, one, aligned=True)
        except MemoryFault as e:
            e.lane = lane
            raise
        if not to_shared and b.memory.writes is not None:
            b.memory.writes.record(np.array([d], dtype=np.uint64), n, _thread_ids(b, np.array([lane])))
    return run, 0, -1


@impl("cp.async.bulk.commit_group", "cp.async.bulk.wait_group")
def _bulk_groups(ctx: CompileContext, ins: ir.Instruction):
    # every bulk copy completed when it executed (see the module docstring)
    return (lambda b, lanes: None), 0, -1
