"""The narrow floating-point formats of PTX (ISA 9.0 §5.2.5 "Alternate floating-point data
formats") and the cvt conversions to and from them (§9.7.9.21), vectorized.

Public API (also what tensor-core code decoding fp8/fp6/fp4 operands uses):

* ``FORMATS[name]`` -> :class:`NarrowFormat` (``e4m3 e5m2 e2m3 e3m2 e2m1 ue8m0``);
* ``decode(codes, fmt)`` -> float64 values (NaN, +-inf where the format has them);
* ``encode(values, fmt, rnd, relu=, satfinite=)`` -> uint8 codes, from exact float64 values;
* ``to_f16_bits(codes, fmt, relu=)``, ``ue8m0_to_bf16_bits(codes)`` -> uint16 bits;
* ``bf16_rs(f32_bits, rbits16, relu=, satfinite=)`` -> uint16 bits (``cvt.rs`` to bf16).

Rules the ISA leaves to the formats' definitions, and where this follows the CUDA 13 headers'
host code (cuda_fp4.hpp, cuda_fp6.hpp, cuda_fp8.hpp), said where they apply: NaN into a format
without NaN (e2m3/e3m2/e2m1) gives +MAX_NORM; ue8m0 converts the magnitude (the sign is
dropped), and an infinity or a value rounded above 2^127 gives 0xFF (NaN, there is no
infinity) or, with .satfinite, 0xFE.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class NarrowFormat:
    name: str
    ebits: int
    mbits: int
    bias: int
    signed: bool = True

    @property
    def width(self) -> int:
        return self.ebits + self.mbits + int(self.signed)

    @property
    def sign_bit(self) -> int:
        return 1 << (self.ebits + self.mbits) if self.signed else 0

    @property
    def nan_code(self) -> int | None:
        """The NaN a conversion writes (None: the format has no NaN)."""
        return {"e4m3": 0x7F, "e5m2": 0x7F, "ue8m0": 0xFF}.get(self.name)

    @cached_property
    def values(self) -> np.ndarray:
        """float64 value of every code 0 .. 2^width - 1, from the fields' definition."""
        codes = np.arange(1 << self.width)
        body = codes & ((1 << (self.ebits + self.mbits)) - 1)
        e, m = body >> self.mbits, body & ((1 << self.mbits) - 1)
        frac = m / float(1 << self.mbits)
        mag = np.where(e == 0, frac * 2.0 ** (1 - self.bias), (1.0 + frac) * np.exp2(e - self.bias))
        if self.name == "ue8m0":
            mag = np.exp2(e - self.bias)
        top = (1 << self.ebits) - 1
        if self.name == "e4m3":
            mag = np.where((e == top) & (m == (1 << self.mbits) - 1), np.nan, mag)
        elif self.name == "e5m2":
            mag = np.where(e == top, np.where(m == 0, np.inf, np.nan), mag)
        elif self.name == "ue8m0":
            mag = np.where(e == top, np.nan, mag)
        neg = (codes & self.sign_bit) != 0
        return np.where(neg, -mag, mag)

    @cached_property
    def max_code(self) -> int:
        """Code of the largest finite value (MAX_NORM)."""
        v = self.values[: 1 << (self.ebits + self.mbits)]
        return int(np.nanargmax(np.where(np.isinf(v), np.nan, v)))


FORMATS = {f.name: f for f in (NarrowFormat("e4m3", 4, 3, 7), NarrowFormat("e5m2", 5, 2, 15),
                               NarrowFormat("e2m3", 2, 3, 1), NarrowFormat("e3m2", 3, 2, 3),
                               NarrowFormat("e2m1", 2, 1, 1), NarrowFormat("ue8m0", 8, 0, 127, False))}


def fmt_of(type_name: str) -> NarrowFormat:
    """'e4m3x2' / 'e2m1x4' / 'e5m2' -> its element format."""
    return FORMATS[type_name.split("x")[0]]


def decode(codes, fmt: str | NarrowFormat) -> np.ndarray:
    """The float64 value of each code (the bits above the format's width are ignored)."""
    f = fmt if isinstance(fmt, NarrowFormat) else FORMATS[fmt]
    c = np.asarray(codes).astype(np.int64) & ((1 << f.width) - 1)
    return f.values[c]


def encode(values, fmt: str | NarrowFormat, rnd: str = "rn", *, relu: bool = False,
           satfinite: bool = True) -> np.ndarray:
    """cvt of exact float64 values to ``fmt`` codes (uint8).  e-formats: ``rn``/``rz`` with
    saturation to MAX_NORM (every cvt to them requires .satfinite); ue8m0: ``rz``/``rp``."""
    f = fmt if isinstance(fmt, NarrowFormat) else FORMATS[fmt]
    x = np.asarray(values, dtype=np.float64)
    if f.name == "ue8m0":
        return _encode_ue8m0(x, rnd, satfinite)
    if not satfinite:
        raise ValueError(f"cvt to .{f.name} requires .satfinite")
    nan = np.isnan(x)
    neg = np.signbit(x) & ~nan
    a = np.where(nan, 0.0, np.abs(x))
    mags = f.values[: f.max_code + 1]                   # codes 0..MAX_NORM ascend with value
    lo = np.clip(np.searchsorted(mags, a, side="right") - 1, 0, f.max_code)
    if rnd == "rn":
        hi = np.minimum(lo + 1, f.max_code)
        mid = (mags[lo] + mags[hi]) / 2.0               # exact: both have few significant bits
        up = (a > mid) | ((a == mid) & (lo % 2 == 1))
        code = np.where((hi > lo) & up, hi, lo)
    elif rnd == "rz":
        code = lo
    else:
        raise ValueError(f"rounding .{rnd} does not convert to .{f.name}")
    code = np.where(a > mags[-1], f.max_code, code)      # .satfinite (infinity included)
    code = np.where(neg, code | f.sign_bit, code)
    if relu:
        code = np.where(neg, 0, code)
    nan_code = f.nan_code if f.nan_code is not None else f.max_code
    return np.where(nan, nan_code, code).astype(np.uint8)


def _encode_ue8m0(x: np.ndarray, rnd: str, satfinite: bool) -> np.ndarray:
    """2^(code-127) of |x|: rz the largest at or below (code 0 when none), rp the smallest at or
    above; above 2^127 (infinity too) is 0xFF, or 0xFE with .satfinite; NaN is 0xFF."""
    nan = np.isnan(x)
    a = np.where(nan, 0.0, np.abs(x))
    inf = np.isinf(a)
    m, e = np.frexp(np.where(inf | (a == 0), 1.0, a))   # a = m * 2^e, 0.5 <= m < 1
    floor_log2 = e.astype(np.int64) - 1
    if rnd == "rz":
        code = floor_log2 + 127
    elif rnd == "rp":
        code = floor_log2 + 127 + (m != 0.5)
    else:
        raise ValueError(f"rounding .{rnd} does not convert to .ue8m0")
    code = np.where(a == 0, 0, np.maximum(code, 0))
    over = inf | (code > 254)
    code = np.where(over, 0xFE if satfinite else 0xFF, code)
    return np.where(nan, 0xFF, code).astype(np.uint8)


def to_f16_bits(codes, fmt: str | NarrowFormat, *, relu: bool = False) -> np.ndarray:
    """cvt.rn{.relu}.f16x2.<fmt>x2 per element: exact; NaN -> 0x7FFF; .relu: negatives, -0 -> +0."""
    f = fmt if isinstance(fmt, NarrowFormat) else FORMATS[fmt]
    v = decode(codes, f)
    if relu:
        v = np.where(np.signbit(v) & ~np.isnan(v), 0.0, v)
    bits = v.astype(np.float16).view(np.uint16)          # every narrow value is an f16 value
    return np.where(np.isnan(v), np.uint16(0x7FFF), bits).astype(np.uint16)


def ue8m0_to_bf16_bits(codes) -> np.ndarray:
    """cvt.rn.bf16x2.ue8m0x2 per element: 2^(code-127) exactly (code 0 is the bf16 subnormal
    2^-127), 0xFF (NaN) -> 0x7FFF."""
    v = decode(codes, "ue8m0")
    bits = (v.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return np.where(np.isnan(v), np.uint16(0x7FFF), bits).astype(np.uint16)


def bf16_rs(f32_bits, rbits, *, relu: bool = False, satfinite: bool = False) -> np.ndarray:
    """``cvt.rs{.relu}{.satfinite}.bf16x2.f32`` per element (PTX ISA 9.0 §9.7.9.21): the 16 random
    bits are added to the 16 discarded bits of the f32 magnitude and the carry out rounds away
    from zero.  bf16 shares f32's exponent range, so exactly 16 bits are discarded for every
    finite input (subnormals too); a carry can reach infinity, which .satfinite (like an
    infinite input) turns into MAX_NORM 0x7F7F.  NaN -> 0x7FFF."""
    u = np.asarray(f32_bits).astype(np.uint32)
    r = np.asarray(rbits).astype(np.uint32) & np.uint32(0xFFFF)
    sign = (u >> np.uint32(16)) & np.uint32(0x8000)
    mag = u & np.uint32(0x7FFFFFFF)
    nan = mag > np.uint32(0x7F800000)
    carry = ((mag & np.uint32(0xFFFF)) + r) >> np.uint32(16)
    res = np.where(mag == np.uint32(0x7F800000), np.uint32(0x7F80), (mag >> np.uint32(16)) + carry)
    if satfinite:
        res = np.minimum(res, np.uint32(0x7F7F))
    out = sign | res
    if relu:
        out = np.where(sign != 0, np.uint32(0), out)
    return np.where(nan, np.uint32(0x7FFF), out).astype(np.uint16)
