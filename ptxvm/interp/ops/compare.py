"""Comparison and selection instructions (PTX ISA §9.7.6): setp, set, selp, slct."""

from __future__ import annotations

import numpy as np

from ...ir.types import ScalarType
from ..numerics import half
from .. import numerics as num
from ..program import reader, writer
from . import impl
from .common import _HALF_TYPES, _view


_INT_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


def _compare(ctx, ins, t=None):
    t = t or ins.types[0]
    op = next(m for m in ins.modifiers if m in _INT_CMP or m in ("equ", "neu", "ltu", "leu", "gtu", "geu",
                                                                   "num", "nan"))
    if t.value in _HALF_TYPES:
        # Packed x2 types give a pair (lower halves, upper halves) of results (§9.7.7).
        use_ftz = ins.has("ftz")
        return lambda a, b: half.setp(op, a, b, t.value, ftz=use_ftz)
    if t.kind == "f":
        if t.bits not in (32, 64):
            raise ctx.unsupported(ins, "(packed half comparisons) are not executable yet")
        use_ftz = ins.has("ftz") and t.bits == 32
        return lambda a, b: num.fcompare(_view(a, t), _view(b, t), op, ftz=use_ftz)
    view_t = t if op not in ("lo", "ls", "hi", "hs") else ScalarType(f"u{t.bits}")
    if t.kind == "b":
        view_t = ScalarType(f"u{t.bits}")
    fn = _INT_CMP[op]
    return lambda a, b: fn(_view(a, view_t), _view(b, view_t))


_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


@impl("setp")
def _setp(ctx, ins):
    t = ins.types[0]
    cmp = _compare(ctx, ins)
    a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
    boolop = next((m for m in ins.modifiers if m in _BOOL), None)
    c = reader(ctx, ins.operands[3], ScalarType.PRED, ins) if boolop else None
    d = ins.operands[0]
    from ...ir.nodes import Pair
    if isinstance(d, Pair):
        p = writer(ctx, d.first, ScalarType.PRED, ins)
        q = writer(ctx, d.second, ScalarType.PRED, ins)
    else:
        p, q = writer(ctx, d, ScalarType.PRED, ins), None
    comb = _BOOL.get(boolop)
    if t.value in ("f16x2", "bf16x2"):
        # `setp.CmpOp{.BoolOp}.f16x2 p|q, a, b{, {!}c}`: p for the lower halves, q for the upper.
        if q is None:
            raise ctx.unsupported(ins, "needs two predicate destinations `p|q` (one per half)")

        def run_x2(b, lanes):
            lo, hi = cmp(a(b, lanes), b_(b, lanes))
            if comb is not None:
                cv = c(b, lanes)
                lo, hi = comb(lo, cv), comb(hi, cv)
            p(b, lanes, lo)
            q(b, lanes, hi)
        return run_x2, 0, -1

    def run(b, lanes):
        r = cmp(a(b, lanes), b_(b, lanes))
        if comb is not None:
            cv = c(b, lanes)
            p(b, lanes, comb(r, cv))
            if q is not None:
                q(b, lanes, comb(~r, cv))
        else:
            p(b, lanes, r)
            if q is not None:
                q(b, lanes, ~r)
    return run, 0, -1


_SET_TRUE = {"f32": np.uint32(0x3F800000), "f16": np.uint16(0x3C00), "bf16": np.uint16(0x3F80)}


@impl("set")
def _set(ctx, ins):
    """`set.CmpOp{.BoolOp}.dtype.stype d, a, b{, {!}c}` (PTX ISA §9.7.7.3): like setp, but the
    result is written as a value: all ones / zero for integer types, 1.0 / 0.0 for floats."""
    dt, st = ins.types[0], ins.types[1]
    if dt.value not in ("u16", "s16", "u32", "s32", "b32", "f32", "f16", "bf16", "f16x2", "bf16x2"):
        raise ctx.unsupported(ins, "is not executable yet")
    packed = st.value in ("f16x2", "bf16x2")
    if packed != (dt.value in ("f16x2", "bf16x2")) and not (packed and dt.value in ("u32", "s32")) \
            or dt.value.endswith("x2") and dt.value != st.value:
        # §9.7.7.1: packed sources give .u32/.s32 or the same packed type; packed results need them.
        raise ctx.unsupported(ins, f"(.{dt.value} results of .{st.value} comparisons) is not a form of `set`")
    cmp = _compare(ctx, ins, st)
    a, b_ = (reader(ctx, o, st, ins) for o in ins.operands[1:3])
    boolop = next((m for m in ins.modifiers if m in _BOOL), None)
    c = reader(ctx, ins.operands[3], ScalarType.PRED, ins) if boolop else None
    dst = writer(ctx, ins.operands[0], dt, ins)
    comb = _BOOL.get(boolop)
    if packed:
        # Each 16-bit half of d gets its own result: 1.0 in the packed type, or all ones for
        # .u32/.s32 (0xffff per half).
        one = np.uint32(_SET_TRUE.get(dt.value[:-2], np.uint16(0xFFFF)))

        def run_x2(b, lanes):
            lo, hi = cmp(a(b, lanes), b_(b, lanes))
            if comb is not None:
                cv = c(b, lanes)
                lo, hi = comb(lo, cv), comb(hi, cv)
            zero = np.uint32(0)
            dst(b, lanes, np.where(lo, one, zero) | (np.where(hi, one, zero) << np.uint32(16)))
        return run_x2, 0, -1
    true = _SET_TRUE.get(dt.value, np.uint32(0xFFFFFFFF))

    def run(b, lanes):
        r = np.asarray(cmp(a(b, lanes), b_(b, lanes)), dtype=bool)
        if comb is not None:
            r = comb(r, c(b, lanes))
        dst(b, lanes, np.where(r, true, true.dtype.type(0)))
    return run, 0, -1


@impl("selp")
def _selp(ctx, ins):
    t = ins.types[0]
    a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
    c = reader(ctx, ins.operands[3], ScalarType.PRED, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    return (lambda b, lanes: dst(b, lanes, np.where(c(b, lanes), a(b, lanes), b_(b, lanes)))), 0, -1


@impl("slct")
def _slct(ctx, ins):
    """`slct.dtype.ctype d, a, b, c` (§9.7.6.4): d = (c >= 0) ? a : b; a NaN c selects b, -0 selects a;
    `.ftz` flushes a subnormal f32 c to sign-preserving zero first."""
    t, ct = ins.types[0], ins.types[1]
    a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
    c = reader(ctx, ins.operands[3], ct, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    ftz = ins.has("ftz")

    def pick(b, lanes):
        cv = c(b, lanes)
        if ct is ScalarType.F32:
            x = cv.view(np.float32)
            if ftz:
                x = num.ftz32(x)
            ok = x >= 0
        else:
            ok = cv.view(np.int32) >= 0
        return dst(b, lanes, np.where(ok, a(b, lanes), b_(b, lanes)))
    return pick, 0, -1
