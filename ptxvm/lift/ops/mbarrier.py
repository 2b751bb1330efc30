"""mbarrier objects (PTX ISA 9.0 §9.7.13.15) and the bulk async copies that complete their
transactions (§9.7.9.25.4.1, §9.7.9.25.6), lowered for every LLVM target.

The object is the 64-bit shared word encoded as ``ptxvm.machine.mbarrier`` documents (the
interpreter's executable definition); here every update is a compare-and-swap loop on it that
recomputes the fields in IR, so concurrent arrivals (host threads, AMD lanes) serialise as the
ISA's atomic arrive-on operations do. A use the ISA leaves undefined (an uninitialised object,
more arrivals than are pending, a tx-count out of range) traps, as the interpreter does.

A failed ``test_wait``/``try_wait`` gives the other threads a turn (``hooks.yield_thread``: the
host JIT's thread stops and the CTA's other threads run; AMD sleeps) and tests once more;
try_wait may return early (§9.7.13.15.16), and the program's loop tries again. Bulk copies are
done when they execute, then complete their bytes on the object, as the interpreter does
(interp/ops/mbarrier.py says why the ISA allows it).
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...machine import mbarrier as mb
from ..function import I1, I32, I64, FunctionLowering
from . import lowers

I64P = ir.PointerType(I64)
_F = I64(mb.FIELD)


def _space(ins: ptx.Instruction, index: int = 0) -> str:
    sp = ins.mod("space")
    if sp is None:
        return "generic"
    part = sp.split(".")[index] if "." in sp else sp
    return "shared" if part.startswith("shared") else part


def object_pointer(fl: FunctionLowering, ins: ptx.Instruction, op: ptx.Address, space: str) -> ir.Value:
    """An i64* to the mbarrier object (8 bytes, 8-aligned, in shared memory; checked)."""
    if space not in ("shared", "generic"):
        raise fl.unsupported(ins, "needs its mbarrier object in shared memory (PTX ISA 9.7.13.15.1)")
    b = fl.b
    a = fl.address(op, space)
    if space == "generic":
        bad, ok = fl.new_block("mbar_not_shared"), fl.new_block("mbar_shared")
        b.cbranch(fl.hooks.isspacep(fl, a, "shared"), ok, bad)
        b.position_at_end(bad)
        fl.hooks.trap(fl, ins, "trap")          # an object outside shared memory: undefined
        b.position_at_end(ok)
        a = fl.hooks.cvta(fl, a, "shared", False)
    return b.bitcast(fl.hooks.access(fl, "shared", a, mb.SIZE, ins, write=True), I64P)


# -- the encoding, in IR (machine/mbarrier.py's fields) --------------------------------------------

def _fields(b: ir.IRBuilder, w: ir.Value):
    pending = b.and_(w, _F)
    expected = b.and_(b.lshr(w, I64(mb.EXPECTED_SHIFT)), _F)
    tx = b.ashr(b.shl(w, I64(64 - mb.TX_SHIFT - mb.TX_BITS)), I64(64 - mb.TX_BITS))     # signed field
    valid = b.trunc(b.lshr(w, I64(mb.VALID_BIT)), I1)
    phase = b.lshr(w, I64(mb.PHASE_BIT))
    return pending, expected, tx, valid, phase


def _pack(b, pending, expected, tx, phase) -> ir.Value:
    w = b.or_(b.and_(pending, _F), b.shl(b.and_(expected, _F), I64(mb.EXPECTED_SHIFT)))
    w = b.or_(w, b.shl(b.and_(tx, I64(mb.TX_FIELD)), I64(mb.TX_SHIFT)))
    return b.or_(b.or_(w, I64(1 << mb.VALID_BIT)), b.shl(phase, I64(mb.PHASE_BIT)))


def _settle(b, pending, expected, tx, phase) -> ir.Value:
    """The packed word, moved to the next phase when nothing is pending."""
    done = b.and_(b.icmp_unsigned("==", pending, I64(0)), b.icmp_signed("==", tx, I64(0)))
    same = _pack(b, pending, expected, tx, phase)
    nxt = _pack(b, expected, expected, I64(0), b.xor(phase, I64(1)))
    return b.select(done, nxt, same)


def _tx_bad(b, tx) -> ir.Value:
    return b.or_(b.icmp_signed(">", tx, I64(mb.TX_MAX)), b.icmp_signed("<", tx, I64(-mb.TX_MAX)))


def update(fl: FunctionLowering, ins: ptx.Instruction, p: ir.Value, step) -> ir.Value:
    """``step(old) -> (new, result, bad)`` applied atomically (a CAS loop); ``bad`` traps.
    Returns the result of the successful step."""
    b = fl.b
    first = b.load_atomic(p, "monotonic", 8)
    pre = b.block
    loop, trap, cas, done = (fl.new_block(n) for n in ("mbar", "mbar_undefined", "mbar_cas", "mbar_done"))
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(I64)
    old.add_incoming(first, pre)
    new, result, bad = step(old)
    b.cbranch(bad, trap, cas)
    b.position_at_end(trap)
    fl.hooks.trap(fl, ins, "trap")
    b.position_at_end(cas)
    res = b.cmpxchg(p, old, new, "acq_rel", "monotonic")      # arrive releases, the phase test acquires
    old.add_incoming(b.extract_value(res, 0), cas)
    b.cbranch(b.extract_value(res, 1), done, loop)
    b.position_at_end(done)
    return result


def _u64(fl, op) -> ir.Value:
    return fl.b.zext(fl.read(op, ScalarType.U32), I64)


@lowers("mbarrier.init")
def _init(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    p = object_pointer(fl, ins, ins.operands[0], _space(ins))
    b = fl.b
    c = _u64(fl, ins.operands[1])
    bad = b.or_(b.icmp_unsigned("==", c, I64(0)), b.icmp_unsigned(">", c, _F))
    update(fl, ins, p, lambda old: (_pack(b, c, c, I64(0), I64(0)), I64(0), bad))


@lowers("mbarrier.inval")
def _inval(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    p = object_pointer(fl, ins, ins.operands[0], _space(ins))
    fl.b.store_atomic(I64(0), p, "release", 8)


@lowers("mbarrier.expect_tx", "mbarrier.complete_tx", "cp.async.mbarrier.arrive")
def _tx(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """`expect_tx` raises the tx-count, `complete_tx` lowers it (and may complete the phase);
    cp.async.mbarrier.arrive: the cp.async copies completed when they executed, so `.noinc` is
    one arrival now and the plain form (pending raised by one first) changes nothing."""
    p = object_pointer(fl, ins, ins.operands[0], _space(ins))
    b = fl.b
    if ins.opcode == "cp.async.mbarrier.arrive":
        if ins.has("noinc"):
            _arrive_steps(fl, ins, p, I64(1), drop=False, tx_add=None, no_complete=False)
            return
        n, sign = I64(0), 1
    else:
        n, sign = _u64(fl, ins.operands[1]), (1 if ins.opcode == "mbarrier.expect_tx" else -1)

    def step(old):
        pending, expected, tx, valid, phase = _fields(b, old)
        tx2 = b.add(tx, n) if sign > 0 else b.sub(tx, n)
        bad = b.or_(b.not_(valid), _tx_bad(b, tx2))
        new = _pack(b, pending, expected, tx2, phase) if sign > 0 else _settle(b, pending, expected, tx2, phase)
        return new, I64(0), bad
    update(fl, ins, p, step)


def _arrive_steps(fl, ins, p, count, *, drop: bool, tx_add, no_complete: bool) -> ir.Value:
    b = fl.b

    def step(old):
        pending, expected, tx, valid, phase = _fields(b, old)
        bad = b.or_(b.not_(valid), b.or_(b.icmp_unsigned("==", count, I64(0)),
                                          b.icmp_unsigned(">", count, pending)))
        pend2 = b.sub(pending, count)
        exp2 = b.sub(expected, count) if drop else expected
        if drop:
            bad = b.or_(bad, b.icmp_unsigned(">", count, expected))
        tx2 = b.add(tx, tx_add) if tx_add is not None else tx
        if tx_add is not None:
            bad = b.or_(bad, _tx_bad(b, tx2))
        if no_complete:
            bad = b.or_(bad, b.and_(b.icmp_unsigned("==", pend2, I64(0)), b.icmp_signed("==", tx2, I64(0))))
        token = b.or_(b.or_(pend2, I64(1 << mb.VALID_BIT)), b.shl(phase, I64(mb.PHASE_BIT)))
        return _settle(b, pend2, exp2, tx2, phase), token, bad
    return update(fl, ins, p, step)


@lowers("mbarrier.arrive", "mbarrier.arrive_drop")
def _arrive(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """`state, [a]{, count}`; `.expect_tx`: the third operand is the tx-count, one arrival."""
    p = object_pointer(fl, ins, ins.operands[1], _space(ins))
    third = _u64(fl, ins.operands[2]) if len(ins.operands) > 2 else None
    tx = ins.has("expect_tx")
    count = I64(1) if tx or third is None else third
    token = _arrive_steps(fl, ins, p, count, drop=ins.opcode == "mbarrier.arrive_drop",
                          tx_add=third if tx else None, no_complete=ins.has("noComplete"))
    fl.write(ins.operands[0], ScalarType.B64, token)


@lowers("mbarrier.test_wait", "mbarrier.test_wait.parity", "mbarrier.try_wait", "mbarrier.try_wait.parity")
def _wait(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    b = fl.b

    def test() -> ir.Value:
        # Operands are read again after the yield: a host JIT stop resumes with the registers
        # reloaded, so values computed before it do not reach past it.
        p = object_pointer(fl, ins, ins.operands[1], _space(ins))
        if ins.opcode.endswith(".parity"):
            parity = b.and_(_u64(fl, ins.operands[2]), I64(1))
        else:
            parity = b.lshr(fl.read(ins.operands[2], ScalarType.B64), I64(mb.PHASE_BIT))
        w = b.load_atomic(p, "acquire", 8)
        bad, ok = fl.new_block("mbar_uninit"), fl.new_block("mbar_test")
        b.cbranch(b.trunc(b.lshr(w, I64(mb.VALID_BIT)), I1), ok, bad)
        b.position_at_end(bad)
        fl.hooks.trap(fl, ins, "trap")           # an object not initialised: undefined
        b.position_at_end(ok)
        return b.icmp_unsigned("!=", b.lshr(w, I64(mb.PHASE_BIT)), parity)

    first = test()
    pre = b.block
    again, end = fl.new_block("mbar_yield"), fl.new_block("mbar_tested")
    b.cbranch(first, end, again)
    b.position_at_end(again)
    fl.hooks.yield_thread(fl, ins)               # let the threads it waits for run
    second = test()
    tail = b.block
    b.branch(end)
    b.position_at_end(end)
    done = b.phi(I1)
    done.add_incoming(first, pre)
    done.add_incoming(second, tail)
    fl.write(ins.operands[0], ScalarType.PRED, done)


@lowers("mbarrier.pending_count")
def _pending(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    s = fl.read(ins.operands[1], ScalarType.B64)
    fl.write(ins.operands[0], ScalarType.U32, fl.b.trunc(fl.b.and_(s, _F), I32))


# -- bulk copies ----------------------------------------------------------------------------------

@lowers("cp.async.bulk")
def _bulk(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """A byte loop over checked accesses (sizes are run-time values), then complete_tx."""
    if ins.has("multicast::cluster"):
        raise fl.unsupported(ins, "multicasts to a cluster, which needs cluster launches")
    dst_space, src_space = _space(ins, 0), _space(ins, 1)
    to_shared = dst_space == "shared"
    if not to_shared and (len(ins.operands) > 4 or ins.has("cp_mask")):
        raise fl.unsupported(ins, "with a byte mask has no LLVM lowering yet")
    b = fl.b
    d = fl.address(ins.operands[0], dst_space)
    s = fl.address(ins.operands[1], src_space)
    n = _u64(fl, ins.operands[2])
    mis = b.icmp_unsigned("!=", b.and_(b.or_(b.or_(d, s), n), I64(15)), I64(0))
    bad, ok = fl.new_block("bulk_misaligned"), fl.new_block("bulk_ok")
    b.cbranch(mis, bad, ok)
    b.position_at_end(bad)
    fl.hooks.trap(fl, ins, "trap")               # sizes and addresses are multiples of 16 (§9.7.9.25.4.1)
    b.position_at_end(ok)
    pre = b.block
    loop, body, end = fl.new_block("bulk_loop"), fl.new_block("bulk_copy"), fl.new_block("bulk_end")
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(I64(0), pre)
    b.cbranch(b.icmp_unsigned("<", i, n), body, end)
    b.position_at_end(body)
    i128 = ir.IntType(128)
    src = fl.hooks.access(fl, src_space, b.add(s, i), 16, ins, write=False)
    v = b.load(b.bitcast(src, i128.as_pointer()), align=16)
    dst = fl.hooks.access(fl, dst_space, b.add(d, i), 16, ins, write=True)
    b.store(v, b.bitcast(dst, i128.as_pointer()), align=16)
    i.add_incoming(b.add(i, I64(16)), b.block)
    b.branch(loop)
    b.position_at_end(end)
    if to_shared:
        p = object_pointer(fl, ins, ins.operands[3], "shared")

        def step(old):
            pending, expected, tx, valid, phase = _fields(b, old)
            tx2 = b.sub(tx, n)
            return _settle(b, pending, expected, tx2, phase), I64(0), b.or_(b.not_(valid), _tx_bad(b, tx2))
        update(fl, ins, p, step)


@lowers("cp.async.bulk.commit_group", "cp.async.bulk.wait_group")
def _bulk_groups(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """Every bulk copy completed when it executed: nothing to wait for."""
