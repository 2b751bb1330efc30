"""Warp-synchronous instructions (PTX ISA §9.7.9.6 shfl.sync, §9.7.13.10-13 vote, match, redux,
activemask, bar.warp.sync).

Each lane publishes its sources through the target's warp exchange; afterwards it sees the
mask of lanes that took part and can read any of their published values, so every lane
computes its own result from all participants' sources (read before any lane writes).
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import I1, I32, I64, FunctionLowering
from . import lowers


def lane_fold(fl: FunctionLowering, init: ir.Value,
              step: Callable[[ir.IRBuilder, ir.Value, ir.Value], ir.Value]) -> ir.Value:
    """acc = init; for L in 0..31: acc = step(b, L, acc); an IR loop."""
    b = fl.b
    pre = b.block
    loop, done = fl.new_block("lanes"), fl.new_block("lanes_done")
    b.branch(loop)
    b.position_at_end(loop)
    lane = b.phi(I32)
    acc = b.phi(init.type)
    lane.add_incoming(I32(0), pre)
    acc.add_incoming(init, pre)
    new = step(b, lane, acc)
    nxt = b.add(lane, I32(1))
    lane.add_incoming(nxt, b.block)
    acc.add_incoming(new, b.block)
    b.cbranch(b.icmp_unsigned("<", nxt, I32(32)), loop, done)
    b.position_at_end(done)
    return new


def _bit(b: ir.IRBuilder, mask: ir.Value, lane: ir.Value) -> ir.Value:
    return b.trunc(b.lshr(mask, lane), I1)


def _member(fl: FunctionLowering, ins: ptx.Instruction, index: int) -> ir.Value | None:
    return fl.read(ins.operands[index], ScalarType.B32) if len(ins.operands) > index else None


@lowers("shfl")
def _shfl(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    if t.bits != 32:
        raise fl.unsupported(ins, "shuffles a non-32-bit type")
    mode = next(m for m in ins.modifiers if m in ("up", "down", "bfly", "idx"))
    d = ins.operands[0]
    b = fl.b
    # Operands are read again after the exchange: values from before a stop do not survive it.
    view = fl.hooks.warp_exchange(fl, ins, [b.zext(fl.read(ins.operands[1], ScalarType.B32), I64)])
    a = fl.read(ins.operands[1], ScalarType.B32)
    bb = b.and_(fl.read(ins.operands[2], ScalarType.U32), I32(0x1F))
    c = fl.read(ins.operands[3], ScalarType.U32)
    lane = view.lane
    clamp = b.and_(c, I32(0x1F))
    seg = b.and_(b.lshr(c, I32(8)), I32(0x1F))
    max_lane = b.or_(b.and_(lane, seg), b.and_(clamp, b.not_(seg)))
    min_lane = b.and_(lane, seg)
    if mode == "up":
        j = b.sub(lane, bb)
        ok = b.icmp_signed(">=", j, max_lane)
    elif mode == "down":
        j = b.add(lane, bb)
        ok = b.icmp_signed("<=", j, max_lane)
    elif mode == "bfly":
        j = b.xor(lane, bb)
        ok = b.icmp_signed("<=", j, max_lane)
    else:
        j = b.or_(min_lane, b.and_(bb, b.not_(seg)))
        ok = b.icmp_signed("<=", j, max_lane)
    j = b.select(ok, j, lane)
    in_warp = b.icmp_unsigned("<", j, I32(32))
    jj = b.and_(j, I32(31))
    valid = b.and_(b.and_(ok, in_warp), _bit(b, view.mask, jj))
    src = b.trunc(view.value(b, jj, 0), I32)
    out = b.select(valid, src, a)
    if isinstance(d, ptx.Pair):
        fl.write(d.first, t, out)
        fl.write(d.second, ScalarType.PRED, ok)
    else:
        fl.write(d, t, out)


def _ballot(fl: FunctionLowering, view, slot: int, members: ir.Value) -> ir.Value:
    bits = view.ballot(fl.b, slot)
    if bits is not None:
        return fl.b.and_(bits, members)

    def step(b, lane, acc):
        on = b.and_(_bit(b, members, lane), b.icmp_unsigned("!=", view.value(b, lane, slot), I64(0)))
        return b.or_(acc, b.select(on, b.shl(I32(1), lane), I32(0)))
    return lane_fold(fl, I32(0), step)


@lowers("vote")
def _vote(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    mode = next(m for m in ins.modifiers if m in ("all", "any", "uni", "ballot"))
    b = fl.b
    view = fl.hooks.warp_exchange(fl, ins, [b.zext(fl.read(ins.operands[1], ScalarType.PRED), I64)])
    mm = _member(fl, ins, 2)
    members = view.mask if mm is None else b.and_(view.mask, mm)
    mask = _ballot(fl, view, 0, members)
    d = ins.operands[0]
    if mode == "ballot":
        fl.write(d, ScalarType.B32, mask)
    elif mode == "all":
        fl.write(d, ScalarType.PRED, b.icmp_unsigned("==", mask, members))
    elif mode == "any":
        fl.write(d, ScalarType.PRED, b.icmp_unsigned("!=", mask, I32(0)))
    else:
        fl.write(d, ScalarType.PRED, b.or_(b.icmp_unsigned("==", mask, members), b.icmp_unsigned("==", mask, I32(0))))


@lowers("activemask")
def _activemask(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    view = fl.hooks.warp_exchange(fl, ins, [])
    fl.write(ins.operands[0], ScalarType.B32, view.mask)


@lowers("bar.warp.sync")
def _warp_sync(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    fl.hooks.warp_exchange(fl, ins, [])


@lowers("match")
def _match(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    mode = next(m for m in ins.modifiers if m in ("any", "all"))
    b = fl.b
    v0 = fl.read(ins.operands[1], t)
    view = fl.hooks.warp_exchange(fl, ins, [b.zext(v0, I64) if v0.type.width < 64 else v0])
    v = fl.read(ins.operands[1], t)
    mm = _member(fl, ins, 2)
    members = view.mask if mm is None else b.and_(view.mask, mm)
    mine = b.zext(v, I64) if v.type.width < 64 else v

    def step(b, lane, acc):
        on = b.and_(_bit(b, members, lane), b.icmp_unsigned("==", view.value(b, lane, 0), mine))
        return b.or_(acc, b.select(on, b.shl(I32(1), lane), I32(0)))
    same = lane_fold(fl, I32(0), step)
    d = ins.operands[0]
    pair = isinstance(d, ptx.Pair)
    if mode == "any":
        fl.write(d.first if pair else d, ScalarType.B32, same)
        return
    all_same = b.icmp_unsigned("==", same, members)
    fl.write(d.first if pair else d, ScalarType.B32, b.select(all_same, members, I32(0)))
    if pair:
        fl.write(d.second, ScalarType.PRED, all_same)


@lowers("redux.sync")
def _redux(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    op = next(m for m in ins.modifiers if m in ("add", "min", "max", "and", "or", "xor"))
    if t.kind == "f":
        raise fl.unsupported(ins, "(floating-point redux) has no LLVM lowering yet")
    b = fl.b
    view = fl.hooks.warp_exchange(fl, ins, [b.zext(fl.read(ins.operands[1], t), I64)])
    mm = _member(fl, ins, 2)
    members = view.mask if mm is None else b.and_(view.mask, mm)
    signed = t.kind == "s"
    ident = {"add": 0, "and": 0xFFFFFFFF, "or": 0, "xor": 0,
             "min": 0x7FFFFFFF if signed else 0xFFFFFFFF, "max": 0x80000000 if signed else 0}[op]

    def step(b, lane, acc):
        x = b.trunc(view.value(b, lane, 0), I32)
        if op == "add":
            r = b.add(acc, x)
        elif op in ("and", "or", "xor"):
            r = getattr(b, {"and": "and_", "or": "or_", "xor": "xor"}[op])(acc, x)
        else:
            cmp = b.icmp_signed if signed else b.icmp_unsigned
            r = b.select(cmp("<" if op == "min" else ">", x, acc), x, acc)
        return b.select(_bit(b, members, lane), r, acc)
    fl.write(ins.operands[0], t, lane_fold(fl, I32(ident), step))
