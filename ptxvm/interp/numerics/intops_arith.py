"""Integer arithmetic semantics (PTX ISA §9.7.1, §9.7.2): add/sub with saturation and carries,
mul/mad (wide, hi, 24-bit), sad, div/rem, abs/neg/min/max."""

from __future__ import annotations

import numpy as np

from .intops_common import (_M32, _U64, _UDT, _clamp_to, _packed, _per_half, _val, _wrap, to_signed, to_unsigned, type_info)


def add(a, b, t: str, sat: bool = False) -> np.ndarray:
    """``add{.sat}.type d, a, b`` (9.7.1.1).  Wraparound; ``.sat`` only for
    ``.s32`` clamps to ``[INT_MIN, INT_MAX]``.  ``.u16x2``/``.s16x2`` add per
    half."""
    if _packed(t):
        return _per_half(add, a, b, t)
    bits, signed = type_info(t)
    if sat:
        if t.lstrip(".") != "s32":
            raise ValueError("add.sat is only defined for .s32")
        return _wrap(_clamp_to(_val(a, t) + _val(b, t), 32, True), 32)
    return to_unsigned(a, bits) + to_unsigned(b, bits)


def sub(a, b, t: str, sat: bool = False) -> np.ndarray:
    """``sub{.sat}.type d, a, b`` (9.7.1.2).  Wraparound; ``.sat`` only for
    ``.s32``.  Packed ``.u16x2``/``.s16x2`` per half."""
    if _packed(t):
        return _per_half(sub, a, b, t)
    bits, signed = type_info(t)
    if sat:
        if t.lstrip(".") != "s32":
            raise ValueError("sub.sat is only defined for .s32")
        return _wrap(_clamp_to(_val(a, t) - _val(b, t), 32, True), 32)
    return to_unsigned(a, bits) - to_unsigned(b, bits)


def _carry_add(x, y, cin, bits):
    """Unsigned ``x + y + cin`` modulo 2**bits and the carry out (uint8)."""
    x = to_unsigned(x, bits)
    y = to_unsigned(y, bits)
    cin = to_unsigned(cin, bits) & 1
    s1 = x + y
    c1 = s1 < x
    s2 = s1 + cin
    c2 = s2 < s1
    return s2, (c1 | c2).astype(np.uint8)


def add_cc(a, b, t: str):
    """``add.cc.type d, a, b`` (9.7.2.1): returns ``(d, CC.CF)``, the carry out
    of the unsigned addition (for ``.s32``/``.s64`` too: CC.CF is the carry of
    the bit pattern sum)."""
    bits, _ = type_info(t)
    return _carry_add(a, b, 0, bits)


def addc(a, b, cf, t: str):
    """``addc{.cc}.type d, a, b`` (9.7.2.2): ``d = a + b + CC.CF``; returns
    ``(d, carry_out)`` (ignore the carry unless ``.cc``)."""
    bits, _ = type_info(t)
    return _carry_add(a, b, cf, bits)


def _sub_with_carry(x, y, cin, bits):
    """``x + ~y + cin``, the way the hardware subtracts: returns ``(d, carry_out)``. The carry
    out is 1 when there is *no* borrow (``x >= y + (1 - cin)``), as on ARM and PowerPC."""
    x = to_unsigned(x, bits)
    y = to_unsigned(y, bits)
    cin = to_unsigned(cin, bits) & 1
    d = x - y - (1 - cin)
    carry = (x > y) | ((x == y) & (cin == 1))
    return d, carry.astype(np.uint8)


# PTX ISA 9.7.2.3/9.7.2.4 write subc as ``d = a - (b + CC.CF)`` and call the flag the borrow, but
# do not fix its polarity; NVIDIA GPUs compute ``a + ~b + 1`` (sub.cc) and ``a + ~b + CC.CF``
# (subc) and keep the carry out of that addition, so a borrow leaves CF = 0 and an ``addc``
# after ``sub.cc`` reads the inverted borrow (measured on hardware, issue 14; ZLUDA #197 found
# the same). sub/subc chains compute the same differences either way.
def sub_cc(a, b, t: str):
    """``sub.cc.type d, a, b``: returns ``(d, CC.CF)``, CF = 1 when ``a >= b`` unsigned."""
    bits, _ = type_info(t)
    return _sub_with_carry(a, b, 1, bits)


def subc(a, b, cf, t: str):
    """``subc{.cc}.type d, a, b``: ``d = a + ~b + CC.CF`` (``a - b`` when CF = 1, ``a - b - 1``
    after a borrow); returns ``(d, carry_out)``."""
    bits, _ = type_info(t)
    return _sub_with_carry(a, b, cf, bits)


def _mul_u64_full(a, b):
    """Exact 128-bit product of two uint64 arrays as ``(hi, lo)`` uint64."""
    a = to_unsigned(a, 64)
    b = to_unsigned(b, 64)
    a0, a1 = a & _M32, a >> 32
    b0, b1 = b & _M32, b >> 32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> 32) + (p01 & _M32) + (p10 & _M32)
    hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32)
    lo = (mid << 32) | (p00 & _M32)
    return hi, lo


def _mul_full(a, b, t):
    """Exact 2n-bit product of two n-bit operands as ``(hi, lo)`` n-bit
    unsigned arrays (two's complement for signed types)."""
    bits, signed = type_info(t)
    if bits == 64:
        ua, ub = to_unsigned(a, 64), to_unsigned(b, 64)
        hi, lo = _mul_u64_full(ua, ub)
        if signed:
            hi = hi - np.where(ua >> 63 == 1, ub, _U64(0)) - np.where(ub >> 63 == 1, ua, _U64(0))
        return hi, lo
    if signed:
        p = (_val(a, t) * _val(b, t)).view(np.uint64)   # |p| < 2**62: exact
    else:
        p = to_unsigned(a, bits).astype(np.uint64) * to_unsigned(b, bits).astype(np.uint64)
    return _wrap(p >> bits, bits), _wrap(p, bits)


def mul(a, b, t: str, mode: str = "lo") -> np.ndarray:
    """``mul.{lo,hi,wide}.type d, a, b`` (9.7.1.3).  ``.hi`` is the exact upper
    half of the 2n-bit product (also for 64-bit types, computed from 32-bit
    partial products, never via floats); ``.wide`` (16/32-bit types only)
    returns the 2n-bit product."""
    bits, _ = type_info(t)
    hi, lo = _mul_full(a, b, t)
    if mode == "lo":
        return lo
    if mode == "hi":
        return hi
    if mode == "wide":
        if bits > 32:
            raise ValueError("mul.wide is defined for 16- and 32-bit types only")
        w = 2 * bits
        return (hi.astype(_UDT[w]) << bits) | lo.astype(_UDT[w])
    raise ValueError(f"bad mul mode {mode!r}")


def mad(a, b, c, t: str, mode: str = "lo", sat: bool = False) -> np.ndarray:
    """``mad.{lo,hi,wide}{.sat}.type d, a, b, c`` (9.7.1.4).  ``d = part(a*b) +
    c`` with wraparound (``c`` is 2n bits wide for ``.wide``).  ``.sat`` exists
    only as ``mad.hi.sat.s32``: the exact sum ``(a*b)<63..32> + c`` clamped to
    ``[INT_MIN, INT_MAX]``."""
    bits, signed = type_info(t)
    if sat:
        if not (mode == "hi" and t.lstrip(".") == "s32"):
            raise ValueError("mad .sat is only defined as mad.hi.sat.s32")
        hi = mul(a, b, t, "hi").view(np.int32).astype(np.int64)
        return _wrap(_clamp_to(hi + _val(c, "s32"), 32, True), 32)
    p = mul(a, b, t, mode)
    w = 2 * bits if mode == "wide" else bits
    return p + to_unsigned(c, w)


def mad_cc(a, b, c, t: str, mode: str = "lo"):
    """``mad{.hi,.lo}.cc.type d, a, b, c`` (9.7.2.5; .u32 .s32 .u64 .s64):
    returns ``(d, carry_out of the addition)``."""
    return madc(a, b, c, 0, t, mode)


def madc(a, b, c, cf, t: str, mode: str = "lo"):
    """``madc{.hi,.lo}{.cc}.type d, a, b, c`` (9.7.2.6): ``d = part(a*b) + c +
    CC.CF``; returns ``(d, carry_out)``."""
    bits, _ = type_info(t)
    if mode not in ("lo", "hi"):
        raise ValueError("madc mode must be lo or hi")
    return _carry_add(mul(a, b, t, mode), c, cf, bits)


def _sext24(x, signed):
    v = to_unsigned(x, 32).astype(np.int64) & 0xFFFFFF
    if signed:
        v = np.where(v >= 1 << 23, v - (1 << 24), v)
    return v


def mul24(a, b, t: str, mode: str = "lo") -> np.ndarray:
    """``mul24.{lo,hi}.{u32,s32} d, a, b`` (9.7.1.5): 48-bit product of the low
    24 bits of ``a`` and ``b`` (sign-extended from bit 23 for ``.s32``);
    ``.lo`` returns bits 31..0, ``.hi`` bits 47..16."""
    bits, signed = type_info(t)
    if bits != 32:
        raise ValueError("mul24 is defined for .u32/.s32")
    p = _sext24(a, signed) * _sext24(b, signed)   # |p| < 2**48
    if mode == "lo":
        return _wrap(p, 32)
    if mode == "hi":
        return _wrap(p >> 16, 32)
    raise ValueError(f"bad mul24 mode {mode!r}")


def mad24(a, b, c, t: str, mode: str = "lo", sat: bool = False) -> np.ndarray:
    """``mad24.{lo,hi}{.sat}.{u32,s32} d, a, b, c`` (9.7.1.6): ``mul24`` part
    plus ``c``; ``.sat`` (``mad24.hi.sat.s32`` only) clamps the exact sum."""
    bits, signed = type_info(t)
    p = mul24(a, b, t, mode)
    if sat:
        if not (mode == "hi" and t.lstrip(".") == "s32"):
            raise ValueError("mad24 .sat is only defined as mad24.hi.sat.s32")
        s = p.view(np.int32).astype(np.int64) + _val(c, "s32")
        return _wrap(_clamp_to(s, 32, True), 32)
    return p + to_unsigned(c, 32)


def sad(a, b, c, t: str) -> np.ndarray:
    """``sad.type d, a, b, c`` (9.7.1.7): ``d = c + ((a < b) ? b - a : a - b)``
    with the comparison in the type's signedness, wraparound."""
    bits, _ = type_info(t)
    ua, ub = to_unsigned(a, bits), to_unsigned(b, bits)
    lt = _lt(a, b, t)
    return to_unsigned(c, bits) + np.where(lt, ub - ua, ua - ub)


def _magnitude(x, t):
    """(|x| as uint64, negative flag) of an operand of type ``t``."""
    bits, signed = type_info(t)
    if not signed:
        u = to_unsigned(x, bits).astype(np.uint64)
        return u, np.zeros(u.shape, bool)
    s = to_signed(x, bits).astype(np.int64)
    neg = s < 0
    u = s.view(np.uint64)
    return np.where(neg, _U64(0) - u, u), neg


def div(a, b, t: str) -> np.ndarray:
    """``div.type d, a, b`` (9.7.1.8), quotient truncated toward zero.

    Division by zero ("unspecified, machine-specific" per the ISA) gives all
    ones (what NVIDIA GPUs return, see the module docstring); signed
    ``INT_MIN / -1`` wraps to ``INT_MIN``."""
    bits, _ = type_info(t)
    ma, na = _magnitude(a, t)
    mb, nb = _magnitude(b, t)
    zero = mb == 0
    q = ma // np.where(zero, _U64(1), mb)
    q = np.where(na != nb, _U64(0) - q, q)
    q = np.where(zero, ~_U64(0), q)
    return _wrap(q, bits)


def rem(a, b, t: str) -> np.ndarray:
    """``rem.type d, a, b`` (9.7.1.9): remainder of the truncating division,
    sign of the dividend.  By zero: all ones (module docstring);
    ``INT_MIN rem -1 = 0``."""
    bits, _ = type_info(t)
    ma, na = _magnitude(a, t)
    mb, _ = _magnitude(b, t)
    zero = mb == 0
    r = ma % np.where(zero, _U64(1), mb)
    r = np.where(na, _U64(0) - r, r)
    r = np.where(zero, ~_U64(0), r)
    return _wrap(r, bits)


def abs_(a, t: str) -> np.ndarray:
    """``abs.type d, a`` (9.7.1.10; .s16 .s32 .s64).  ``abs(INT_MIN) = INT_MIN``
    (wraparound)."""
    bits, _ = type_info(t)
    u = to_unsigned(a, bits)
    return np.where(u >> (bits - 1) == 1, _UDT[bits](0) - u, u)


def neg(a, t: str) -> np.ndarray:
    """``neg.type d, a`` (9.7.1.11): two's complement negation, wraparound
    (``-INT_MIN = INT_MIN``)."""
    bits, _ = type_info(t)
    return _UDT[bits](0) - to_unsigned(a, bits)


def _lt(a, b, t):
    bits, signed = type_info(t)
    if signed:
        return to_signed(a, bits) < to_signed(b, bits)
    return to_unsigned(a, bits) < to_unsigned(b, bits)


def _minmax(a, b, t, relu, want_min):
    if _packed(t):
        return _per_half(lambda x, y, et: _minmax(x, y, et, relu, want_min), a, b, t)
    bits, signed = type_info(t)
    ua, ub = to_unsigned(a, bits), to_unsigned(b, bits)
    lt = _lt(a, b, t)
    r = np.where(lt if want_min else ~lt, ua, ub)
    if relu:
        if not signed:
            raise ValueError(".relu needs a signed type (.s32, .s16x2)")
        r = np.where(r >> (bits - 1) == 1, _UDT[bits](0), r)
    return r


def min_(a, b, t: str, relu: bool = False) -> np.ndarray:
    """``min{.relu}.type d, a, b`` (9.7.1.12).  Types u16..s64 and packed
    ``.u16x2``/``.s16x2`` (per half); ``.relu`` (``.s32``/``.s16x2``) clamps a
    negative result to 0."""
    return _minmax(a, b, t, relu, True)


def max_(a, b, t: str, relu: bool = False) -> np.ndarray:
    """``max{.relu}.type d, a, b`` (9.7.1.13), see :func:`min_`."""
    return _minmax(a, b, t, relu, False)
