"""Integer and logic instructions (PTX ISA §9.7.1, §9.7.8): the lowering glue.

Simple, exactly-defined forms lower to one LLVM instruction here; everything with
PTX-specific rules (saturation, carries, clamped shifts, division by zero, bit-field
and permute instructions) goes through the emitters of ``ptxvm.lift.intops``.
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import I1, FunctionLowering, resize
from . import lowers


def _t(ins: ptx.Instruction) -> ScalarType:
    return ins.types[0]


def _intops():
    from .. import intops
    return intops


def _float_type(t: ScalarType) -> bool:
    return t.kind == "f"


@lowers("and", "or", "xor")
def _logic(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = _t(ins)
    d, a, c = ins.operands
    x, y = fl.read(a, t), fl.read(c, t)
    fl.write(d, t, getattr(fl.b, {"and": "and_", "or": "or_", "xor": "xor"}[ins.opcode])(x, y))


@lowers("not")
def _not(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = _t(ins)
    d, a = ins.operands
    fl.write(d, t, fl.b.not_(fl.read(a, t)))


@lowers("cnot")
def _cnot(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = _t(ins)
    d, a = ins.operands
    x = fl.read(a, t)
    fl.write(d, t, fl.b.zext(fl.b.icmp_unsigned("==", x, x.type(0)), x.type))


def _is_float_op(fl: FunctionLowering, ins: ptx.Instruction) -> bool:
    t = _t(ins)
    if t.kind == "f" or t in (ScalarType.U16X2, ScalarType.S16X2):
        from .float_ops import lower_float
        lower_float(fl, ins)
        return True
    return False


def _signed(t: ScalarType) -> bool:
    return t.kind == "s"


def _int_generic(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """Forms with PTX-specific rules: delegate to the intops emitter of the same name."""
    from .int_generic import lower_generic
    lower_generic(fl, ins)


@lowers("add", "sub")
def _add_sub(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if _is_float_op(fl, ins):
        return
    if ins.modifiers and any(m in ins.modifiers for m in ("sat", "cc")) or ins.opcode in ("addc", "subc"):
        return _int_generic(fl, ins)
    t = _t(ins)
    d, a, c = ins.operands
    x, y = fl.read(a, t), fl.read(c, t)
    fl.write(d, t, fl.b.add(x, y) if ins.opcode == "add" else fl.b.sub(x, y))


@lowers("mul")
def _mul(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if _is_float_op(fl, ins):
        return
    t = _t(ins)
    d, a, c = ins.operands
    b = fl.b
    x, y = fl.read(a, t), fl.read(c, t)
    w = t.bits
    mode = ins.mod("hilo") or ins.mod("wide") or "lo"
    if mode == "lo":
        fl.write(d, t, b.mul(x, y))
        return
    wide = ir.IntType(2 * w)
    p = b.mul(resize(b, x, 2 * w, _signed(t)), resize(b, y, 2 * w, _signed(t)))
    if mode == "wide":
        fl.write(d, ScalarType(f"{t.kind}{2 * w}"), p)
    else:
        fl.write(d, t, b.trunc(b.lshr(p, wide(w)), x.type))


@lowers("mad")
def _mad(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if _is_float_op(fl, ins):
        return
    if "sat" in ins.modifiers or "cc" in ins.modifiers:
        return _int_generic(fl, ins)
    t = _t(ins)
    d, a, c, e = ins.operands
    b = fl.b
    x, y = fl.read(a, t), fl.read(c, t)
    w = t.bits
    mode = ins.mod("hilo") or ins.mod("wide") or "lo"
    if mode == "lo":
        fl.write(d, t, b.add(b.mul(x, y), fl.read(e, t)))
        return
    wt = ScalarType(f"{t.kind}{2 * w}")
    p = b.mul(resize(b, x, 2 * w, _signed(t)), resize(b, y, 2 * w, _signed(t)))
    if mode == "wide":
        fl.write(d, wt, b.add(p, fl.read(e, wt)))
    else:
        fl.write(d, t, b.add(b.trunc(b.lshr(p, ir.IntType(2 * w)(w)), x.type), fl.read(e, t)))


@lowers("neg")
def _neg(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if _is_float_op(fl, ins):
        return
    t = _t(ins)
    d, a = ins.operands
    fl.write(d, t, fl.b.neg(fl.read(a, t)))


@lowers("abs")
def _abs(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if _is_float_op(fl, ins):
        return
    t = _t(ins)
    d, a = ins.operands
    b = fl.b
    x = fl.read(a, t)
    fl.write(d, t, b.select(b.icmp_signed("<", x, x.type(0)), b.neg(x), x))


@lowers("min", "max")
def _minmax(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if _is_float_op(fl, ins):
        return
    if "relu" in ins.modifiers:
        return _int_generic(fl, ins)
    t = _t(ins)
    d, a, c = ins.operands
    b = fl.b
    x, y = fl.read(a, t), fl.read(c, t)
    cmp = b.icmp_signed if _signed(t) else b.icmp_unsigned
    lt = cmp("<", x, y)
    fl.write(d, t, b.select(lt, x, y) if ins.opcode == "min" else b.select(lt, y, x))


@lowers("shl", "shr")
def _shift(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    """Shift amounts are unsigned 32-bit; amounts >= width give 0 (or the sign for shr.s)."""
    t = _t(ins)
    d, a, c = ins.operands
    b = fl.b
    x = fl.read(a, t)
    n = fl.read(c, ScalarType.U32)
    w = x.type.width
    big = b.icmp_unsigned(">=", n, ir.IntType(32)(w))
    nn = resize(b, b.select(big, ir.IntType(32)(w - 1), n), w, False)
    if ins.opcode == "shl":
        r = b.select(big, x.type(0), b.shl(x, nn))
    elif _signed(t):
        r = b.ashr(x, nn)                       # amount clamped to w-1: all sign bits
    else:
        r = b.select(big, x.type(0), b.lshr(x, nn))
    fl.write(d, t, r)


@lowers("div", "rem")
def _div(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if _is_float_op(fl, ins):
        return
    _int_generic(fl, ins)


@lowers("selp")
def _selp(fl: FunctionLowering, ins: ptx.Instruction) -> None:
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


@lowers("setp")
def _setp(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    t = _t(ins)
    if t.kind == "f":
        from .float_ops import lower_setp_float
        return lower_setp_float(fl, ins)
    ops = ins.operands
    dst, a, c = ops[0], ops[1], ops[2]
    third = ops[3] if len(ops) > 3 else None
    op = ins.mod("cmp_int") or ins.mod("cmp_bit")
    p = int_compare(fl, op, t, fl.read(a, t), fl.read(c, t))
    write_pair(fl, dst, p, third, ins)


def write_pair(fl: FunctionLowering, dst: ptx.Operand, p: ir.Value, third, ins: ptx.Instruction) -> None:
    b = fl.b
    if isinstance(dst, ptx.Pair):
        fl.write(dst.first, ScalarType.PRED, combine(fl, ins, p, third))
        fl.write(dst.second, ScalarType.PRED, combine(fl, ins, b.not_(p), third))
    else:
        fl.write(dst, ScalarType.PRED, combine(fl, ins, p, third))


__all__ = ["int_compare", "combine", "write_pair", "I1"]
