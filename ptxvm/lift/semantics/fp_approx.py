"""LLVM IR emitters for the PTX ``.approx`` math functions (PTX ISA 9.0 §9.7.3.16-22):
``sin cos ex2 lg2 tanh`` (.f32) and ``rsqrt`` (.f32, and ``rsqrt.approx.ftz.f64``).

The ISA only bounds their error (``APPROX_BOUNDS`` in ``ptxvm.interp.numerics.approx``);
tests compare against those bounds, not bit for bit.

* sin/cos/ex2/lg2: the LLVM intrinsics on f32 (legal on AMDGPU; the host calls libm's
  ``sinf``...), which give the ISA's special values: sin/cos(±inf) = NaN, sin(±0) = ±0,
  cos(±0) = 1, ex2(-inf) = +0, ex2(±0) = 1, ex2(+inf) = +inf, lg2(±0) = -inf,
  lg2(x < 0) = NaN, lg2(+inf) = +inf.
* tanh: no LLVM intrinsic; computed in f32 from exp2 (see :func:`ftanh`).
* rsqrt: computed exactly as the interpreter does (1/sqrt in f64, rounded once), so it is
  in fact bit-identical: RN f64 sqrt and division are correctly rounded on every target.

Every NaN result of an .f32 function is 0x7fffffff; ``.ftz`` flushes subnormal inputs and
results of .f32 functions to signed zero.
"""

from __future__ import annotations

import math

from llvmlite import ir

from ...errors import UnsupportedError
from .fp_core import (
    F32T,
    F64T,
    FMT32,
    FMT64,
    fabs_,
    fbits,
    fc,
    finish,
    flush,
    fmt_of,
    ftz_in,
    intrinsic,
    is_nan,
    sqrt_,
)


def _f32(x: ir.Value, what: str) -> None:
    if fmt_of(x, what) is not FMT32:
        raise UnsupportedError(f"{what}.approx.f64 does not exist in PTX (only .f32)")


def _unary(b: ir.IRBuilder, x: ir.Value, name: str, what: str, ftz: bool) -> ir.Value:
    _f32(x, what)
    x = ftz_in(b, x, ftz)
    return finish(b, intrinsic(b, f"llvm.{name}.f32", F32T, [x]), (x,), ftz=ftz)


def fsin(b: ir.IRBuilder, x: ir.Value, *, ftz: bool = False) -> ir.Value:
    """``sin.approx{.ftz}.f32``."""
    return _unary(b, x, "sin", "sin", ftz)


def fcos(b: ir.IRBuilder, x: ir.Value, *, ftz: bool = False) -> ir.Value:
    """``cos.approx{.ftz}.f32``."""
    return _unary(b, x, "cos", "cos", ftz)


def fex2(b: ir.IRBuilder, x: ir.Value, *, ftz: bool = False) -> ir.Value:
    """``ex2.approx{.ftz}.f32``: 2**x."""
    return _unary(b, x, "exp2", "ex2", ftz)


def flg2(b: ir.IRBuilder, x: ir.Value, *, ftz: bool = False) -> ir.Value:
    """``lg2.approx{.ftz}.f32``: log2(x)."""
    return _unary(b, x, "log2", "lg2", ftz)


# Taylor series of tanh(x)/x - 1 in powers of x**2 (coefficients of x**3, x**5, ... x**15:
# -1/3, 2/15, -17/315, 62/2835, -1382/155925, 21844/6081075, -929569/638512875).  For
# |x| < 0.5 the first omitted term is below 2**-27 relative.
_TANH_TAYLOR = (-1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075,
                -929569 / 638512875)
_TANH_SMALL = 0.5


def ftanh(b: ir.IRBuilder, x: ir.Value, *, ftz: bool = False) -> ir.Value:
    """``tanh.approx.f32`` (bound: 2**-11 relative).

    |x| < 1/2: x + x * x**2 * P(x**2), the Taylor polynomial (odd, so ±0 -> ±0 and subnormal
    x -> x).  Otherwise tanh|x| = (1 - t) / (1 + t) with t = 2**(-2 log2(e) |x|) <= e**-1, so
    1 - t loses no relative accuracy; large |x| and ±inf give t = 0 -> 1.  The sign is then
    copied from x (so -0 -> -0 too, which -0 + (-0 * +0) would not give).  NaN stays NaN and becomes the canonical NaN."""
    _f32(x, "tanh")
    fmt = FMT32
    x = ftz_in(b, x, ftz)
    ax = fabs_(b, x)
    x2 = b.fmul(x, x)
    p = fc(fmt, _TANH_TAYLOR[-1])
    for c in reversed(_TANH_TAYLOR[:-1]):
        p = b.fadd(b.fmul(p, x2), fc(fmt, c))
    small = b.fadd(x, b.fmul(x, b.fmul(x2, p)))
    t = intrinsic(b, "llvm.exp2.f32", F32T, [b.fmul(ax, fc(fmt, -2.0 * math.log2(math.e)))])
    big = b.fdiv(b.fsub(fc(fmt, 1.0), t), b.fadd(fc(fmt, 1.0), t))
    r = b.select(b.fcmp_ordered("<", ax, fc(fmt, _TANH_SMALL)), small, big)
    r = intrinsic(b, "llvm.copysign.f32", F32T, [r, x])     # odd function; also tanh(-0) = -0
    return finish(b, r, (x,), ftz=ftz)


def frsqrt(b: ir.IRBuilder, x: ir.Value, *, ftz: bool = False) -> ir.Value:
    """``rsqrt.approx{.ftz}.f32`` and ``rsqrt.approx{.ftz}.f64``: 1/sqrt(x).

    f32: evaluated in f64 and rounded once to f32 (relative error < 2**-23.9, bound
    2**-22.9).  f64: RN(1 / RN(sqrt x)) (within ~1 ulp); ``ftz`` flushes f64 subnormal
    inputs too; every f64 NaN result is the canonical 0xfff8000000000000.
    rsqrt(±0) = ±inf, rsqrt(+inf) = +0, rsqrt(x < 0) = NaN."""
    fmt = fmt_of(x, "rsqrt")
    if fmt is FMT32:
        x = ftz_in(b, x, ftz)
        d = b.fpext(x, F64T)
        r = b.fptrunc(b.fdiv(fc(FMT64, 1.0), sqrt_(b, d)), F32T)
        return finish(b, r, (x,), ftz=ftz)
    xx = flush(b, x) if ftz else x
    r = b.fdiv(fc(fmt, 1.0), sqrt_(b, xx))
    return b.select(is_nan(b, r), fbits(fmt, fmt.canon_nan), r)
