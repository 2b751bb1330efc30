"""Bit-exact PTX half precision (``f16``, ``bf16`` and packed ``x2``) semantics.

Scalars are held in ``uint16`` arrays of raw bits, packed ``.f16x2`` /
``.bf16x2`` values in ``uint32`` with element 0 in the **low** half (PTX ISA
9.0, 5.2.x "Packed Data Types").  Every function is vectorised over threads;
type arguments are the PTX type names ``"f16" "f16x2" "bf16" "bf16x2"``.

Rounding, once, from exact values
---------------------------------
All results are produced by :func:`_round_pack`, which rounds an *exact*
value ``(-1)^neg * m * 2^e`` (integer ``m``) to the destination format in
any of ``rn rz rm rp rna`` with integer arithmetic: no host FPU rounding mode
is involved and there is exactly one rounding.

The exact values come from float64:

* ``a*b`` of two f16 (11-bit) or bf16 (8-bit) significands has at most 22
  bits and an exponent inside float64's normal range, so float64 holds it
  exactly.
* Sums (``add``, ``sub``, the addition of ``fma``) are computed as
  ``s = fl64(x + y)`` plus the exact error ``t = (x + y) - s`` of Knuth's
  TwoSum (error-free in round-to-nearest barring overflow, which cannot occur
  for these magnitudes).  The pair ``(s, t)`` is rounded as ``s`` with a
  sticky tail: ``m -> 4m +- 1`` at ``e - 2`` when ``t != 0``.  That is exact
  because every rounding boundary of a <= 24-bit format near ``s`` lies on
  ``s``'s 53-bit grid, at least one float64 ulp from ``s`` unless it *is*
  ``s``, while ``|t| <= ulp(s)/2``: ``s + t`` and ``s +- ulp/4`` lie on the
  same side of every boundary.

Why computing in f32 and rounding again would also be exact for ``add sub
mul div sqrt``: for a basic operation whose operands are p-bit floats,
rounding first to p' >= 2p + 2 bits and then to p bits equals rounding once
(Figueroa, "When is double rounding innocuous?", 1995): 24 >= 2*11 + 2 for
f16 and 24 >= 2*8 + 2 for bf16.  That theorem does **not** cover ``fma``
(``a*b + c`` is not a basic operation on p-bit operands: the exact sum can
need ~80 bits and f32 rounding can create a false tie), which is why this
module never double-rounds and keeps the TwoSum tail instead.

Implementation choices (ISA leaves them open or is terse)
---------------------------------------------------------
* NaN results are the canonical NaN ``0x7FFF`` for f16 and bf16 (and
  ``0x7FFFFFFF``/``0x7FFFFFFFFFFFFFFF`` for f32/f64 results of
  conversions); no NaN payload is propagated (the canonical NaN is what
  the ISA names for ``.NaN`` min/max and ``.relu``; we use it throughout).
* ``.ftz`` flushes subnormal inputs and subnormal (after rounding) results
  to sign-preserving zero.
* ``.sat`` clamps to ``[+0.0, 1.0]``; NaN and ``-0.0`` give ``+0.0``.
* ``.relu`` (``fma.relu``, ``cvt.relu``) maps negative results and ``-0.0``
  to ``+0.0``; NaN stays (canonical) NaN.
* ``min``/``max`` order ``-0.0 < +0.0``.
* ``.approx`` (``ex2``, ``tanh``) return the correctly rounded value (float64
  evaluation rounded once), inside the ISA bounds (ex2.f16 2^-9.9, ex2.bf16
  2^-7, tanh.f16 2^-10.987, tanh.bf16 2^-8 relative error).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .intops import _bitlen, to_unsigned, type_info

__all__ = [
    "BF16",
    "F16",
    "F32",
    "abs_",
    "add",
    "cvt_x2_f32",
    "ex2_approx",
    "f32_to_half",
    "f64_to_half",
    "fma",
    "half_rint",
    "half_to_f32",
    "half_to_f64",
    "half_to_half",
    "half_to_int",
    "int_to_half",
    "max_",
    "min_",
    "mul",
    "neg",
    "pack_x2",
    "setp",
    "sub",
    "tanh_approx",
    "unpack_x2",
]

_U64 = np.uint64


@dataclass(frozen=True)
class Fmt:
    """A binary floating-point storage format."""
    name: str
    p: int        # significand bits including the hidden bit
    ebits: int    # exponent field bits

    @property
    def nbits(self) -> int:
        return 1 + self.ebits + self.p - 1

    @property
    def bias(self) -> int:
        return (1 << (self.ebits - 1)) - 1

    @property
    def qmin(self) -> int:
        """Exponent of the smallest subnormal (the quantum at the bottom)."""
        return 1 - self.bias - (self.p - 1)

    @property
    def inf_bits(self) -> int:
        return ((1 << self.ebits) - 1) << (self.p - 1)

    @property
    def max_bits(self) -> int:
        return self.inf_bits - 1

    @property
    def nan_bits(self) -> int:
        return (1 << (self.nbits - 1)) - 1      # 0x7FFF / 0x7FFFFFFF

    @property
    def dtype(self):
        return {16: np.uint16, 32: np.uint32}[self.nbits]


F16 = Fmt("f16", 11, 5)
BF16 = Fmt("bf16", 8, 8)
F32 = Fmt("f32", 24, 8)
_FMTS = {"f16": F16, "bf16": BF16, "f32": F32}
_RNDS = ("rn", "rz", "rm", "rp", "rna")


def _fmt(t: str) -> tuple[Fmt, bool]:
    """``(format, packed)`` for a half type name."""
    t = t.lstrip(".")
    packed = t.endswith("x2")
    try:
        return _FMTS[t[:-2] if packed else t], packed
    except KeyError:
        raise ValueError(f"not a half-precision type: {t!r}") from None


# ---------------------------------------------------------------------------
# the one rounding routine
# ---------------------------------------------------------------------------

def _round_pack(neg, m, e, fmt: Fmt, rnd: str = "rn", satfinite: bool = False,
                ftz: bool = False) -> np.ndarray:
    """Round ``(-1)^neg * m * 2^e`` (``m`` uint64 >= 0, ``e`` int64) to
    ``fmt`` with rounding mode ``rnd`` and return the bits.  Overflow gives
    inf or the largest finite value as IEEE 754 prescribes for the mode
    (always the largest finite value with ``satfinite``)."""
    if rnd not in _RNDS:
        raise ValueError(f"bad rounding mode {rnd!r}")
    neg, m, e = np.broadcast_arrays(np.asarray(neg, bool), to_unsigned(m, 64),
                                    np.asarray(e, np.int64))
    p = fmt.p
    L = _bitlen(m)
    E = e + L - 1
    q = np.maximum(E - (p - 1), fmt.qmin)
    s = q - e
    # s <= 0: exact, left-align.
    k_exact = m << np.clip(-s, 0, 63).astype(np.uint64)
    # s > 0: drop s low bits.
    big = s > 64
    sr = np.clip(s, 1, 64)
    sh = np.minimum(sr, 63).astype(np.uint64)
    k = np.where(sr >= 64, _U64(0), m >> sh)
    low = np.where(sr >= 64, ~_U64(0), (_U64(1) << sh) - _U64(1))
    r = np.where(big, m, m & low)
    half = _U64(1) << (sr - 1).astype(np.uint64)
    gt = ~big & (r > half)
    eq = ~big & (r == half)
    nz = r != 0
    if rnd == "rn":
        up = gt | (eq & ((k & _U64(1)) == 1))
    elif rnd == "rna":
        up = gt | eq
    elif rnd == "rz":
        up = np.zeros(m.shape, bool)
    elif rnd == "rm":
        up = neg & nz
    else:  # rp
        up = ~neg & nz
    k = np.where(s <= 0, k_exact, k + up.astype(np.uint64)).astype(np.int64)
    mag = ((q - fmt.qmin) << (p - 1)) + k
    mag = np.where(m == 0, 0, mag)
    if ftz:
        mag = np.where(mag < (1 << (p - 1)), 0, mag)
    if satfinite:
        to_inf = np.zeros(m.shape, bool)
    elif rnd in ("rn", "rna"):
        to_inf = np.ones(m.shape, bool)
    elif rnd == "rz":
        to_inf = np.zeros(m.shape, bool)
    elif rnd == "rm":
        to_inf = neg
    else:
        to_inf = ~neg
    mag = np.where(mag >= fmt.inf_bits, np.where(to_inf, fmt.inf_bits, fmt.max_bits), mag)
    out = mag | (neg.astype(np.int64) << (fmt.nbits - 1))
    return out.astype(fmt.dtype)


def _decode64(x):
    """float64 array -> (neg, m uint64, e int64) of its finite value."""
    b = np.atleast_1d(np.asarray(x, np.float64)).view(np.uint64)
    neg = (b >> _U64(63)) == 1
    ef = ((b >> _U64(52)) & _U64(0x7FF)).astype(np.int64)
    frac = b & _U64((1 << 52) - 1)
    m = np.where(ef == 0, frac, frac | _U64(1 << 52))
    e = np.where(ef == 0, -1074, ef - 1075)
    return neg, m, e


def _two_sum(x, y):
    with np.errstate(invalid="ignore", over="ignore"):
        s = x + y
        bb = s - x
        t = (x - (s - bb)) + (y - bb)
    return s, np.where(np.isfinite(s), t, 0.0)


def _round_f64(s, fmt: Fmt, rnd: str = "rn", tail=None, *, satfinite=False,
               ftz=False, sat=False, relu=False):
    """Round ``s + tail`` (float64 arrays; ``tail`` the exact error, or None)
    to ``fmt``; NaN -> canonical NaN; +-inf -> +-inf (+-max with
    satfinite); then the ``.sat``/``.relu`` clamps."""
    s = np.atleast_1d(np.asarray(s, np.float64))
    neg, m, e = _decode64(s)
    if tail is not None:
        tail = np.asarray(tail, np.float64)
        adj = np.where(tail == 0, 0, np.where((tail < 0) == neg, 1, -1))
        m = (m << _U64(2)) + adj.astype(np.int64).astype(np.uint64)   # wraps for -1: fine
        e = e - 2
    out = _round_pack(neg, m, e, fmt, rnd, satfinite=satfinite, ftz=ftz).astype(np.int64)
    sign = neg.astype(np.int64) << (fmt.nbits - 1)
    inf = fmt.max_bits if satfinite else fmt.inf_bits
    out = np.where(np.isinf(s), sign | inf, out)
    isnan = np.isnan(s)
    out = np.where(isnan, fmt.nan_bits, out)
    if sat:
        mag = out & ((1 << (fmt.nbits - 1)) - 1)
        one = fmt.bias << (fmt.p - 1)
        negv = (out >> (fmt.nbits - 1)) == 1
        out = np.where(isnan | negv, 0, np.where(mag > one, one, out))
    if relu:
        negv = (out >> (fmt.nbits - 1)) == 1
        out = np.where(~isnan & negv, 0, out)
    return out.astype(fmt.dtype)


# ---------------------------------------------------------------------------
# decoding / packing helpers
# ---------------------------------------------------------------------------

def _to_f64(h, fmt: Fmt, ftz: bool = False):
    """Exact float64 value of half bits (after optional input flush)."""
    h = to_unsigned(h, 16)
    if ftz:
        h = _flush_in(h, fmt)
    with np.errstate(invalid="ignore"):          # signalling NaNs: no warning
        if fmt is F16:
            return h.view(np.float16).astype(np.float64)
        return (h.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _flush_in(h, fmt: Fmt):
    """Flush subnormal half inputs to sign-preserving zero."""
    h = to_unsigned(h, 16)
    expf = (h >> np.uint16(fmt.p - 1)) & np.uint16((1 << fmt.ebits) - 1)
    return np.where(expf == 0, h & np.uint16(0x8000), h)


def unpack_x2(x):
    """Split packed ``x2`` bits into ``(element0 = low, element1 = high)``."""
    x = to_unsigned(x, 32)
    return (x & np.uint32(0xFFFF)).astype(np.uint16), (x >> np.uint32(16)).astype(np.uint16)


def pack_x2(lo, hi):
    """Pack two uint16 arrays, ``lo`` in bits 15..0 and ``hi`` in 31..16."""
    return to_unsigned(lo, 16).astype(np.uint32) | (to_unsigned(hi, 16).astype(np.uint32) << np.uint32(16))


def _elementwise(fn, t, *ops):
    """Apply ``fn(fmt, *uint16 operands)`` to a scalar or per half of x2."""
    fmt, packed = _fmt(t)
    if not packed:
        return fn(fmt, *[to_unsigned(o, 16) for o in ops])
    halves = [unpack_x2(o) for o in ops]
    lo = fn(fmt, *[h[0] for h in halves])
    hi = fn(fmt, *[h[1] for h in halves])
    if isinstance(lo, tuple) or lo.dtype == bool:
        return lo, hi
    return pack_x2(lo, hi)


# ---------------------------------------------------------------------------
# conversions (9.7.9.21 cvt)
# ---------------------------------------------------------------------------

_IRND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _integral_first(v, rnd):
    """``.rni/.rzi/.rmi/.rpi`` on a float -> float cvt: round the exact source
    value ``v`` (float64) to an integral value, then convert that to nearest
    (``"rn"``); other modes pass through.  (The ISA defines integer rounding for
    same-size float conversions; on the others ptxvm gives it this meaning, as
    it does for ``cvt.rni.f32.f64``.)  Signs of zero, infinities and NaN stay."""
    if rnd in _IRND:
        with np.errstate(invalid="ignore"):
            return _IRND[rnd](v), "rn"
    return v, rnd


def f32_to_half(a, fmt: str = "f16", rnd: str = "rn", *, ftz: bool = False,
                sat: bool = False, relu: bool = False, satfinite: bool = False):
    """``cvt.frnd{.relu}{.satfinite}.{f16,bf16}.f32 d, a`` and the general
    ``cvt{.frnd|.irnd}{.ftz}{.sat}.f16.f32`` (9.7.9.21).  ``a``: f32 bits
    (uint32).  ``.ftz`` flushes an f32 subnormal *input* (it applies to f32
    operands only).  ``rnd`` may be an integer rounding (see
    :func:`_integral_first`).  Returns uint16 bits."""
    x = to_unsigned(a, 32)
    if ftz:
        x = np.where((x & np.uint32(0x7F800000)) == 0, x & np.uint32(0x80000000), x)
    with np.errstate(invalid="ignore"):
        v = x.view(np.float32).astype(np.float64)
    v, rnd = _integral_first(v, rnd)
    return _round_f64(v, _fmt(fmt)[0], rnd, satfinite=satfinite, sat=sat, relu=relu)


def f64_to_half(a, fmt: str = "f16", rnd: str = "rn", *, sat: bool = False,
                relu: bool = False, satfinite: bool = False):
    """``cvt.frnd{.relu}{.satfinite}{.sat}.{f16,bf16}.f64 d, a`` (9.7.9.21):
    ``a`` f64 bits (uint64), rounded once (``rnd`` may be an integer rounding,
    see :func:`_integral_first`)."""
    v = to_unsigned(a, 64).view(np.float64)
    v, rnd = _integral_first(v, rnd)
    return _round_f64(v, _fmt(fmt)[0], rnd, satfinite=satfinite, sat=sat, relu=relu)


def cvt_x2_f32(a, b, fmt: str = "f16", rnd: str = "rn", *, relu: bool = False,
               satfinite: bool = False):
    """``cvt.frnd2{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b`` (9.7.9.21):
    "the value converted from input a is stored in the upper half of d and
    the value converted from input b is stored in the lower half":
    ``d[31:16] = cvt(a)``, ``d[15:0] = cvt(b)``."""
    f = fmt.removesuffix("x2")
    hi = f32_to_half(a, f, rnd, relu=relu, satfinite=satfinite)
    lo = f32_to_half(b, f, rnd, relu=relu, satfinite=satfinite)
    return pack_x2(lo, hi)


def _sat_wide(v):
    """``.sat`` on an f32/f64 result: clamp to [+0.0, 1.0]; NaN and -0.0 give +0.0."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(v) | (v <= 0), 0.0, np.minimum(v, 1.0)).astype(v.dtype)


def half_to_f32(h, fmt: str = "f16", rnd: str | None = None, *, ftz: bool = False,
                sat: bool = False):
    """``cvt{.irnd}{.ftz}{.sat}.f32.{f16,bf16} d, a`` (9.7.9.21): exact
    (after the optional integer rounding, see :func:`_integral_first`; a
    floating-point ``rnd`` changes nothing).  ``.ftz`` flushes a subnormal f32
    *result* (only bf16 has values that small); ``.sat`` clamps to [+0.0,
    1.0].  NaN -> 0x7FFFFFFF (0 with .sat).  Returns uint32 bits."""
    v, _ = _integral_first(_to_f64(h, _fmt(fmt)[0]), rnd)
    if ftz:
        v = np.where(np.abs(v) < 2.0 ** -126, np.copysign(0.0, v), v)
    if sat:
        v = _sat_wide(v)
    with np.errstate(invalid="ignore"):         # NaN (replaced below)
        v = v.astype(np.float32)
    return np.where(np.isnan(v), np.uint32(0x7FFFFFFF), v.view(np.uint32))


def half_to_f64(h, fmt: str = "f16", rnd: str | None = None, *, sat: bool = False):
    """``cvt{.irnd}{.sat}.f64.{f16,bf16} d, a`` (9.7.9.21): exact (after the
    optional integer rounding); ``.sat`` clamps to [+0.0, 1.0].  NaN ->
    canonical 0x7FFFFFFFFFFFFFFF (0 with .sat)."""
    v, _ = _integral_first(_to_f64(h, _fmt(fmt)[0]), rnd)
    if sat:
        v = _sat_wide(v)
    return np.where(np.isnan(v), _U64(0x7FFFFFFFFFFFFFFF), v.view(np.uint64))


def half_to_half(h, src: str, dst: str, rnd: str = "rn", *, sat: bool = False,
                 relu: bool = False, satfinite: bool = False):
    """``cvt{.frnd|.irnd}{.relu}{.satfinite}{.sat}.bf16.f16`` / ``.f16.bf16``
    and the same-type ``cvt.irnd.f16.f16`` / ``.bf16.bf16`` (9.7.9.21).  Via
    the exact float64 value, so one rounding ("via f32" gives the same: f16
    and bf16 both convert to f32 exactly); an integer rounding first rounds
    to an integral value (:func:`_integral_first`)."""
    v, rnd = _integral_first(_to_f64(h, _fmt(src)[0]), rnd)
    return _round_f64(v, _fmt(dst)[0], rnd, satfinite=satfinite, sat=sat, relu=relu)


def half_rint(h, fmt: str = "f16", irnd: str = "rni"):
    """``cvt.{rni,rzi,rmi,rpi}.f16.f16`` / ``.bf16.bf16``: round to an
    integral value in the same format (exact, canonical NaN)."""
    f = _fmt(fmt)[0]
    v = _to_f64(h, f)
    with np.errstate(invalid="ignore"):
        r = _IRND[irnd](v)
    return _round_f64(r, f, "rn")


def half_to_int(h, fmt: str, dtype: str, irnd: str = "rni", *, ftz: bool = False):
    """``cvt.irnd{.ftz}{.sat}.dtype.{f16,bf16} d, a`` (9.7.9.21).  Rounds to an
    integer per ``irnd`` (``rni`` ties to even), then saturates to the
    destination range (float-to-int cvt always saturates); NaN gives 0.
    Returns the unsigned bits of ``dtype``'s width."""
    f = _fmt(fmt)[0]
    v = _to_f64(h, f, ftz=ftz)
    with np.errstate(invalid="ignore"):
        r = _IRND[irnd](v)
    bits, signed = type_info(dtype)
    r = np.where(np.isnan(r), 0.0, r)
    udt = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    if signed:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        big = r >= 2.0 ** (bits - 1)
        small = r < -(2.0 ** (bits - 1))
        ri = np.where(big | small, 0.0, r).astype(np.int64)
        ri = np.where(big, hi, np.where(small, lo, ri))
        return ri.astype(udt)
    big = r >= 2.0 ** bits
    ru = np.where(big | (r < 0), 0.0, r).astype(np.uint64)
    ru = np.where(big, _U64((1 << bits) - 1), ru)
    return ru.astype(udt)


def int_to_half(a, atype: str, fmt: str = "f16", rnd: str = "rn", *, sat: bool = False):
    """``cvt.frnd{.sat}.{f16,bf16}.itype d, a`` (9.7.9.21): exact integer
    rounded once (integers beyond the range overflow per the mode)."""
    bits, signed = type_info(atype)
    u = to_unsigned(a, bits).astype(np.uint64)
    if signed:
        neg = (u >> _U64(bits - 1)) == 1
        mag = np.where(neg, (_U64(1) << _U64(bits)) - u if bits < 64 else _U64(0) - u, u)
    else:
        neg = np.zeros(u.shape, bool)
        mag = u
    f = _fmt(fmt)[0]
    out = _round_pack(neg, mag, np.zeros(u.shape, np.int64), f, rnd)
    if sat:
        v = _to_f64(out, f)
        out = _round_f64(v, f, "rn", sat=True)
    return out


# ---------------------------------------------------------------------------
# arithmetic (9.7.4.1 add, 9.7.4.2 sub, 9.7.4.3 mul, 9.7.4.4 fma, 9.7.4.5 neg,
# 9.7.4.6 abs, 9.7.4.7 min, 9.7.4.8 max, 9.7.4.9 tanh, 9.7.4.10 ex2)
# ---------------------------------------------------------------------------

def _arith(op, t, ftz, sat, relu, *ops):
    def one(fmt, *hs):
        if ftz and fmt is BF16:
            raise ValueError(".ftz is not defined for bf16 add/sub/mul/fma")
        vs = [_to_f64(h, fmt, ftz=ftz) for h in hs]
        with np.errstate(invalid="ignore", over="ignore"):
            if op == "add":
                s, tl = _two_sum(vs[0], vs[1])
            elif op == "sub":
                s, tl = _two_sum(vs[0], -vs[1])
            elif op == "mul":
                s, tl = vs[0] * vs[1], None          # exact in float64
            else:  # fma: a*b exact, one TwoSum
                s, tl = _two_sum(vs[0] * vs[1], vs[2])
        return _round_f64(s, fmt, "rn", tl, ftz=ftz, sat=sat, relu=relu)
    return _elementwise(one, t, *ops)


def add(a, b, t: str = "f16", *, ftz: bool = False, sat: bool = False):
    """``add{.rn}{.ftz}{.sat}.{f16,f16x2} d, a, b`` / ``add{.rn}.{bf16,bf16x2}``
    (9.7.4.1): exact sum rounded once to nearest-even."""
    return _arith("add", t, ftz, sat, False, a, b)


def sub(a, b, t: str = "f16", *, ftz: bool = False, sat: bool = False):
    """``sub{.rn}{.ftz}{.sat}`` half forms (9.7.4.2)."""
    return _arith("sub", t, ftz, sat, False, a, b)


def mul(a, b, t: str = "f16", *, ftz: bool = False, sat: bool = False):
    """``mul{.rn}{.ftz}{.sat}`` half forms (9.7.4.3)."""
    return _arith("mul", t, ftz, sat, False, a, b)


def fma(a, b, c, t: str = "f16", *, ftz: bool = False, sat: bool = False,
        relu: bool = False):
    """``fma.rn{.ftz}{.sat|.relu}.{f16,f16x2}`` and
    ``fma.rn{.relu}.{bf16,bf16x2}`` (9.7.4.4): ``a*b + c`` with a single
    rounding (exact product, TwoSum tail; see the module docstring)."""
    return _arith("fma", t, ftz, sat, relu, a, b, c)


def neg(a, t: str = "f16", *, ftz: bool = False):
    """``neg{.ftz}`` half forms (9.7.4.5): flips the sign bit (also of NaN)."""
    def one(fmt, h):
        if ftz:
            h = _flush_in(h, fmt)
        return h ^ np.uint16(0x8000)
    return _elementwise(one, t, a)


def abs_(a, t: str = "f16", *, ftz: bool = False):
    """``abs{.ftz}`` half forms (9.7.4.6): clears the sign bit."""
    def one(fmt, h):
        if ftz:
            h = _flush_in(h, fmt)
        return h & np.uint16(0x7FFF)
    return _elementwise(one, t, a)


def _minmax(a, b, t, ftz, nan, xorsign_abs, want_min):
    def one(fmt, x, y):
        if ftz:
            x, y = _flush_in(x, fmt), _flush_in(y, fmt)
        sign = (x ^ y) & np.uint16(0x8000)
        if xorsign_abs:
            x, y = x & np.uint16(0x7FFF), y & np.uint16(0x7FFF)
        vx, vy = _to_f64(x, fmt), _to_f64(y, fmt)
        nx, ny = np.isnan(vx), np.isnan(vy)
        # order with -0 < +0: compare (value, sign-bit) lexicographically
        sx = (x >> np.uint16(15)) == 1
        sy = (y >> np.uint16(15)) == 1
        x_lt_y = (vx < vy) | ((vx == vy) & sx & ~sy)
        pick_x = x_lt_y if want_min else ((vy < vx) | ((vx == vy) & sy & ~sx))
        tie = (vx == vy) & (sx == sy)
        r = np.where(pick_x | tie, x, y)
        r = np.where(nx & ~ny, y, np.where(ny & ~nx, x, r))
        isnan_r = (nx & ny) | ((nx | ny) & nan)
        if xorsign_abs:
            r = r | sign
        return np.where(isnan_r, np.uint16(fmt.nan_bits), r).astype(np.uint16)
    return _elementwise(one, t, a, b)


def min_(a, b, t: str = "f16", *, ftz: bool = False, nan: bool = False,
         xorsign_abs: bool = False):
    """``min{.ftz}{.NaN}{.xorsign.abs}`` half forms (9.7.4.7).  Without
    ``.NaN`` a NaN operand is ignored (both NaN: canonical NaN); with
    ``.NaN`` any NaN operand gives the canonical NaN.  ``.xorsign.abs``:
    the minimum of ``|a|`` and ``|b|`` with sign ``sign(a) ^ sign(b)`` (a
    NaN result stays the canonical NaN).  ``-0.0 < +0.0``."""
    return _minmax(a, b, t, ftz, nan, xorsign_abs, True)


def max_(a, b, t: str = "f16", *, ftz: bool = False, nan: bool = False,
         xorsign_abs: bool = False):
    """``max{.ftz}{.NaN}{.xorsign.abs}`` half forms (9.7.4.8), see
    :func:`min_`."""
    return _minmax(a, b, t, ftz, nan, xorsign_abs, False)


def _approx(fn, a, t, ftz):
    def one(fmt, h):
        v = _to_f64(h, fmt, ftz=ftz)
        with np.errstate(over="ignore", invalid="ignore"):
            r = fn(v)
        return _round_f64(r, fmt, "rn", ftz=ftz)
    return _elementwise(one, t, a)


def ex2_approx(a, t: str = "f16", *, ftz: bool = False):
    """``ex2.approx.{f16,f16x2}`` and ``ex2.approx.ftz.{bf16,bf16x2}``
    (9.7.4.10): ``2^a`` correctly rounded (max relative error 2^-11 for f16
    normals, inside the ISA's 2^-9.9; bf16 2^-8, inside 2^-7)."""
    return _approx(np.exp2, a, t, ftz)


def tanh_approx(a, t: str = "f16"):
    """``tanh.approx.{f16,f16x2,bf16,bf16x2}`` (9.7.4.9): correctly rounded
    ``tanh(a)`` (ISA bound: 2^-10.987 relative for f16, 2^-8 for bf16)."""
    return _approx(np.tanh, a, t, False)


_FCMP = {
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: (x != y) & ~np.isnan(x) & ~np.isnan(y),
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
    "equ": lambda x, y: (x == y) | np.isnan(x) | np.isnan(y),
    "neu": lambda x, y: x != y,
    "ltu": lambda x, y: ~(x >= y),
    "leu": lambda x, y: ~(x > y),
    "gtu": lambda x, y: ~(x <= y),
    "geu": lambda x, y: ~(x < y),
    "num": lambda x, y: ~np.isnan(x) & ~np.isnan(y),
    "nan": lambda x, y: np.isnan(x) | np.isnan(y),
}


def setp(cmp: str, a, b, t: str = "f16", *, ftz: bool = False):
    """Comparison of ``setp.CmpOp{.ftz}`` / ``set`` on half types (9.7.7.2).
    Ordered ``eq ne lt le gt ge`` are false with a NaN operand; the ``u``
    forms are true; ``num``/``nan`` test for NaNs; ``-0 == +0``.  Scalar
    types return one bool array; ``.f16x2``/``.bf16x2`` return ``(p, q)``:
    ``p`` the result for the lower halves, ``q`` for the upper halves (the
    ISA's ``p|q`` destinations).  Apply ``.and/.or/.xor`` with ``c``
    yourself."""
    try:
        fn = _FCMP[cmp.lstrip(".")]
    except KeyError:
        raise ValueError(f"bad float comparison {cmp!r}") from None

    def one(fmt, x, y):
        with np.errstate(invalid="ignore"):
            return fn(_to_f64(x, fmt, ftz=ftz), _to_f64(y, fmt, ftz=ftz))
    return _elementwise(one, t, a, b)
