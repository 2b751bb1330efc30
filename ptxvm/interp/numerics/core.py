"""Core of ptxvm's bit-exact float numerics: bit views, error-free transformations
and exact rounding of an exactly-known real value to f32/f64 in any IEEE mode.

Nothing here touches the host FPU's rounding mode.  Every computation runs in
numpy's default round-to-nearest-even float64 arithmetic; directed roundings are
derived from an *exact* representation of the result (an unevaluated pair
``hi + lo`` with ``hi = RN53(exact)``, of which only the sign of ``lo`` is needed),
obtained with error-free transformations (TwoSum, Dekker's TwoProduct, exact
division/sqrt remainders, Boldo-Melquiond round-to-odd for FMA).

Public names are re-exported by :mod:`ptxvm.interp.numerics`.
"""

from __future__ import annotations

import functools

import numpy as np

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
RNDS = ("rn", "rz", "rm", "rp")

# Canonical NaNs.  f32: PTX ISA 9.0 §9.7.3 ("Floating Point Instructions", intro)
# says single-precision instructions return an unspecified NaN; NVIDIA hardware
# returns 0x7fffffff (CUDART_NAN_F), which is what we produce for every f32 NaN
# result.  f64: the same section says NaN payloads are supported for double
# precision, so an input NaN is propagated (quieted); a NaN generated from non-NaN
# operands (inf-inf, 0*inf, 0/0, sqrt(-1)) is 0xfff8000000000000 (CUDART_NAN).
NAN32_BITS = np.uint32(0x7FFFFFFF)
NAN64_BITS = np.uint64(0xFFF8000000000000)
QUIET64 = np.uint64(0x0008000000000000)
FLT_MAX = float(np.finfo(np.float32).max)
DBL_MAX = float(np.finfo(np.float64).max)

_UINT_OF = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def errstate(fn):
    """Run ``fn`` with numpy floating-point warnings silenced (NaN/inf are data)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapper


def as_bits(x):
    """Reinterpret a float array (f16/f32/f64) as unsigned integers of equal width."""
    x = np.asarray(x)
    return x.view(_UINT_OF[x.dtype.itemsize])


def from_bits(u, dtype):
    """Reinterpret unsigned integers as floats of ``dtype`` (f16/f32/f64)."""
    dtype = np.dtype(dtype)
    u = np.asarray(u)
    return u.astype(_UINT_OF[dtype.itemsize], copy=False).view(dtype)


def fdtype(spec) -> np.dtype:
    """'f32'/'f64'/numpy dtype -> numpy float dtype."""
    if isinstance(spec, str):
        spec = {"f32": np.float32, "f64": np.float64, "f16": np.float16}[spec]
    dt = np.dtype(spec)
    if dt not in (F32, F64):
        raise ValueError(f"unsupported float type {spec!r}")
    return dt


def check_rnd(rnd):
    if rnd not in RNDS:
        raise ValueError(f"rounding mode must be one of {RNDS}, got {rnd!r}")
    return rnd


def ftz32(x):
    """Flush f32 subnormals to sign-preserving zero (PTX ``.ftz``, §9.7.3).

    Non-f32 arrays are returned unchanged (``.ftz`` applies to .f32 only)."""
    x = np.asarray(x)
    if x.dtype != F32:
        return x
    b = as_bits(x)
    sub = (b & np.uint32(0x7F800000)) == 0
    return from_bits(np.where(sub, b & np.uint32(0x80000000), b), F32)


def canon_nan32(r):
    """Every f32 NaN becomes the canonical 0x7fffffff."""
    r = np.asarray(r, dtype=F32)
    # One reduction finds out whether there is a NaN at all (min propagates NaN) before paying
    # for the mask; almost every result has none.
    if r.size and np.isnan(np.min(r)):
        r = np.where(np.isnan(r), from_bits(NAN32_BITS, F32), r)
    return r


def quiet64(x):
    """Quiet an f64 NaN (set the top fraction bit), keeping sign and payload."""
    return from_bits(as_bits(np.asarray(x, dtype=F64)) | QUIET64, F64)


def nan64(r, *inputs):
    """f64 NaN result policy (§9.7.3): where ``r`` is NaN, return the first NaN
    input (quieted, payload kept) or, if no input is NaN, 0xfff8000000000000."""
    r = np.asarray(r, dtype=F64)
    nan = np.isnan(r)
    if not nan.any():
        return r
    fill = np.broadcast_to(from_bits(NAN64_BITS, F64), r.shape)
    for x in reversed(inputs):
        x = np.broadcast_to(np.asarray(x, dtype=F64), r.shape)
        fill = np.where(np.isnan(x), quiet64(x), fill)
    return np.where(nan, fill, r)


def finish(r, dt, *inputs, sat=False, ftz=False):
    """Final NaN policy, ``.ftz`` output flush and ``.sat`` clamp for a result."""
    if dt == F32:
        r = np.asarray(r, dtype=F32)
        if ftz:
            r = ftz32(r)
        r = canon_nan32(r)
    else:
        r = nan64(r, *inputs)
    if sat:
        r = saturate(r)
    return r


def saturate(r):
    """PTX ``.sat`` for floats: clamp to [0.0, 1.0]; NaN -> +0.0; -0.0 -> +0.0."""
    r = np.asarray(r)
    t = r.dtype.type
    out = np.where(r > t(1.0), t(1.0), r)
    return np.where(np.isnan(r) | (r <= 0), t(0.0), out).astype(r.dtype)


# ---------------------------------------------------------------------------
# Error-free transformations (all in float64, round-to-nearest)

def two_sum(a, b):
    """Knuth's TwoSum: s = fl(a+b), e with a+b == s+e exactly (no overflow)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


_SPLIT = 134217729.0  # 2**27 + 1


def _split(a):
    c = _SPLIT * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """Dekker's TwoProduct: p = fl(a*b), e with a*b == p+e exactly.

    Exact when no overflow/underflow occurs; callers pass frexp mantissas."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _sign(x):
    return np.sign(x).astype(np.int8)


# ---------------------------------------------------------------------------
# Exact rounding


def _exp_floor(hi, los, k):
    """floor(log2(|hi + lo| * 2**k)) given hi = RN53(hi + lo), only sign(lo) known."""
    m, e = np.frexp(hi)
    e = e.astype(np.int64) - 1 + k
    pow2_down = (np.abs(m) == 0.5) & (los * _sign(hi) < 0)
    return e - pow2_down


def _round_int(q, los, rnd):
    """Round the exact value q + lo to an integer (as float64), where q is exact,
    |q| < 2**52, ulp(q) <= 1/2, and |lo| < ulp(q)/2 so only sign(lo) matters."""
    n = np.floor(q)
    f = q - n
    if rnd == "rn":
        tie = f == 0.5
        up = (f > 0.5) | (tie & (los > 0)) | (tie & (los == 0) & (np.fmod(n, 2) != 0))
        return n + up
    down = n - ((f == 0) & (los < 0))  # floor of the exact value
    up = n + ((f > 0) | ((f == 0) & (los > 0)))  # ceil of the exact value
    if rnd == "rm":
        return down
    if rnd == "rp":
        return up
    return np.where(q > 0, down, up)  # rz


def _overflow(r, hi, rnd, maxval):
    """Apply IEEE overflow rules to results whose magnitude exceeds ``maxval``."""
    over = np.abs(r) > maxval
    if not over.any():
        return r
    pos = hi > 0
    if rnd == "rn":
        big = np.where(pos, np.inf, -np.inf)
    elif rnd == "rz":
        big = np.where(pos, maxval, -maxval)
    elif rnd == "rm":
        big = np.where(pos, maxval, -np.inf)
    else:
        big = np.where(pos, np.inf, -maxval)
    return np.where(over, big, r)


def round_to_f32(hi, los, rnd):
    """Round the exact real ``hi + lo`` to f32 with mode ``rnd``.

    ``hi``: finite float64 (zero only if the exact value is that zero); ``los``:
    sign (-1/0/+1) of ``lo``, with |lo| <= ulp53(hi)/2 (or ``hi`` known to lie in the
    same open interval between adjacent 25-bit numbers as the exact value).
    Handles subnormal results (grid 2**-149) and overflow per IEEE 754 §7.4."""
    hi = np.asarray(hi, dtype=F64)
    los = np.asarray(los, dtype=np.int8)
    e = _exp_floor(hi, los, 0)
    g = np.maximum(e - 23, -149)
    g = np.clip(g, -149, 1100).astype(np.int32)
    q = np.ldexp(hi, -g)
    m = _round_int(q, los, rnd)
    r = np.ldexp(m, g)
    r = _overflow(r, hi, rnd, FLT_MAX)
    r = np.copysign(r, hi)
    return r.astype(F32)


def round_to_f64(hi, los, k, rnd):
    """Round the exact real ``(hi + lo) * 2**k`` to f64 with mode ``rnd``.

    ``hi = RN53(hi + lo)`` finite (zero only for an exact zero), ``los`` = sign(lo),
    ``k`` integer array.  Normal results: ``hi`` scaled, nudged one ulp per the
    directed mode; subnormal results: rounded on the 2**-1074 grid."""
    hi = np.asarray(hi, dtype=F64)
    los = np.asarray(los, dtype=np.int8)
    k = np.broadcast_to(np.asarray(k, dtype=np.int64), hi.shape)
    e = _exp_floor(hi, los, k)
    kk = np.clip(k, -4000, 4000).astype(np.int32)
    # Path A: normal (or overflowing) result.
    r = np.ldexp(hi, kk)
    if rnd == "rz":
        r = np.where(los * _sign(hi) < 0, np.nextafter(r, 0.0), r)
    elif rnd == "rm":
        r = np.where(los < 0, np.nextafter(r, -np.inf), r)
    elif rnd == "rp":
        r = np.where(los > 0, np.nextafter(r, np.inf), r)
    r = _overflow(r, hi, rnd, DBL_MAX)
    sub = (e < -1022) & (hi != 0)
    if sub.any():
        # Path B: subnormal result; q = exact / 2**-1074 has |q| < 2**52.
        tiny = e + 1074 < -8
        s = np.clip(k + 1074, -2000, 2000).astype(np.int32)
        q = np.where(tiny, np.copysign(2.0**-8, hi), np.ldexp(hi, s))
        m = _round_int(q, np.where(tiny, 0, los).astype(np.int8), rnd)
        rb = np.copysign(np.ldexp(m, -1074), hi)
        r = np.where(sub, rb, r)
    return np.where(hi == 0, hi, r)


def zero_sum_sign(a, b, rnd):
    """Sign of an exactly-zero sum a + b (IEEE 754 §6.3): -0 iff both addends are
    -0, or the addends differ and the mode is round-toward-minus-infinity."""
    both_neg_zero = (a == 0) & (b == 0) & np.signbit(a) & np.signbit(b)
    return both_neg_zero | ((rnd == "rm") & ~((a == 0) & (b == 0) & ~np.signbit(a) & ~np.signbit(b)))
