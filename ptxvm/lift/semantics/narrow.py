"""LLVM IR emitters for the narrow floating-point cvt forms (PTX ISA 9.0 §9.7.9.21; formats
§5.2.5) and cvt.pack (§9.7.9.22): integer-bit code, bit-identical to the interpreter
(ptxvm.interp.numerics.narrow), which computes the same rules another way (value tables and
searchsorted there, field arithmetic here).

Conventions: f32 sources are ``i32`` bits, codes are ``i32`` (low bits), results ``i32``.

* ``encode(b, f32_bits, fmt, rnd, relu=, satfinite=)``: e4m3/e5m2/e2m3/e3m2/e2m1 with .rn/.rz and
  saturation to MAX_NORM; NaN -> 0x7F (e4m3, e5m2) or +MAX_NORM (formats without NaN); ue8m0
  with .rz/.rp of the magnitude, overflow -> 0xFF (0xFE with .satfinite), NaN -> 0xFF.
* ``to_f16(b, code, fmt, relu=)``: exact; NaN -> 0x7FFF; ``ue8m0_to_bf16(b, code)``.
* ``bf16_rs(b, f32_bits, rbits16, relu=, satfinite=)``: stochastic rounding to bf16.
* ``pack_sat(b, a, c, conv, high)``: cvt.pack.sat.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from fractions import Fraction

from llvmlite import ir

I32 = ir.IntType(32)


def k(v: int) -> ir.Constant:
    return ir.Constant(I32, v & 0xFFFFFFFF)


@dataclass(frozen=True)
class Format:
    ebits: int
    mbits: int
    bias: int
    max_code: int          # MAX_NORM's code
    nan_code: int | None   # what a NaN converts to (None: the format has no NaN: +MAX_NORM)

    @property
    def sign_shift(self) -> int:
        return self.ebits + self.mbits


FORMATS = {
    "e4m3": Format(4, 3, 7, 0x7E, 0x7F),     # S.1111.111 is NaN, no infinity
    "e5m2": Format(5, 2, 15, 0x7B, 0x7F),    # IEEE-style: 0x7C infinity
    "e2m3": Format(2, 3, 1, 0x1F, None),
    "e3m2": Format(3, 2, 3, 0x1F, None),
    "e2m1": Format(2, 1, 1, 0x7, None),
}


def _select_eq(b: ir.IRBuilder, x, table: dict[int, int], default):
    for key, val in table.items():
        default = b.select(b.icmp_unsigned("==", x, k(key)), k(val), default)
    return default


def _round_shift(b: ir.IRBuilder, x, s, rnd: str):
    """x >> s (s in 1..31), to nearest even (rn) or truncated (rz)."""
    q = b.lshr(x, s)
    if rnd == "rz":
        return q
    rem = b.and_(x, b.sub(b.shl(k(1), s), k(1)))
    half = b.shl(k(1), b.sub(s, k(1)))
    up = b.or_(b.icmp_unsigned(">", rem, half),
               b.and_(b.icmp_unsigned("==", rem, half), b.trunc(q, ir.IntType(1))))
    return b.add(q, b.zext(up, I32))


def encode(b: ir.IRBuilder, u, fmt: str, rnd: str = "rn", *, relu: bool = False, satfinite: bool = True):
    """The narrow code of the f32 value with bits ``u`` (i32)."""
    if fmt == "ue8m0":
        return _encode_ue8m0(b, u, rnd, satfinite)
    f = FORMATS[fmt]
    if rnd not in ("rn", "rz") or not satfinite:
        raise ValueError(f"cvt.{rnd}{'.satfinite' if satfinite else ''} to .{fmt} is not a form of the ISA")
    a = b.and_(u, k(0x7FFFFFFF))
    neg = b.icmp_unsigned("!=", b.lshr(u, k(31)), k(0))
    e32 = b.lshr(a, k(23))
    emin = 1 - f.bias
    # Normal results: re-bias the exponent in place and round the mantissa to M bits.
    normal = _round_shift(b, b.sub(a, k((127 - f.bias) << 23)), k(23 - f.mbits), rnd)
    # Subnormal results: the 24-bit significand scaled to the format's smallest quantum.
    sig = b.select(b.icmp_unsigned("==", e32, k(0)), b.and_(a, k(0x7FFFFF)), b.or_(b.and_(a, k(0x7FFFFF)), k(1 << 23)))
    e_eff = b.select(b.icmp_unsigned("==", e32, k(0)), k(1), e32)
    shift = b.sub(k(150 + emin - f.mbits), e_eff)
    shift = b.select(b.icmp_unsigned(">", shift, k(31)), k(31), shift)
    sub = _round_shift(b, sig, shift, rnd)
    code = b.select(b.icmp_unsigned("<", e32, k(127 + emin)), sub, normal)
    over = b.or_(b.icmp_unsigned(">", code, k(f.max_code)), b.icmp_unsigned(">=", a, k(0x7F800000)))
    code = b.select(over, k(f.max_code), code)                 # .satfinite, infinities included
    code = b.select(neg, b.or_(code, k(1 << f.sign_shift)), code)
    if relu:
        code = b.select(neg, k(0), code)
    nan = b.icmp_unsigned(">", a, k(0x7F800000))
    return b.select(nan, k(f.nan_code if f.nan_code is not None else f.max_code), code)


def _encode_ue8m0(b: ir.IRBuilder, u, rnd: str, satfinite: bool):
    """2^(code-127) from |x|: .rz keeps the f32 exponent field, .rp adds one for a non-zero
    fraction (a subnormal above 2^-127 gives code 1); 255 and above is NaN's 0xFF (0xFE when
    .satfinite and the input is no NaN)."""
    a = b.and_(u, k(0x7FFFFFFF))
    e32 = b.lshr(a, k(23))
    if rnd == "rz":
        code = e32
    elif rnd == "rp":
        frac = b.icmp_unsigned("!=", b.and_(a, k(0x7FFFFF)), k(0))
        code = b.select(b.icmp_unsigned("==", e32, k(0)),
                        b.zext(b.icmp_unsigned(">", a, k(0x00400000)), I32),
                        b.add(e32, b.zext(frac, I32)))
    else:
        raise ValueError(f"cvt.{rnd} to .ue8m0 is not a form of the ISA")
    nan = b.icmp_unsigned(">", a, k(0x7F800000))
    code = b.select(b.icmp_unsigned(">=", code, k(255)), k(0xFE if satfinite else 0xFF), code)
    return b.select(nan, k(0xFF), code)


def _subnormal_f16_bits(f: Format) -> dict[int, int]:
    """f16 bits of each subnormal mantissa m (value m * 2^(1-bias-M)): every one is an f16 normal."""
    out = {}
    for m in range(1, 1 << f.mbits):
        v = Fraction(m, 1 << f.mbits) * Fraction(2) ** (1 - f.bias)
        out[m] = struct.unpack("<H", struct.pack("<e", float(v)))[0]
    return out


def to_f16(b: ir.IRBuilder, code, fmt: str, *, relu: bool = False):
    """cvt.rn{.relu}.f16x2.<fmt>x2 for one element: f16 bits (i32), exact."""
    f = FORMATS[fmt]
    sign = b.and_(b.lshr(code, k(f.sign_shift)), k(1))
    e = b.and_(b.lshr(code, k(f.mbits)), k((1 << f.ebits) - 1))
    m = b.and_(code, k((1 << f.mbits) - 1))
    normal = b.or_(b.shl(b.add(e, k(15 - f.bias)), k(10)), b.shl(m, k(10 - f.mbits)))
    mag = b.select(b.icmp_unsigned("==", e, k(0)), _select_eq(b, m, _subnormal_f16_bits(f), k(0)), normal)
    top = (1 << f.ebits) - 1
    if fmt == "e4m3":
        nan = b.and_(b.icmp_unsigned("==", e, k(top)), b.icmp_unsigned("==", m, k(7)))
    elif fmt == "e5m2":
        nan = b.and_(b.icmp_unsigned("==", e, k(top)), b.icmp_unsigned("!=", m, k(0)))
    else:
        nan = ir.Constant(ir.IntType(1), 0)
    r = b.or_(b.shl(sign, k(15)), mag)
    if relu:
        r = b.select(b.icmp_unsigned("!=", sign, k(0)), k(0), r)
    return b.select(nan, k(0x7FFF), r)


def ue8m0_to_bf16(b: ir.IRBuilder, code):
    """2^(code-127) as bf16 bits: code 0 is the subnormal 0x0040, 0xFF (NaN) gives 0x7FFF."""
    r = b.select(b.icmp_unsigned("==", code, k(0)), k(0x0040), b.shl(code, k(7)))
    return b.select(b.icmp_unsigned("==", code, k(0xFF)), k(0x7FFF), r)


def bf16_rs(b: ir.IRBuilder, u, r16, *, relu: bool = False, satfinite: bool = False):
    """cvt.rs.bf16 of f32 bits ``u`` with random bits ``r16`` (low 16 bits of an i32): the carry of
    adding them to the 16 discarded bits rounds the magnitude away from zero."""
    a = b.and_(u, k(0x7FFFFFFF))
    sign = b.and_(b.lshr(u, k(16)), k(0x8000))
    carry = b.lshr(b.add(b.and_(a, k(0xFFFF)), b.and_(r16, k(0xFFFF))), k(16))
    res = b.add(b.lshr(a, k(16)), carry)
    res = b.select(b.icmp_unsigned("==", a, k(0x7F800000)), k(0x7F80), res)
    if satfinite:
        res = b.select(b.icmp_unsigned(">", res, k(0x7F7F)), k(0x7F7F), res)
    out = b.or_(sign, res)
    if relu:
        out = b.select(b.icmp_unsigned("!=", sign, k(0)), k(0), out)
    return b.select(b.icmp_unsigned(">", a, k(0x7F800000)), k(0x7FFF), out)


PACK_RANGE = {"u2": (0, 3), "s2": (-2, 1), "u4": (0, 15), "s4": (-8, 7), "u8": (0, 255), "s8": (-128, 127),
              "u16": (0, 65535), "s16": (-32768, 32767)}


def pack_sat(b: ir.IRBuilder, a, c, conv: str, high=None):
    """cvt.pack.sat.conv.s32: clamp(a) << size | clamp(c), with ``high`` (the .b32 operand) above."""
    lo, hi = PACK_RANGE[conv]
    size = int(conv[1:])

    def sat(x):
        x = b.select(b.icmp_signed("<", x, k(lo)), k(lo), x)
        x = b.select(b.icmp_signed(">", x, k(hi)), k(hi), x)
        return b.and_(x, k((1 << size) - 1))

    d = b.or_(b.shl(sat(a), k(size)), sat(c))
    if high is not None:
        d = b.or_(d, b.shl(high, k(2 * size)))
    return d
