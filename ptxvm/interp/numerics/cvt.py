"""PTX ``cvt`` numerics (PTX ISA 9.0 §9.7.9.21 "Data Movement and Conversion
Instructions: cvt", with its tables "Floating-point rounding modifiers" and
"Integer rounding modifiers").

* float -> float: widening is exact; narrowing f64 -> f32 rounds with .rn/.rz/.rm/.rp;
  .rni/.rzi/.rmi/.rpi round to an integral value in floating point.
* float -> int: always saturating (NaN -> 0, out of range -> MIN/MAX of the type),
  with .rni (nearest, ties to even) / .rzi / .rmi / .rpi.
* int -> float: exact for 64-bit sources too (no numpy double rounding), all modes.
* int -> int: truncation / sign- or zero-extension by the source type, or .sat clamp.
``.ftz`` flushes f32 subnormal inputs/results; ``.sat`` on a float destination
clamps to [0.0, 1.0] with NaN -> +0.0.
"""

from __future__ import annotations

import numpy as np

from .core import (F32, F64, RNDS, check_rnd, errstate, fdtype, finish, ftz32, quiet64, round_to_f32,
                   round_to_f64, two_sum, _sign)

INT_TYPES = {
    "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
}
IRNDS = ("rni", "rzi", "rmi", "rpi")
_IRND_FN = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def int_dtype(t) -> np.dtype:
    """'s32'/'u64'/... (also b8..b64 = unsigned) -> numpy integer dtype."""
    if isinstance(t, str):
        t = t.lstrip(".")
        if t.startswith("b"):
            t = "u" + t[1:]
        return np.dtype(INT_TYPES[t])
    return np.dtype(t)


def _int_range(dt):
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


@errstate
def cvt_f2f(a, dst, rnd=None, ftz=False, sat=False):
    """``cvt{.frnd|.irnd}{.ftz}{.sat}.dst.src`` between f32 and f64.

    ``rnd``: None, "rn"/"rz"/"rm"/"rp" (needed to narrow f64 -> f32; None means .rn),
    or "rni"/"rzi"/"rmi"/"rpi" (round to integral value: nearest-even, toward zero,
    down, up; done exactly in the wider of the two types, then converted with .rn).
    NaN: an f32 result is the canonical 0x7fffffff; an f64 result keeps the
    source payload (quieted)."""
    a = np.asarray(a)
    src = fdtype(a.dtype)
    dst = fdtype(dst)
    if ftz and src == F32:
        a = ftz32(a)
    x = a.astype(F64)  # exact
    if rnd in IRNDS:
        x = _IRND_FN[rnd](x)
        rnd = "rn"
    elif rnd is None:
        rnd = "rn"
    else:
        check_rnd(rnd)
    if dst == F64:
        r = np.where(np.isnan(x), quiet64(x), x)
    else:
        fin = np.isfinite(x)
        r = np.where(fin, round_to_f32(np.where(fin, x, 0.0), 0, rnd), x.astype(F32))
    return finish(r, dst, ftz=ftz, sat=sat)


@errstate
def cvt_f2i(a, dst, irnd, ftz=False):
    """``cvt.irnd{.ftz}{.sat}.dst.f32|f64``: float -> integer, always saturating
    (the ISA: "For float-to-integer conversions, the result is clamped to the
    destination range by default"; NaN converts to 0).  ``irnd`` is one of
    rni/rzi/rmi/rpi (rn/rz/rm/rp are accepted as aliases)."""
    irnd = {"rn": "rni", "rz": "rzi", "rm": "rmi", "rp": "rpi"}.get(irnd, irnd)
    if irnd not in IRNDS:
        raise ValueError(f"integer rounding must be one of {IRNDS}, got {irnd!r}")
    a = np.asarray(a)
    fdtype(a.dtype)
    if ftz:
        a = ftz32(a)
    dt = int_dtype(dst)
    lo, hi = _int_range(dt)
    r = _IRND_FN[irnd](a.astype(F64))
    nan = np.isnan(r)
    under = r < float(lo)
    over = r >= float(hi + 1)  # hi + 1 is a power of two, exact in f64
    ok = ~(nan | under | over)
    v = np.where(ok, r, 0.0)
    if dt == np.uint64:
        top = v >= 2.0**63
        out = np.where(top, v - 2.0**63, v).astype(np.int64).view(np.uint64)
        out = out + np.where(top, np.uint64(1 << 63), np.uint64(0))
    else:
        out = v.astype(np.int64).astype(dt)
    out = np.where(under, dt.type(lo), out)
    out = np.where(over, dt.type(hi), out)
    return np.where(nan, dt.type(0), out).astype(dt)


@errstate
def cvt_i2f(a, src_type, dst, rnd="rn", sat=False):
    """``cvt.frnd{.sat}.f32|f64.src``: integer -> float, correctly rounded in all
    four modes.  64-bit sources are split into exact 32-bit halves and summed with
    TwoSum, so there is no double rounding (numpy's int64 -> float32 goes through
    float64 and can double-round)."""
    check_rnd(rnd)
    sdt = int_dtype(src_type)
    dst = fdtype(dst)
    a = np.asarray(a).astype(sdt)
    if sdt.itemsize <= 4:
        hi = a.astype(F64)
        los = np.zeros(hi.shape, np.int8)
    else:
        h = (a >> sdt.type(32)).astype(F64) * 2.0**32
        lo = (a & sdt.type(0xFFFFFFFF)).astype(F64)
        hi, e = two_sum(h, lo)
        los = _sign(e)
    if dst == F32:
        r = round_to_f32(hi, los, rnd)
    else:
        r = round_to_f64(hi, los, 0, rnd)
    return finish(r, dst, sat=sat)


def cvt_i2i(a, src_type, dst_type, sat=False):
    """``cvt{.sat}.dst.src`` between integer types.  Without .sat: the value is
    truncated to the destination width, or sign-/zero-extended according to the
    SOURCE type.  With .sat: the source value (read as src_type) is clamped to the
    destination range."""
    sdt, ddt = int_dtype(src_type), int_dtype(dst_type)
    a = np.asarray(a).astype(sdt)
    if sat:
        dlo, dhi = _int_range(ddt)
        if sdt.kind == "i":
            v = a.astype(np.int64)
            v = np.maximum(v, np.int64(max(dlo, -(1 << 63))))
            if dhi < (1 << 63):
                v = np.minimum(v, np.int64(dhi))
            return v.astype(ddt)  # v now lies inside the destination range
        v = a.astype(np.uint64)
        v = np.minimum(v, np.uint64(dhi))
        return v.astype(ddt)
    return a.astype(ddt)


__all__ = ["INT_TYPES", "IRNDS", "int_dtype", "cvt_f2f", "cvt_f2i", "cvt_i2f", "cvt_i2i", "RNDS"]
