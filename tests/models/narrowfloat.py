"""Reference model of PTX's narrow floating-point formats and their cvt forms, written from the
formats' definitions (PTX ISA 9.0 §5.2.5 "Alternate floating-point data formats"; OCP MX 1.0),
in exact rationals: every code is decoded from its sign, exponent and mantissa fields, and a
value is encoded by choosing among the format's representable values with Fraction arithmetic.
Nothing here calls ptxvm.

Formats (sign bit first, then exponent, then mantissa bits; ``bias`` as the definitions give):

=======  ====  ====  ====  ===========================================================
format   E     M     bias  specials
=======  ====  ====  ====  ===========================================================
e4m3     4     3     7     no infinity; S.1111.111 is NaN (max finite 448)
e5m2     5     2     15    IEEE: S.11111.00 infinity, S.11111.{01,10,11} NaN (max 57344)
e2m3     2     3     1     none (max 7.5)
e3m2     3     2     3     none (max 28)
e2m1     2     1     1     none (max 6)
ue8m0    8     0     127   unsigned, exponent only: 2^(E-127); 0xFF is NaN; no zero
=======  ====  ====  ====  ===========================================================

Conversions (PTX ISA 9.0 §9.7.9.21 cvt):

* to e4m3/e5m2/e2m3/e3m2/e2m1: ``.rn.satfinite`` (required) ``{.relu}``: round to nearest even;
  a magnitude above the largest finite value (infinity too) gives that value with the input's
  sign (.satfinite).  NaN: e4m3/e5m2 give their NaN (0x7F); the formats without NaN give
  +MAX_NORM (the CUDA 13 headers' host path, cuda_fp4.hpp/cuda_fp6.hpp: "NaN converts to
  positive MAXNORM"; the ISA only says NaN for formats that have one).  ``.relu``: a negative
  result (and -0) is +0.
* to ue8m0: ``.rz``/``.rp`` ``{.satfinite}`` of the magnitude (the headers' host path drops the
  sign, cuda_fp8.hpp __nv_cvt_bfloat16raw_to_e8m0): the largest value <= |x| (rz, 2^-127 when
  none) or the smallest value >= |x| (rp); infinity and a value above 2^127 rounded up are the
  NaN code 0xFF (the format has no infinity), or 2^127 (0xFE) with .satfinite; NaN is 0xFF.
* from the narrow formats to f16 (and ue8m0 to bf16): exact; NaN gives the canonical 0x7FFF;
  ``.relu`` turns negative values and -0 into +0.
"""

from __future__ import annotations

import bisect
import functools
import math
import struct
from dataclasses import dataclass
from fractions import Fraction

NAN = "nan"


@dataclass(frozen=True)
class Fmt:
    name: str
    ebits: int
    mbits: int
    bias: int
    signed: bool = True

    @property
    def width(self) -> int:
        return self.ebits + self.mbits + (1 if self.signed else 0)


FORMATS = {f.name: f for f in (Fmt("e4m3", 4, 3, 7), Fmt("e5m2", 5, 2, 15), Fmt("e2m3", 2, 3, 1),
                               Fmt("e3m2", 3, 2, 3), Fmt("e2m1", 2, 1, 1), Fmt("ue8m0", 8, 0, 127, False))}


def decode(fmt: str, code: int):
    """The value of ``code``: a Fraction, +-math.inf, or NAN (sign of zero: see decode_signed)."""
    f = FORMATS[fmt]
    sign, mag = _split(f, code)
    e, m = mag >> f.mbits, mag & ((1 << f.mbits) - 1)
    top = (1 << f.ebits) - 1
    if f.name == "ue8m0":
        return NAN if e == top else Fraction(2) ** (e - f.bias)
    if f.name == "e4m3" and e == top and m == (1 << f.mbits) - 1:
        return NAN
    if f.name == "e5m2" and e == top:
        return NAN if m else (-math.inf if sign else math.inf)
    if e == 0:
        v = Fraction(m, 1 << f.mbits) * Fraction(2) ** (1 - f.bias)
    else:
        v = (1 + Fraction(m, 1 << f.mbits)) * Fraction(2) ** (e - f.bias)
    return -v if sign else v


def _split(f: Fmt, code: int) -> tuple[int, int]:
    body = f.ebits + f.mbits
    code &= (1 << f.width) - 1
    return (code >> body) & 1 if f.signed else 0, code & ((1 << body) - 1)


@functools.cache
def finite_magnitudes(fmt: str) -> tuple[tuple[Fraction, int], ...]:
    """(value, code) of every finite non-negative code, ascending (codes ascend with value)."""
    f = FORMATS[fmt]
    out = []
    for code in range(1 << (f.ebits + f.mbits)):
        v = decode(fmt, code)
        if isinstance(v, Fraction):
            out.append((v, code))
    out.sort()
    return tuple(out)


@functools.cache
def _keys(fmt: str) -> tuple[Fraction, ...]:
    return tuple(v for v, _ in finite_magnitudes(fmt))


def encode(fmt: str, x, rnd: str = "rn", *, relu: bool = False, satfinite: bool = True) -> int:
    """cvt of the exact value ``x`` (Fraction, +-inf, NAN; a negative zero as the string '-0')
    to ``fmt``'s code."""
    f = FORMATS[fmt]
    if fmt == "ue8m0":
        return _encode_ue8m0(x, rnd, satfinite)
    mags = finite_magnitudes(fmt)
    max_v, max_code = mags[-1]
    if x == NAN:
        return 0x7F if fmt in ("e4m3", "e5m2") else max_code
    neg = x == "-0" or (x != "-0" and x < 0)
    a = Fraction(0) if x == "-0" else (abs(x) if not isinstance(x, float) else math.inf)
    if a > max_v:               # infinity included
        if not satfinite:
            raise ValueError("the narrow formats' cvt forms all require .satfinite")
        code = max_code
    else:
        code = _round(fmt, a, rnd)
    if neg and relu:
        return 0
    return code | ((1 << (f.ebits + f.mbits)) if neg else 0)


def _round(fmt: str, a: Fraction, rnd: str) -> int:
    """``a`` (0 <= a <= MAX_NORM) to the nearest (ties: even code) or next lower value."""
    mags = finite_magnitudes(fmt)
    i = bisect.bisect_right(_keys(fmt), a) - 1                  # mags[i] <= a < mags[i + 1]
    lo, hi = mags[i], mags[min(i + 1, len(mags) - 1)]
    if lo[0] == a or rnd == "rz":
        return lo[1]
    if rnd != "rn":
        raise ValueError(rnd)
    d_lo, d_hi = a - lo[0], hi[0] - a
    if d_lo != d_hi:
        return lo[1] if d_lo < d_hi else hi[1]
    return lo[1] if lo[1] % 2 == 0 else hi[1]


def _encode_ue8m0(x, rnd: str, satfinite: bool) -> int:
    if x == NAN:
        return 0xFF
    a = Fraction(0) if x == "-0" else (abs(x) if not isinstance(x, float) else math.inf)
    if a == math.inf:
        return 0xFE if satfinite else 0xFF
    values = _ue8m0_values()
    if rnd == "rz":                                   # the largest 2^(e-127) <= a, else code 0
        return max(bisect.bisect_right(values, a) - 1, 0)
    if rnd == "rp":                                   # the smallest 2^(e-127) >= a
        i = bisect.bisect_left(values, a)
        return i if i < len(values) else (0xFE if satfinite else 0xFF)
    raise ValueError(rnd)


@functools.cache
def _ue8m0_values() -> tuple[Fraction, ...]:
    return tuple(Fraction(2) ** (e - 127) for e in range(255))


def bf16_rs(x, r16: int, *, relu: bool = False, satfinite: bool = False) -> int:
    """cvt.rs.bf16 of the exact f32 value ``x`` with random bits ``r16``: with u the bf16 ulp at
    |x| (2^(e-7), e = max(floor(log2 |x|), -126)) and T = |x| truncated to a multiple of u, the
    discarded part (|x| - T)/u is a 16-bit fraction F / 2^16; the result is T + u when
    F + r16 >= 2^16 (the carry out), else T.  Beyond the largest finite bf16 the result is
    infinity, or MAX_NORM with .satfinite (an infinite input too)."""
    if x == NAN:
        return 0x7FFF
    neg = x == "-0" or (x != "-0" and x < 0)
    a = Fraction(0) if x == "-0" else (math.inf if isinstance(x, float) else abs(x))
    max_bf16 = (2 - Fraction(1, 128)) * Fraction(2) ** 127
    if a == math.inf:
        mag = max_bf16 if satfinite else math.inf
    elif a == 0:
        mag = Fraction(0)
    else:
        e = max(math.floor(math.log2(a)), -126)
        while Fraction(2) ** e > a and e > -126:        # floor(log2) exactly
            e -= 1
        while Fraction(2) ** (e + 1) <= a:
            e += 1
        u = Fraction(2) ** (max(e, -126) - 7)
        t = (a // u) * u
        f = (a - t) / u * (1 << 16)
        assert f.denominator == 1
        mag = t + u if f + r16 >= (1 << 16) else t
        if mag > max_bf16:
            mag = max_bf16 if satfinite else math.inf
    if neg and relu:
        return 0
    bits = 0x7F80 if mag == math.inf else bf16_bits_exact(mag)
    return bits | (0x8000 if neg else 0)


# --- IEEE sources and results ------------------------------------------------------------------

def f32_value(bits: int):
    """The exact value of f32 ``bits`` (Fraction, +-inf, NAN, or '-0')."""
    return _ieee_value(bits, 8, 23)


def f16_value(bits: int):
    return _ieee_value(bits, 5, 10)


def bf16_value(bits: int):
    return _ieee_value(bits, 8, 7)


def _ieee_value(bits: int, ebits: int, mbits: int):
    sign = (bits >> (ebits + mbits)) & 1
    e = (bits >> mbits) & ((1 << ebits) - 1)
    m = bits & ((1 << mbits) - 1)
    bias = (1 << (ebits - 1)) - 1
    if e == (1 << ebits) - 1:
        return NAN if m else (-math.inf if sign else math.inf)
    if e == 0 and m == 0:
        return "-0" if sign else Fraction(0)
    v = Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias) if e == 0 else \
        (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)
    return -v if sign else v


def f16_bits_exact(v) -> int:
    """f16 bits of a value known to be exactly representable (NAN -> canonical 0x7FFF)."""
    if v == NAN:
        return 0x7FFF
    if v == "-0":
        return 0x8000
    if isinstance(v, float):
        return 0x7C00 if v > 0 else 0xFC00
    got = struct.unpack("<H", struct.pack("<e", float(v)))[0]
    assert f16_value(got) == v, (v, hex(got))
    return got


def bf16_bits_exact(v) -> int:
    if v == NAN:
        return 0x7FFF
    got = struct.unpack("<I", struct.pack("<f", float(v)))[0]
    assert got & 0xFFFF == 0 and bf16_value(got >> 16) == v, v
    return got >> 16


def to_half(fmt: str, code: int, relu: bool = False) -> int:
    """cvt.rn{.relu}.f16x2.<fmt>x2 on one element (e2m3/e3m2: the two padding bits ignored)."""
    f = FORMATS[fmt]
    v = decode(fmt, code & ((1 << f.width) - 1))
    sign = _split(f, code)[0]
    if v == NAN:
        return 0x7FFF
    if relu and (sign or (not isinstance(v, float) and v < 0)):
        return 0
    if v == 0 and sign:
        return 0x8000
    return f16_bits_exact(v)


def ue8m0_to_bf16(code: int) -> int:
    """cvt.rn.bf16x2.ue8m0x2 on one element."""
    return bf16_bits_exact(decode("ue8m0", code))


# --- cvt.pack (PTX ISA 9.0 §9.7.9.22) ----------------------------------------------------------

PACK_RANGE = {"u2": (0, 3), "s2": (-2, 1), "u4": (0, 15), "s4": (-8, 7), "u8": (0, 255), "s8": (-128, 127),
              "u16": (0, 65535), "s16": (-32768, 32767)}


def cvt_pack(conv: str, a: int, b: int, c: int = 0) -> int:
    """``cvt.pack.sat.conv.s32{.b32} d, a, b{, c}``: a and b (signed 32-bit) clamped to conv's range,
    b in the lowest ``size`` bits of d, a above it, then c's low bits above both (8-bit and smaller
    types; the 16-bit forms have no c)."""
    lo, hi = PACK_RANGE[conv]
    size = int(conv[1:])

    def sat(v: int) -> int:
        v = v - (1 << 32) if v & 0x80000000 else v
        return min(max(v, lo), hi) & ((1 << size) - 1)

    d = (sat(a) << size) | sat(b)
    if size < 16:
        d |= (c << (2 * size)) & 0xFFFFFFFF
    return d & 0xFFFFFFFF
