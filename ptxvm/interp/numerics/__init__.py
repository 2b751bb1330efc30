"""Bit-exact PTX floating-point semantics as vectorized numpy functions.

The interpreter executes one PTX instruction for a whole batch of threads as
numpy array operations; every function here takes numpy arrays (1-D, equal
length; scalars broadcast) and never loops over elements in Python.

Exactness
    Results are bit-identical to what the PTX ISA defines.  Rounding modes
    .rn/.rz/.rm/.rp are implemented with error-free transformations on
    float64 (TwoSum, Dekker TwoProduct on frexp mantissas, exact division and
    square-root remainders, Boldo-Melquiond round-to-odd for fma.f64) followed by
    an exact rounding step (:func:`core.round_to_f32` /
    :func:`core.round_to_f64`) that handles subnormal results and
    overflow (inf vs. max-finite per mode).  The host FPU mode is never changed.

.ftz / .sat (PTX ISA 9.0 §9.7.3 intro and each instruction's notes)
    ``ftz`` applies to .f32 only: subnormal inputs and results (after rounding)
    become sign-preserving zero.  ``sat`` clamps to [0.0, 1.0]; NaN -> +0.0 (and
    -0.0 -> +0.0).

NaNs (§9.7.3 intro: "NaN payloads are supported for double-precision instructions
... single-precision instructions return an unspecified NaN")
    * every f32 NaN result is the canonical 0x7fffffff (what NVIDIA GPUs return);
    * an f64 NaN result propagates the first NaN operand (a, then b, then c) with
      its quiet bit set; a NaN made from non-NaN operands is 0xfff8000000000000;
    * abs/neg/copysign are bit operations (payload kept);
    * min/max: see :func:`fmin`.

Signatures (``rnd`` in {"rn","rz","rm","rp"}; dtype float32 -> .f32, float64 -> .f64)
    fadd(a, b, rnd="rn", ftz=False, sat=False), fsub(...), fmul(...)
    ffma(a, b, c, rnd="rn", ftz=False, sat=False), fmad(...)
    fdiv(a, b, rnd="rn", ftz=False), frcp(a, rnd="rn", ftz=False),
    fsqrt(a, rnd="rn", ftz=False)
    div_approx_f32(a, b, ftz=False), div_full_f32(a, b, ftz=False)
    sin_approx, cos_approx, ex2_approx, lg2_approx, rcp_approx, rsqrt_approx,
    sqrt_approx, tanh_approx  (a, ftz=False); APPROX_BOUNDS
    fmin/fmax(a, b, ftz=False, nan=False), fabs(a, ftz), fneg(a, ftz),
    copysign(a, b), testp(a, op), fcompare(a, b, op, ftz=False)
    cvt_f2f(a, dst, rnd=None, ftz=False, sat=False), cvt_f2i(a, dst, irnd, ftz=False),
    cvt_i2f(a, src_type, dst, rnd="rn", sat=False), cvt_i2i(a, src, dst, sat=False)
    ftz32(x), as_bits(x), from_bits(u, dtype), saturate(x)
"""

from __future__ import annotations

from .approx import (APPROX_BOUNDS, cos_approx, ex2_approx, lg2_approx, rcp_approx, rsqrt_approx, sin_approx,
                     sqrt_approx, tanh_approx)
from .arith import (CMP_OPS, TESTP_OPS, copysign, div_approx_f32, div_full_f32, fabs, fadd, fcompare, fdiv,
                    ffma, fmad, fmax, fmin, fmul, fneg, frcp, fsqrt, fsub, testp)
from .core import (NAN32_BITS, NAN64_BITS, RNDS, as_bits, canon_nan32, from_bits, ftz32, round_to_f32,
                   round_to_f64, saturate)
from .cvt import INT_TYPES, IRNDS, cvt_f2f, cvt_f2i, cvt_i2f, cvt_i2i, int_dtype

__all__ = [
    "APPROX_BOUNDS", "CMP_OPS", "INT_TYPES", "IRNDS", "NAN32_BITS", "NAN64_BITS", "RNDS",
    "TESTP_OPS", "as_bits", "canon_nan32", "copysign", "cos_approx", "cvt_f2f", "cvt_f2i",
    "cvt_i2f", "cvt_i2i", "div_approx_f32", "div_full_f32", "ex2_approx", "fabs", "fadd",
    "fcompare", "fdiv", "ffma", "fmad", "fmax", "fmin", "fmul", "fneg", "frcp", "from_bits",
    "fsqrt", "fsub", "ftz32", "int_dtype", "lg2_approx", "rcp_approx", "round_to_f32",
    "round_to_f64", "rsqrt_approx", "saturate", "sin_approx", "sqrt_approx", "tanh_approx",
    "testp",
]
