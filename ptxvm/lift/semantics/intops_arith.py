"""LLVM IR emitters for PTX integer arithmetic (PTX ISA 9.7.1, 9.7.2): add/sub (.sat, packed
16x2), carry chains, mul/mad (.lo/.hi/.wide, .sat), mul24/mad24, sad, div/rem, abs/neg/min/max.

Signatures are listed in :mod:`ptxvm.lift.semantics.intops`.  Results wrap modulo 2**N unless a
saturating form is asked for; nothing here can trap or produce poison.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir

from ...errors import UnsupportedError
from .intops_common import I1, I32, check_mode, const, intrinsic, ones, resize, width

Value = ir.Value


def _sat_add(b: ir.IRBuilder, x: Value, y: Value, signed: bool) -> Value:
    kind = "sadd" if signed else "uadd"
    return intrinsic(b, f"llvm.{kind}.sat.i{width(x)}", x.type, [x, y])


def _sat_sub(b: ir.IRBuilder, x: Value, y: Value, signed: bool) -> Value:
    kind = "ssub" if signed else "usub"
    return intrinsic(b, f"llvm.{kind}.sat.i{width(x)}", x.type, [x, y])


def _per_half(b: ir.IRBuilder, x: Value, y: Value, fn: Callable[[Value, Value], Value]) -> Value:
    """Apply ``fn`` to the two 16-bit lanes of the i32 values ``x`` and ``y`` (packed .u16x2 /
    .s16x2, low half = element 0) and repack."""
    if width(x) != 32 or width(y) != 32:
        raise UnsupportedError("packed .u16x2/.s16x2 operands must be 32-bit")
    i16 = ir.IntType(16)
    lanes = []
    for shift in (0, 16):
        xs = b.trunc(b.lshr(x, const(I32, shift)), i16) if shift else b.trunc(x, i16)
        ys = b.trunc(b.lshr(y, const(I32, shift)), i16) if shift else b.trunc(y, i16)
        lanes.append(b.zext(fn(xs, ys), I32))
    return b.or_(lanes[0], b.shl(lanes[1], const(I32, 16)))


def iadd(b: ir.IRBuilder, x: Value, y: Value, *, sat: bool = False, signed: bool = False,
         x2: bool = False) -> Value:
    """``add{.sat}.type``: wraparound sum; ``.sat`` clamps to the signed range."""
    if x2:
        if sat:
            raise UnsupportedError("add.sat is not defined for packed .u16x2/.s16x2")
        return _per_half(b, x, y, lambda p, q: iadd(b, p, q))
    if sat:
        if not signed:
            raise UnsupportedError("add.sat is only defined for signed types (.s32)")
        return _sat_add(b, x, y, True)
    return b.add(x, y)


def isub(b: ir.IRBuilder, x: Value, y: Value, *, sat: bool = False, signed: bool = False,
         x2: bool = False) -> Value:
    """``sub{.sat}.type``: wraparound difference; ``.sat`` clamps to the signed range."""
    if x2:
        if sat:
            raise UnsupportedError("sub.sat is not defined for packed .u16x2/.s16x2")
        return _per_half(b, x, y, lambda p, q: isub(b, p, q))
    if sat:
        if not signed:
            raise UnsupportedError("sub.sat is only defined for signed types (.s32)")
        return _sat_sub(b, x, y, True)
    return b.sub(x, y)


def _wide(b: ir.IRBuilder, v: Value, n: int) -> Value:
    return resize(b, v, ir.IntType(n))


def add_cc(b: ir.IRBuilder, x: Value, y: Value, carry_in: Value | None = None) -> tuple[Value, Value]:
    """``add.cc`` (``carry_in`` None) / ``addc{.cc}`` (``carry_in`` i1): ``x + y + CF`` and the
    carry out of the unsigned N-bit addition (i1), whatever the type's signedness."""
    n = width(x)
    wt = ir.IntType(n + 1)
    s = b.add(_wide(b, x, n + 1), _wide(b, y, n + 1))
    if carry_in is not None:
        s = b.add(s, b.zext(carry_in, wt))
    return b.trunc(s, x.type), b.trunc(b.lshr(s, const(wt, n)), I1)


def sub_cc(b: ir.IRBuilder, x: Value, y: Value, carry_in: Value | None = None) -> tuple[Value, Value]:
    """``sub.cc`` / ``subc{.cc}`` as the hardware does them: ``x + ~y + CF`` (CF = 1 for
    ``sub.cc``) and CC.CF = the carry out of that addition (i1): 1 when there is no borrow.
    See interp/intops.py ``sub_cc`` for why (the ISA leaves the polarity open)."""
    n = width(x)
    wt = ir.IntType(n + 1)
    s = b.add(_wide(b, x, n + 1), _wide(b, b.not_(y), n + 1))
    s = b.add(s, b.zext(carry_in, wt) if carry_in is not None else const(wt, 1))
    return b.trunc(s, x.type), b.trunc(b.lshr(s, const(wt, n)), I1)


def _product(b: ir.IRBuilder, x: Value, y: Value, signed: bool) -> Value:
    """The exact 2N-bit product (sign- or zero-extended operands)."""
    wt = ir.IntType(2 * width(x))
    return b.mul(resize(b, x, wt, signed), resize(b, y, wt, signed))


def mul(b: ir.IRBuilder, x: Value, y: Value, *, mode: str = "lo", signed: bool = False) -> Value:
    """``mul.{lo,hi,wide}.type``: ``lo``/``hi`` halves of the 2N-bit product (iN), or the whole
    product (i2N, ``.wide``; 16- and 32-bit types only)."""
    check_mode("mul", mode, ("lo", "hi", "wide"))
    n = width(x)
    if mode == "lo":
        return b.mul(x, y)
    if mode == "wide" and n > 32:
        raise UnsupportedError(f"mul.wide is defined for 16- and 32-bit types, not {n}-bit")
    p = _product(b, x, y, signed)
    if mode == "wide":
        return p
    return b.trunc(b.lshr(p, const(p.type, n)), x.type)


def mad(b: ir.IRBuilder, x: Value, y: Value, z: Value, *, mode: str = "lo", signed: bool = False,
        sat: bool = False) -> Value:
    """``mad.{lo,hi,wide}{.sat}.type``: ``part(x*y) + z`` (``z`` is i2N for ``.wide``).
    ``.sat`` exists only as ``mad.hi.sat.s32``: the exact sum clamped to the signed range."""
    p = mul(b, x, y, mode=mode, signed=signed)
    if sat:
        if not (mode == "hi" and signed):
            raise UnsupportedError("mad .sat is only defined as mad.hi.sat.s32")
        return _sat_add(b, p, z, True)
    if width(z) != width(p):
        raise UnsupportedError(f"mad.{mode}: addend must be {width(p)}-bit, got {width(z)}-bit")
    return b.add(p, z)


def mad_cc(b: ir.IRBuilder, x: Value, y: Value, z: Value, carry_in: Value | None = None, *,
           mode: str = "lo", signed: bool = False) -> tuple[Value, Value]:
    """``mad{.lo,.hi}.cc`` (``carry_in`` None) / ``madc{.lo,.hi}{.cc}``: ``part(x*y) + z + CF`` and
    the carry out of that addition (i1)."""
    check_mode("mad.cc", mode, ("lo", "hi"))
    return add_cc(b, mul(b, x, y, mode=mode, signed=signed), z, carry_in)


def _low24(b: ir.IRBuilder, v: Value, signed: bool) -> Value:
    """The low 24 bits of an i32 as an exact i64 value (sign-extended from bit 23 if signed)."""
    i64 = ir.IntType(64)
    if signed:
        return b.sext(b.ashr(b.shl(v, const(I32, 8)), const(I32, 8)), i64)
    return b.zext(b.and_(v, const(I32, 0xFFFFFF)), i64)


def mul24(b: ir.IRBuilder, x: Value, y: Value, *, mode: str = "lo", signed: bool = False) -> Value:
    """``mul24.{lo,hi}.{u32,s32}``: 48-bit product of the low 24 bits; ``.lo`` = bits 31..0,
    ``.hi`` = bits 47..16."""
    check_mode("mul24", mode, ("lo", "hi"))
    if width(x) != 32:
        raise UnsupportedError("mul24 is defined for .u32/.s32 only")
    p = b.mul(_low24(b, x, signed), _low24(b, y, signed))
    if mode == "hi":
        p = b.lshr(p, const(p.type, 16))
    return b.trunc(p, I32)


def mad24(b: ir.IRBuilder, x: Value, y: Value, z: Value, *, mode: str = "lo", signed: bool = False,
          sat: bool = False) -> Value:
    """``mad24.{lo,hi}{.sat}.{u32,s32}``: ``mul24`` part + ``z``; ``.sat`` (only
    ``mad24.hi.sat.s32``) clamps the exact sum to the s32 range."""
    p = mul24(b, x, y, mode=mode, signed=signed)
    if sat:
        if not (mode == "hi" and signed):
            raise UnsupportedError("mad24 .sat is only defined as mad24.hi.sat.s32")
        return _sat_add(b, p, z, True)
    return b.add(p, z)


def _lt(b: ir.IRBuilder, x: Value, y: Value, signed: bool) -> Value:
    return b.icmp_signed("<", x, y) if signed else b.icmp_unsigned("<", x, y)


def sad(b: ir.IRBuilder, x: Value, y: Value, z: Value, *, signed: bool = False) -> Value:
    """``sad.type``: ``z + |x - y|`` with the comparison in the type's signedness, wraparound."""
    d = b.select(_lt(b, x, y, signed), b.sub(y, x), b.sub(x, y))
    return b.add(z, d)


def _safe_divisor(b: ir.IRBuilder, x: Value, y: Value, signed: bool) -> tuple[Value, Value]:
    """``(divisor, y == 0)``: ``y`` with the two trapping cases replaced by 1.  x86 ``div``/``idiv``
    fault on a zero divisor and on INT_MIN / -1 (and LLVM calls both undefined), so neither may
    reach the hardware.  Dividing by 1 instead gives exactly PTX's INT_MIN / -1 answers
    (quotient INT_MIN by wraparound, remainder 0); the zero case is patched by the caller."""
    ty = x.type
    zero = b.icmp_unsigned("==", y, const(ty, 0))
    bad = zero
    if signed:
        ovf = b.and_(b.icmp_unsigned("==", x, const(ty, 1 << (ty.width - 1))),
                     b.icmp_unsigned("==", y, ones(ty)))
        bad = b.or_(zero, ovf)
    return b.select(bad, const(ty, 1), y), zero


def div(b: ir.IRBuilder, x: Value, y: Value, *, signed: bool = False) -> Value:
    """``div.type``: quotient truncated toward zero; ``y == 0`` gives all ones (what NVIDIA GPUs
    return, the interpreter's documented choice); signed INT_MIN / -1 wraps to INT_MIN."""
    d, zero = _safe_divisor(b, x, y, signed)
    q = b.sdiv(x, d) if signed else b.udiv(x, d)
    return b.select(zero, ones(x.type), q)


def rem(b: ir.IRBuilder, x: Value, y: Value, *, signed: bool = False) -> Value:
    """``rem.type``: remainder with the dividend's sign; ``y == 0`` gives all ones; signed
    INT_MIN rem -1 is 0."""
    d, zero = _safe_divisor(b, x, y, signed)
    r = b.srem(x, d) if signed else b.urem(x, d)
    return b.select(zero, ones(x.type), r)


def iabs(b: ir.IRBuilder, x: Value) -> Value:
    """``abs.sN``: two's complement magnitude; ``abs(INT_MIN) = INT_MIN``."""
    neg = b.icmp_signed("<", x, const(x.type, 0))
    return b.select(neg, b.sub(const(x.type, 0), x), x)


def ineg(b: ir.IRBuilder, x: Value) -> Value:
    """``neg.sN``: two's complement negation, wraparound."""
    return b.sub(const(x.type, 0), x)


def _minmax(b: ir.IRBuilder, x: Value, y: Value, signed: bool, relu: bool, want_min: bool,
            x2: bool, name: str) -> Value:
    if relu and not signed:
        raise UnsupportedError(f"{name}.relu is only defined for signed types (.s32, .s16x2)")
    if x2:
        return _per_half(b, x, y, lambda p, q: _minmax(b, p, q, signed, relu, want_min, False, name))
    lt = _lt(b, x, y, signed)
    r = b.select(lt, x, y) if want_min else b.select(lt, y, x)
    if relu:
        r = b.select(b.icmp_signed("<", r, const(r.type, 0)), const(r.type, 0), r)
    return r


def imin(b: ir.IRBuilder, x: Value, y: Value, *, signed: bool = False, relu: bool = False,
         x2: bool = False) -> Value:
    """``min{.relu}.type``; ``.relu`` turns a negative result into 0."""
    return _minmax(b, x, y, signed, relu, True, x2, "min")


def imax(b: ir.IRBuilder, x: Value, y: Value, *, signed: bool = False, relu: bool = False,
         x2: bool = False) -> Value:
    """``max{.relu}.type``; ``.relu`` turns a negative result into 0."""
    return _minmax(b, x, y, signed, relu, False, x2, "max")
