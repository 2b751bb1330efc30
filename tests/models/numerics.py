"""Exact reference models of PTX f32/f64 arithmetic (rounding from Fractions, PTX ISA 9.7.3) and edge-value tables."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

from hypothesis import strategies as st

from models.intops import mask, type_bits

INF, NAN = math.inf, math.nan


def f32_from_bits(u):
    return struct.unpack("<f", struct.pack("<I", u & 0xFFFFFFFF))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_from_bits(u):
    return struct.unpack("<d", struct.pack("<Q", u & 0xFFFFFFFFFFFFFFFF))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


FMT = {"f32": (24, -126, 127), "f64": (53, -1022, 1023)}


def pow2(e):
    return Fraction(2) ** e if e >= 0 else Fraction(1, 2 ** -e)


def floor_log2(x: Fraction) -> int:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    while pow2(e) > x:
        e -= 1
    while pow2(e + 1) <= x:
        e += 1
    return e


def max_finite(fmt):
    p, _, emax = FMT[fmt]
    return float((2 ** p - 1) * pow2(emax - p + 1))


def round_exact(x: Fraction, fmt: str, mode: str) -> float:
    """Round a nonzero exact rational to the format (result as a Python float)."""
    p, emin, emax = FMT[fmt]
    sign = -1 if x < 0 else 1
    ax = abs(x)
    q = pow2(max(floor_log2(ax), emin) - (p - 1))
    scaled = ax / q
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if mode == "rn":
        if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
            n += 1
    elif mode == "rm":
        n += sign < 0 and rem > 0
    elif mode == "rp":
        n += sign > 0 and rem > 0
    val = n * q
    if val >= pow2(emax + 1):
        big = {"rn": True, "rz": False, "rm": sign < 0, "rp": sign > 0}[mode]
        return sign * (INF if big else max_finite(fmt))
    return sign * float(val)


def flush(x, fmt, ftz):
    if ftz and fmt == "f32" and x != 0 and math.isfinite(x) and abs(x) < 2.0 ** -126:
        return math.copysign(0.0, x)
    return x


def neg(x):
    return math.copysign(1.0, x) < 0


def m_add(a, b, fmt, mode):
    if math.isnan(a) or math.isnan(b):
        return NAN
    if math.isinf(a) or math.isinf(b):
        if math.isinf(a) and math.isinf(b) and neg(a) != neg(b):
            return NAN
        return a if math.isinf(a) else b
    x = Fraction(a) + Fraction(b)
    if x == 0:
        if a == 0 and b == 0 and neg(a) == neg(b):
            return a
        return -0.0 if mode == "rm" else 0.0
    return round_exact(x, fmt, mode)


def m_mul(a, b, fmt, mode):
    if math.isnan(a) or math.isnan(b):
        return NAN
    s = -1.0 if neg(a) != neg(b) else 1.0
    if math.isinf(a) or math.isinf(b):
        return NAN if (a == 0 or b == 0) else s * INF
    if a == 0 or b == 0:
        return s * 0.0
    return round_exact(Fraction(a) * Fraction(b), fmt, mode)


def m_fma(a, b, c, fmt, mode):
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return NAN
    s = -1.0 if neg(a) != neg(b) else 1.0
    if math.isinf(a) or math.isinf(b):
        if a == 0 or b == 0:
            return NAN
        if math.isinf(c) and neg(c) != (s < 0):
            return NAN
        return s * INF
    if math.isinf(c):
        return c
    x = Fraction(a) * Fraction(b) + Fraction(c)
    if x == 0:
        if (a == 0 or b == 0) and c == 0:
            if (s < 0) == neg(c):
                return c
        return -0.0 if mode == "rm" else 0.0
    return round_exact(x, fmt, mode)


def m_div(a, b, fmt, mode):
    if math.isnan(a) or math.isnan(b):
        return NAN
    s = -1.0 if neg(a) != neg(b) else 1.0
    if (math.isinf(a) and math.isinf(b)) or (a == 0 and b == 0):
        return NAN
    if math.isinf(a) or b == 0:
        return s * INF
    if math.isinf(b) or a == 0:
        return s * 0.0
    return round_exact(Fraction(a) / Fraction(b), fmt, mode)


def m_sqrt(a, fmt, mode):
    if math.isnan(a) or (a < 0):
        return NAN
    if a == 0 or math.isinf(a):
        return a
    p, emin, _ = FMT[fmt]
    x = Fraction(a)
    e = floor_log2(x) // 2  # floor(log2(sqrt(x)))
    qe = max(e, emin) - (p - 1)
    y = x / pow2(2 * qe)  # sqrt(x) = sqrt(y) * 2**qe
    n = math.isqrt(y.numerator // y.denominator)
    exact = y == n * n
    if mode == "rn":
        mid = Fraction(n * n + n) + Fraction(1, 4)
        if y > mid or (y == mid and n % 2 == 1):
            n += 1
    elif mode == "rp" and not exact:
        n += 1
    return float(n * pow2(qe))


def sat(x):
    if math.isnan(x) or x <= 0:
        return 0.0
    return min(x, 1.0)


MIN_SUB32, MAX_SUB32 = f32_from_bits(1), f32_from_bits(0x007FFFFF)


MIN_NORM32, MAX32 = f32_from_bits(0x00800000), f32_from_bits(0x7F7FFFFF)


EDGE32 = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, 2.0, 3.0, MIN_SUB32, -MIN_SUB32, MAX_SUB32,
          -MAX_SUB32, MIN_NORM32, -MIN_NORM32, MAX32, -MAX32, 1.0 + 2.0 ** -23, 1.0 - 2.0 ** -24,
          2.0 ** -24, 2.0 ** -149 * 3, 2.0 ** 127, 16777217.0 - 1, 2.0 ** 24 + 2]


EDGE64 = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, 3.0, 5e-324, -5e-324, 2.0 ** -1022,
          -(2.0 ** -1022), 2.0 ** -1022 - 5e-324, 1.7976931348623157e308, -1.7976931348623157e308,
          1.0 + 2.0 ** -52, 1.0 - 2.0 ** -53, 2.0 ** -53, 2.0 ** 1023, 2.0 ** -537, 1e-300, 1e300]


def _near(bits_of, from_bits, ebits, mbits, total):
    """Values whose exponent is close to a given one (exercises ties, cancellation)."""
    def make(t):
        base, de, mant, sgn = t
        e = (base >> mbits) & ((1 << ebits) - 1)
        e = min(max(e + de, 0), (1 << ebits) - 2)
        return from_bits((sgn << (total - 1)) | (e << mbits) | mant)
    return make


f32s = st.one_of(st.sampled_from(EDGE32), st.integers(0, 2**32 - 1).map(f32_from_bits),
                 st.floats(width=32, allow_subnormal=True))


f32_pair = st.one_of(
    st.tuples(f32s, f32s),
    st.tuples(st.integers(0, 2**32 - 1), st.integers(-26, 26), st.integers(0, 2**23 - 1),
              st.integers(0, 1)).map(lambda t: (f32_from_bits(t[0]),
                                                _near(None, f32_from_bits, 8, 23, 32)(t))),
)


f64s = st.one_of(st.sampled_from(EDGE64), st.integers(0, 2**64 - 1).map(f64_from_bits),
                 st.floats(allow_subnormal=True))


f64_pair = st.one_of(
    st.tuples(f64s, f64s),
    st.tuples(st.integers(0, 2**64 - 1), st.integers(-55, 55), st.integers(0, 2**52 - 1),
              st.integers(0, 1)).map(lambda t: (f64_from_bits(t[0]),
                                                _near(None, f64_from_bits, 11, 52, 64)(t))),
)


def m_minmax(a, b, is_min, nan_mod):
    an, bn = math.isnan(a), math.isnan(b)
    if an or bn:
        if nan_mod or (an and bn):
            return NAN
        return b if an else a
    if a == b:
        return (a if neg(a) else b) if is_min else (a if not neg(a) else b)
    return min(a, b) if is_min else max(a, b)


CMP = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b and not (math.isnan(a) or math.isnan(b)),
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
}


def m_cmp(a, b, op):
    un = math.isnan(a) or math.isnan(b)
    if op == "num":
        return not un
    if op == "nan":
        return un
    if op.endswith("u"):
        return un or CMP[op[:-1]](a, b)
    return (not un) and CMP[op](a, b)


def ulp32(x):
    x = abs(x)
    if x < 2.0 ** -126:
        return 2.0 ** -149
    return 2.0 ** (math.frexp(x)[1] - 24)


F32_EDGE_BITS = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA12345,
                 0xFFFFFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF,
                 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x40000000, 0x3F000000, 0x33800000,
                 0x4B800001, 0x4B000001, 0x34000000, 0x00400000, 0x3FC00000, 0xC0400000]


F64_EDGE_BITS = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
                 0x7FF0000000000001, 0x7FF4000000000123, 0xFFF8DEADBEEF0001, 0x0000000000000001,
                 0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
                 0xFFEFFFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000, 0x3FF0000000000001,
                 0x3FEFFFFFFFFFFFFF, 0x4000000000000000, 0x3FE0000000000000, 0x3CA0000000000000,
                 0x4340000000000001, 0x0008000000000000, 0x3FF8000000000000, 0xC008000000000000]


def fval(bits, t):
    return f32_from_bits(bits) if t == "f32" else f64_from_bits(bits)


def ftz_in(bits, t, ftz):
    return flush(fval(bits, t), t, ftz)


IRND_MODEL = {"rni": lambda q: round(q), "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}


def m_f2i(bits, src, dst, irnd, ftz):
    x = ftz_in(bits, src, ftz)
    w = type_bits(dst)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dst[0] == "s" else (0, mask(w))
    if math.isnan(x):
        return 0
    if math.isinf(x):
        v = hi if x > 0 else lo
    else:
        v = max(lo, min(hi, IRND_MODEL[irnd](Fraction(x))))
    return v & mask(w)
