"""Comparison and selection instructions (PTX ISA §9.7.6): setp, set, selp, slct."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...isa import typeset
from ..function import FunctionLowering
from . import lowers
from .common import _t


_PACKED_HALF = tuple(t for t in typeset("half") if t.endswith("x2"))     # f16x2 bf16x2


@lowers("selp")
def _selp(fl, ins):
    t = _t(ins)
    d, a, c, p = ins.operands
    fl.write(d, t, fl.b.select(fl.read(p, ScalarType.PRED), fl.read(a, t), fl.read(c, t)))


_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
         "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}


def int_compare(fl: FunctionLowering, op: str, t: ScalarType, x: ir.Value, y: ir.Value) -> ir.Value:
    b = fl.b
    if op in ("lo", "ls", "hi", "hs") or t.kind in ("u", "b"):
        return b.icmp_unsigned(_ICMP[op], x, y)
    return b.icmp_signed(_ICMP[op], x, y)


def combine(fl: FunctionLowering, ins: ptx.Instruction, p: ir.Value, c: ptx.Operand | None) -> ir.Value:
    """setp/set `.and/.or/.xor` with a third predicate operand."""
    boolop = ins.mod("boolop")
    if boolop is None or c is None:
        return p
    q = fl.read(c, ScalarType.PRED)
    return getattr(fl.b, {"and": "and_", "or": "or_", "xor": "xor"}[boolop])(p, q)


def write_pair(fl: FunctionLowering, dst: ptx.Operand, p: ir.Value, third, ins: ptx.Instruction) -> None:
    """Both results are computed before either is written: `c` may be one of the destinations
    (`setp.lt.xor.s32 %p0|%p3, %r0, 5, !%p0`, found by the fuzzer)."""
    b = fl.b
    if isinstance(dst, ptx.Pair):
        first, second = combine(fl, ins, p, third), combine(fl, ins, b.not_(p), third)
        fl.write(dst.first, ScalarType.PRED, first)
        fl.write(dst.second, ScalarType.PRED, second)
    else:
        fl.write(dst, ScalarType.PRED, combine(fl, ins, p, third))


@lowers("setp")
def _setp(fl, ins):
    t = _t(ins)
    if t.kind == "f":
        from .compare import lower_setp_float
        return lower_setp_float(fl, ins)
    ops = ins.operands
    dst, a, c = ops[0], ops[1], ops[2]
    third = ops[3] if len(ops) > 3 else None
    op = ins.mod("cmp_int") or ins.mod("cmp_bit")
    write_pair(fl, dst, int_compare(fl, op, t, fl.read(a, t), fl.read(c, t)), third, ins)


_SET_TRUE = {"f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80}    # 1.0; integer types: all ones


@lowers("set")
def _set(fl, ins):
    """set.cmp{.bool}.dtype.stype (§9.7.6.1, §9.7.7.3): all ones (integer dtype) or 1.0 (float dtype)
    where the comparison holds; packed half sources give one result per 16-bit half."""
    dt, st = ins.types[0], ins.types[1] if len(ins.types) > 1 else ins.types[0]
    ops = ins.operands
    d, a, c = ops[0], ops[1], ops[2]
    third = ops[3] if len(ops) > 3 else None
    b = fl.b
    packed = st.value in _PACKED_HALF
    if packed != (dt.value in _PACKED_HALF) and not (packed and dt.value in ("u32", "s32")) \
            or dt.value.endswith("x2") and dt.value != st.value:
        raise fl.unsupported(ins, f"(.{dt.value} results of .{st.value} comparisons) is not a form of `set`")
    x, y = fl.read(a, st), fl.read(c, st)
    if st.kind == "f":
        cmp = ins.mod("cmp_float")
        if st in (ScalarType.F32, ScalarType.F64):
            from ..semantics import fp
            p = fp.fcompare(b, x, y, cmp, ftz="ftz" in ins.modifiers)
        else:
            from ..semantics import half
            p = half.hcompare(b, x, y, cmp, type=st.value, ftz="ftz" in ins.modifiers)
    else:
        p = int_compare(fl, ins.mod("cmp_int") or ins.mod("cmp_bit"), st, x, y)
    w = max(dt.bits, 8)
    if packed:
        one = ir.IntType(32)(_SET_TRUE.get(dt.value[:-2], 0xFFFF))
        lo, hi = (combine(fl, ins, q, third) for q in p)
        r = b.or_(b.select(lo, one, ir.IntType(32)(0)), b.shl(b.select(hi, one, ir.IntType(32)(0)), ir.IntType(32)(16)))
        fl.write(d, dt, r)
        return
    p = combine(fl, ins, p, third)
    true = _SET_TRUE.get(dt.value, (1 << w) - 1)
    r = b.select(p, ir.IntType(w)(true), ir.IntType(w)(0))
    fl.write(d, dt, r if dt is not ScalarType.F32 else b.bitcast(r, ir.FloatType()))


@lowers("slct")
def _slct(fl, ins):
    """d = (c >= 0) ? a : b (§9.7.6.4): NaN selects b, -0 selects a; .ftz flushes a subnormal c."""
    t, ct = ins.types[0], ins.types[1]
    b = fl.b
    x, y = fl.read(ins.operands[1], t), fl.read(ins.operands[2], t)
    c = fl.read(ins.operands[3], ct)
    if ct is ScalarType.F32:
        if "ftz" in ins.modifiers:
            from ..semantics.fp_core import flush
            c = flush(b, c)
        ok = b.fcmp_ordered(">=", c, ir.Constant(ir.FloatType(), 0.0))
    else:
        ok = b.icmp_signed(">=", c, ir.IntType(32)(0))
    fl.write(ins.operands[0], t, b.select(ok, x, y))


def lower_setp_float(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = ins.types[0]
    ops = ins.operands
    dst, a, c = ops[0], ops[1], ops[2]
    third = ops[3] if len(ops) > 3 else None
    cmp = ins.mod("cmp_float")
    x, y = fl.read(a, t), fl.read(c, t)
    ftz = "ftz" in ins.modifiers
    if t in (ScalarType.F32, ScalarType.F64):
        from ..semantics import fp
        write_pair(fl, dst, fp.fcompare(fl.b, x, y, cmp, ftz=ftz), third, ins)
        return
    from ..semantics import half
    from .compare import combine
    r = half.hcompare(fl.b, x, y, cmp, type=t.value, ftz=ftz)
    if isinstance(r, tuple):       # x2: d|p get the low and high element's results
        if not isinstance(dst, ptx.Pair):
            raise fl.unsupported(ins, "needs two predicate destinations `p|q` (one per half)")
        lo, hi = combine(fl, ins, r[0], third), combine(fl, ins, r[1], third)   # read c before writing
        fl.write(dst.first, ScalarType.PRED, lo)
        fl.write(dst.second, ScalarType.PRED, hi)
    else:
        write_pair(fl, dst, r, third, ins)
