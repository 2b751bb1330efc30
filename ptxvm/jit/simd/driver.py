"""The CTA driver of the warp-as-SIMD path: ``ptxvm_run`` with the compact driver's contract
(``jit.compact``: same arguments and results; nothing written to the thread records unless the
chunk ends in a fault, trap or watchdog, where the bad thread's record is filled and every other
thread of the chunk marked exited), so the executor runs it as it runs a compact kernel.

Per CTA: the warps' state buffer is cleared, each warp's lanes past the CTA's threads start
exited, and the warps run in turn (``ptxvm_simd_warp``) until each has exited or waits at the
barrier; while any waits, the barrier is released and they run again."""

from __future__ import annotations

from contextlib import contextmanager

from llvmlite import ir

from ...lift.function import I1, I8, I8P, I32, I64
from .. import layout as L
from . import vec as V
from .lower import (EXIT, OUT_ADDR, OUT_KIND, OUT_LANE, OUT_SITE, OUT_SIZE, OUT_SPACE, OUT_STEPS, PC_OFF, STEPS_OFF, WAIT_OFF)

I64P = ir.PointerType(I64)


@contextmanager
def _loop(b: ir.IRBuilder, count: ir.Value):
    """``for i in range(count)`` in IR: the body is built inside the ``with``."""
    pre = b.block
    head, body, end = (b.function.append_basic_block(n) for n in ("loop_head", "loop_body", "loop_end"))
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(I64(0), pre)
    b.cbranch(b.icmp_unsigned("<", i, count), body, end)
    b.position_at_end(body)
    yield i
    i.add_incoming(b.add(i, I64(1)), b.block)
    b.branch(head)
    b.position_at_end(end)


def _field(b: ir.IRBuilder, rec: ir.Value, offset: int, t: ir.Type) -> ir.Value:
    return b.bitcast(b.gep(rec, [I64(offset)]), ir.PointerType(t))


# size: one generated-IR loop nest (CTAs, rounds, warps) sharing its counters, as compact.py's.
def add_simd_driver(llmod: ir.Module, warp_fn: ir.Function, state_bytes: int) -> ir.Function:
    fn = ir.Function(llmod, ir.FunctionType(I32, [I64P, I8P, I64, I64, I64, I64]), name="ptxvm_run")
    ctx, base, n, stride, first_thread, _first_round = fn.args
    blk = {k: fn.append_basic_block(k) for k in (
        "entry", "cta_head", "cta_body", "interrupted", "round", "warp", "warp_next", "release",
        "cta_next", "done", "fatal")}
    b = ir.IRBuilder(blk["entry"])
    ld = lambda slot: b.load(b.gep(ctx, [I64(slot)]))
    tpc = b.mul(b.mul(ld(L.X_NTID), ld(L.X_NTID + 1)), ld(L.X_NTID + 2))
    nctas, cta_base = b.udiv(n, tpc), b.udiv(first_thread, tpc)
    nwarps = b.udiv(b.add(tpc, I64(V.WARP - 1)), I64(V.WARP))
    ws_bytes = (state_bytes + 63) // 64 * 64
    malloc = ir.Function(llmod, ir.FunctionType(I8P, [I64]), name="malloc")
    free = ir.Function(llmod, ir.FunctionType(ir.VoidType(), [I8P]), name="free")
    memset = llmod.declare_intrinsic("llvm.memset", [I8P, I64])
    state = b.call(malloc, [b.mul(nwarps, I64(ws_bytes))])
    out = b.bitcast(b.alloca(ir.ArrayType(I64, 8)), I64P)
    b.store(I64(0), b.gep(out, [I64(OUT_STEPS)]))
    b.branch(blk["cta_head"])

    b.position_at_end(blk["cta_head"])
    c = b.phi(I64)
    c.add_incoming(I64(0), blk["entry"])
    more = fn.append_basic_block("cta_more")
    b.cbranch(b.icmp_unsigned("<", c, nctas), more, blk["done"])
    b.position_at_end(more)
    stop = b.load_atomic(b.gep(ctx, [I64(L.X_STOP)]), "monotonic", 8)
    b.cbranch(b.icmp_unsigned("!=", stop, I64(0)), blk["interrupted"], blk["cta_body"])
    b.position_at_end(blk["interrupted"])
    b.call(free, [state])
    b.ret(I32(L.State.INTERRUPTED))

    b.position_at_end(blk["cta_body"])
    cta_rec = b.add(ld(L.X_CTAS), b.mul(b.add(cta_base, c), I64(L.CTA_RECORD)))
    # Only the PC, waiting lanes and step counts start fresh: registers are as undefined as the
    # per-thread path's allocas (PTX gives a register no value before its first write).
    with _loop(b, nwarps) as w:
        first = b.trunc(b.mul(w, I64(V.WARP)), I32)
        lane_ids = b.add(V.splat(b, first), V.lanes())
        pcv = b.select(b.icmp_unsigned("<", lane_ids, V.splat(b, b.trunc(tpc, I32))), V.const(I32, 0),
                       V.const(I32, EXIT))
        ws = b.gep(state, [b.add(b.mul(w, I64(ws_bytes)), I64(PC_OFF))])
        b.store(pcv, b.bitcast(ws, ir.PointerType(V.vt(I32))), align=16)
        wst = b.gep(state, [b.mul(w, I64(ws_bytes))])
        b.call(memset, [b.gep(wst, [I64(WAIT_OFF)]), ir.Constant(I8, 0), I64(STEPS_OFF + 256 - WAIT_OFF), I1(0)])
    init_end = b.block
    b.branch(blk["round"])

    b.position_at_end(blk["round"])
    w = b.phi(I64)
    any_wait = b.phi(I1)
    w.add_incoming(I64(0), init_end)
    any_wait.add_incoming(I1(0), init_end)
    b.cbranch(b.icmp_unsigned("<", w, nwarps), blk["warp"], blk["release"])

    b.position_at_end(blk["warp"])
    r = b.call(warp_fn, [ctx, b.gep(state, [b.mul(w, I64(ws_bytes))]), cta_rec, w, out])
    bad = b.and_(b.icmp_unsigned("!=", r, I32(0)), b.icmp_unsigned("!=", r, I32(L.State.BARRIER)))
    b.cbranch(bad, blk["fatal"], blk["warp_next"]).set_weights([1, 1000])
    b.position_at_end(blk["warp_next"])
    w.add_incoming(b.add(w, I64(1)), blk["warp_next"])
    any_wait.add_incoming(b.or_(any_wait, b.icmp_unsigned("==", r, I32(L.State.BARRIER))), blk["warp_next"])
    b.branch(blk["round"])

    # Every warp waits or is done: release the barrier (clear the waiting lanes), run again.
    b.position_at_end(blk["release"])
    again = fn.append_basic_block("again")
    b.cbranch(any_wait, again, blk["cta_next"])
    b.position_at_end(again)
    with _loop(b, nwarps) as w2:
        ws = b.gep(state, [b.add(b.mul(w2, I64(ws_bytes)), I64(WAIT_OFF))])
        b.store(V.const(I1, 0), b.bitcast(ws, ir.PointerType(V.vt(I1))), align=4)
    b.branch(blk["round"])
    w.add_incoming(I64(0), b.block)
    any_wait.add_incoming(I1(0), b.block)

    b.position_at_end(blk["cta_next"])
    c.add_incoming(b.add(c, I64(1)), blk["cta_next"])
    b.branch(blk["cta_head"])

    b.position_at_end(blk["done"])
    b.atomic_rmw("add", b.gep(ctx, [I64(L.X_STEPS)]), b.load(b.gep(out, [I64(OUT_STEPS)])), "monotonic")
    b.call(free, [state])
    b.ret(I32(0))

    b.position_at_end(blk["fatal"])
    b.call(free, [state])
    _write_fault(b, ctx, base, n, stride, tpc, c, w, r, out, cta_rec)
    b.ret(r)
    return fn


def _write_fault(b, ctx, base, n, stride, tpc, c, w, r, out, cta_rec) -> None:
    """Every thread of the chunk exited but the bad one, whose record gets the fault."""
    get = lambda k: b.load(b.gep(out, [I64(k)]))
    with _loop(b, n) as j:
        b.store(I32(L.State.EXITED), _field(b, b.gep(base, [b.mul(j, stride)]), L.T_STATE, I32))
    linear = b.add(b.mul(w, I64(V.WARP)), get(OUT_LANE))
    rec = b.gep(base, [b.mul(b.add(b.mul(c, tpc), linear), stride)])
    memset = b.module.declare_intrinsic("llvm.memset", [I8P, I64])
    b.call(memset, [rec, ir.Constant(I8, 0), I64(L.THREAD_HEADER), I1(0)])
    nx, ny = b.load(b.gep(ctx, [I64(L.X_NTID)])), b.load(b.gep(ctx, [I64(L.X_NTID + 1)]))
    tid = (b.urem(linear, nx), b.urem(b.udiv(linear, nx), ny), b.udiv(b.udiv(linear, nx), ny))
    for off, v in ((L.T_STATE, r), (L.T_SITE, b.trunc(get(OUT_SITE), I32)), (L.T_LINEAR, b.trunc(linear, I32)),
                   (L.T_TID, b.trunc(tid[0], I32)), (L.T_TID + 4, b.trunc(tid[1], I32)),
                   (L.T_TID + 8, b.trunc(tid[2], I32)), (L.T_CTA, cta_rec), (L.T_FAULT_ADDR, get(OUT_ADDR)),
                   (L.T_FAULT_KIND, b.trunc(get(OUT_KIND), I32)), (L.T_FAULT_SIZE, b.trunc(get(OUT_SIZE), I32)),
                   (L.T_FAULT_SPACE, b.trunc(get(OUT_SPACE), I32)), (L.T_STEPS, get(OUT_STEPS))):
        b.store(v, _field(b, rec, off, v.type))
