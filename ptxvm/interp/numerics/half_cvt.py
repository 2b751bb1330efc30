"""Half-precision conversions (PTX ISA §9.7.9.21 cvt): to and from f32, f64, the other half format
and integers, with every rounding mode, .sat, .relu and .satfinite."""

from __future__ import annotations

import numpy as np

from .half_core import _U64, _fmt, _round_f64, _round_pack, _to_f64, pack_x2
from .intops import to_unsigned, type_info


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
