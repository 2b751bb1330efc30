"""PTX ``.approx`` math (PTX ISA 9.0 §9.7.3: 9.7.3.8 div, 9.7.3.13 rcp,
9.7.3.14 rcp.approx.ftz.f64, 9.7.3.15 sqrt, 9.7.3.16 rsqrt, 9.7.3.17
rsqrt.approx.ftz.f64, 9.7.3.18 sin, 9.7.3.19 cos, 9.7.3.20 lg2, 9.7.3.21 ex2,
9.7.3.22 tanh).

The ISA only bounds the error of these instructions.  ptxvm returns the correctly
rounded result (rcp, sqrt) or the float64 libm value rounded once to f32 (sin, cos,
ex2, lg2, rsqrt, tanh: accurate to ~1e-16 before the final rounding, so almost
always correctly rounded), which lies well inside every bound in
:data:`APPROX_BOUNDS`.  Tests elsewhere may compare an implementation against
these functions with the tolerances from that table.

Special values follow the ISA's tables: sin/cos(±inf) = NaN, sin(±0) = ±0,
cos(±0) = +1; lg2(±0) = -inf, lg2(x<0) = NaN, lg2(+inf) = +inf; ex2(-inf) = +0,
ex2(±0) = +1, ex2(+inf) = +inf; rcp(±0) = ±inf, rcp(±inf) = ±0; rsqrt(±0) = ±inf,
rsqrt(x<0) = NaN, rsqrt(+inf) = +0; sqrt(-0) = -0; tanh(±inf) = ±1.
NaN inputs give the canonical f32 NaN 0x7fffffff.  With ``ftz``, subnormal
inputs and results are flushed to sign-preserving zero.
"""

from __future__ import annotations

import math

import numpy as np

from .arith import frcp, fsqrt
from .core import F32, F64, NAN64_BITS, as_bits, errstate, finish, from_bits, ftz32

PI = math.pi

#: Error bounds the PTX ISA states for the approximate instructions.
#: ``metric``: "abs" (absolute error), "rel" (relative error) or "ulp" (units in
#: the last place of the f32 result); ``bounds``: list of (input range, bound), the
#: first range holding the input applies; ``else``: where the ISA bounds the inputs
#: outside those ranges in another metric (lg2), the same shape.  Inputs outside every
#: range have no bound (sin/cos beyond 100 pi: "only best effort").
APPROX_BOUNDS = {
    # §9.7.3.18/19: absolute 2^-20.5 on [-2pi, 2pi], 2^-14.7 on [-100pi, 100pi].
    "sin": {"ptx": "sin.approx{.ftz}.f32", "section": "9.7.3.18", "metric": "abs",
            "bounds": [((-2 * PI, 2 * PI), 2.0**-20.5), ((-100 * PI, 100 * PI), 2.0**-14.7)]},
    "cos": {"ptx": "cos.approx{.ftz}.f32", "section": "9.7.3.19", "metric": "abs",
            "bounds": [((-2 * PI, 2 * PI), 2.0**-20.5), ((-100 * PI, 100 * PI), 2.0**-14.7)]},
    # §9.7.3.20: absolute 2^-22 for inputs in (0.5, 2), relative 2^-22 for the other
    # positive finite inputs (an absolute bound cannot hold where the ulp exceeds it).
    "lg2": {"ptx": "lg2.approx{.ftz}.f32", "section": "9.7.3.20", "metric": "abs",
            "bounds": [((0.5, 2.0), 2.0**-22)],
            "else": {"metric": "rel", "bounds": [((0.0, math.inf), 2.0**-22)]}},
    "ex2": {"ptx": "ex2.approx{.ftz}.f32", "section": "9.7.3.21", "metric": "ulp",
            "bounds": [((-math.inf, math.inf), 2.0)]},
    "rcp": {"ptx": "rcp.approx{.ftz}.f32", "section": "9.7.3.13", "metric": "ulp",
            "bounds": [((-math.inf, math.inf), 1.0)]},
    "rsqrt": {"ptx": "rsqrt.approx{.ftz}.f32", "section": "9.7.3.16", "metric": "rel",
              "bounds": [((0.0, math.inf), 2.0**-22.9)]},
    "sqrt": {"ptx": "sqrt.approx{.ftz}.f32", "section": "9.7.3.15", "metric": "rel",
             "bounds": [((0.0, math.inf), 2.0**-23)]},
    "tanh": {"ptx": "tanh.approx.f32", "section": "9.7.3.22", "metric": "rel",
             "bounds": [((-math.inf, math.inf), 2.0**-11)]},
    "div.approx": {"ptx": "div.approx{.ftz}.f32", "section": "9.7.3.8", "metric": "ulp",
                   "bounds": [((2.0**-126, 2.0**126), 2.0)]},  # range of |divisor|
    "div.full": {"ptx": "div.full{.ftz}.f32", "section": "9.7.3.8", "metric": "ulp",
                 "bounds": [((-math.inf, math.inf), 2.0)]},
}


def _f32_unary(fn, a, ftz):
    a = np.asarray(a, dtype=F32)
    if ftz:
        a = ftz32(a)
    r = fn(a.astype(F64)).astype(F32)
    return finish(r, F32, ftz=ftz)


@errstate
def sin_approx(a, ftz=False):
    """``sin.approx{.ftz}.f32``."""
    return _f32_unary(np.sin, a, ftz)


@errstate
def cos_approx(a, ftz=False):
    """``cos.approx{.ftz}.f32``."""
    return _f32_unary(np.cos, a, ftz)


@errstate
def ex2_approx(a, ftz=False):
    """``ex2.approx{.ftz}.f32``: 2**a (exact for integral a in range)."""
    return _f32_unary(np.exp2, a, ftz)


@errstate
def lg2_approx(a, ftz=False):
    """``lg2.approx{.ftz}.f32``: log2(a) (exact for powers of two)."""
    return _f32_unary(np.log2, a, ftz)


@errstate
def tanh_approx(a, ftz=False):
    """``tanh.approx.f32``."""
    return _f32_unary(np.tanh, a, ftz)


def _ftz64(a):
    b = as_bits(a)
    sub = (b & np.uint64(0x7FF0000000000000)) == 0
    return from_bits(np.where(sub, b & np.uint64(1 << 63), b), F64)


def _f64_canon(r):
    return np.where(np.isnan(r), from_bits(NAN64_BITS, F64), r)


@errstate
def rcp_approx(a, ftz=False):
    """``rcp.approx{.ftz}.f32`` -> correctly rounded 1/a.  For float64 input this is
    ``rcp.approx.ftz.f64`` (§9.7.3.14): "subnormal inputs and results are flushed to
    sign-preserving zero" (1/a of |a| > 2^1022 is subnormal, so 0), NaN input -> canonical
    NaN (the ISA maps NaNs to a canonical NaN for it)."""
    a = np.asarray(a)
    if a.dtype == F64:
        if ftz:
            return _f64_canon(_ftz64(frcp(_ftz64(a), "rn")))
        return _f64_canon(frcp(a, "rn"))
    return frcp(a.astype(F32), "rn", ftz=ftz)


@errstate
def sqrt_approx(a, ftz=False):
    """``sqrt.approx{.ftz}.f32`` -> correctly rounded sqrt(a)."""
    return fsqrt(np.asarray(a, dtype=F32), "rn", ftz=ftz)


@errstate
def rsqrt_approx(a, ftz=False):
    """``rsqrt.approx{.ftz}.f32`` -> 1/sqrt(a) evaluated in float64, rounded once to
    f32.  Float64 input: ``rsqrt.approx{.ftz}.f64`` (§9.7.3.16/17), result kept in
    f64 (within a couple of f64 ulp), NaN -> canonical NaN."""
    a = np.asarray(a)
    if a.dtype == F64:
        if ftz:
            a = _ftz64(a)
        return _f64_canon(1.0 / np.sqrt(a))
    return _f32_unary(lambda x: 1.0 / np.sqrt(x), a, ftz)
