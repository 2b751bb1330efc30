"""Deferring f32 NaN canonicalisation where ``passes.nan_blind`` shows it cannot be observed.

``fp_core.nan_policy`` stores every f32 result as ``select(fcmp uno r, r; 0x7fffffff; bitcast r)``
(a compare and a select).  Into a NaN-blind register (every read of it is a source of an f32
instruction whose result is the canonical NaN for any NaN source, or only tests for NaN) the
choice of NaN is never seen, so its stores keep the raw bits: no compare and select on an
accumulator's dependency chain (fma loops, stencils).  One rewrite for every target, run when a
function's body is lowered (before the target's own rewrites).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

from .function import I32

if TYPE_CHECKING:
    from .function import FunctionLowering

CANONICAL_F32 = 0x7FFFFFFF


def defer_nan_canonicalisation(fl: FunctionLowering) -> int:
    """Let the stores into ``fl``'s own NaN-blind registers keep raw bits; returns how many."""
    names = fl.ml.nan_blind.of(fl.fn.name)
    if not names:
        return 0
    slots = {id(slot) for slot in fl.own_register_slots(names)}
    done = 0
    for blk in fl.llfn.blocks:
        for ins in blk.instructions:
            if not (isinstance(ins, ir.StoreInstr) and id(ins.operands[1]) in slots):
                continue
            raw = canonicalised_bits(ins.operands[0])
            if raw is not None:
                ins.replace_usage(ins.operands[0], raw)
                done += 1
    return done


def canonicalised_bits(v: ir.Value) -> ir.Value | None:
    """For ``bitcast(bitcast(select(fcmp uno r, r; 0x7fffffff; bitcast r)))`` as ``nan_policy``
    builds it for f32 (stored as i32 bits): the raw ``bitcast r`` (i32); else None."""
    for _ in range(2):
        if not (isinstance(v, ir.CastInstr) and v.opname == "bitcast"):
            return None
        v = v.operands[0]
    if not isinstance(v, ir.SelectInstr):
        return None
    cond, fill, raw = v.operands
    if not (isinstance(cond, ir.FCMPInstr) and cond.op == "uno" and cond.operands[0] is cond.operands[1]):
        return None
    if not (isinstance(fill, ir.Constant) and fill.type == I32 and fill.constant == CANONICAL_F32):
        return None
    if not (isinstance(raw, ir.CastInstr) and raw.opname == "bitcast" and raw.operands[0] is cond.operands[0]
            and raw.type == I32):
        return None
    return raw
