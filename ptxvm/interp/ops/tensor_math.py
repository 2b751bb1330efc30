"""The arithmetic of the warp-level matrix instructions (PTX ISA 9.0 §9.7.14): element decoding
and the one accumulation rule per type that isa/instructions.toml documents next to wmma.mma
and mma. Matrices are numpy arrays [warps, rows, cols] of element bit patterns (uint64).

The rule (the ISA leaves the order and rounding of a tensor-core sum unspecified):
* floating point: every product is exact; D = C, then for k = 0 .. K-1 in order
  D = round(D + A[i,k] * B[k,j]) in the accumulator type, round-to-nearest-even (one rounding
  per step: an fma in the accumulator type). The accumulator type is f64 for f64 operands, else
  f32 when C or D is f32 (an f16 D is then the f32 sum rounded once), else f16. f64 uses the
  instruction's `.rnd` (default .rn).
  f16/bf16/tf32/e4m3/e5m2 inputs are exact in f32 (and f16/e4m3/e5m2 in f16), so the step is
  the interpreter's fma of that type. A NaN result is the canonical NaN of the type.
* integer: the exact sum C + sum_k A*B; `.satfinite` clamps it to the s32 range, otherwise it
  wraps modulo 2**32.
* b1: C + sum_k popc(A[i,k] op B[k,j]) with op xor or and, wrapping modulo 2**32.
"""

from __future__ import annotations

import numpy as np

from ..numerics import arith as farith
from ..numerics import half as fhalf
from ..numerics import narrow

_MASK32 = np.uint64(0xFFFFFFFF)


def decode(bits: np.ndarray, elem: str) -> np.ndarray:
    """Element bit patterns -> float64 (floating elements) or int64 (integer elements)."""
    bits = bits.astype(np.uint64)
    if elem == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if elem == "bf16":
        return (bits << np.uint64(16)).astype(np.uint32).view(np.float32).astype(np.float64)
    if elem == "tf32":
        # ptxvm reads a .tf32 operand's 19 high bits (sign, exponent, 10 mantissa bits); the 13
        # low bits are ignored (ptxvm's choice: the mma text does not say what they do).
        return (bits & np.uint64(0xFFFFE000)).astype(np.uint32).view(np.float32).astype(np.float64)
    if elem == "f32":
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    if elem == "f64":
        return bits.view(np.float64).copy()
    if elem in ("e4m3", "e5m2"):
        return narrow.decode(bits, elem)          # §5.2.5.1 (the cvt's decoder: one source)
    width = {"s32": 32, "s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1}[elem]
    v = bits.astype(np.int64)
    if elem.startswith("s"):
        v = np.where(v >= 1 << (width - 1), v - (1 << width), v)
    return v


def _f16_bits(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float16).view(np.uint16)


@np.errstate(invalid="ignore", over="ignore")      # NaN and overflow are results here, not errors
def float_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, atype: str, btype: str,
              ctype: str, dtype: str, rnd: str = "rn") -> np.ndarray:
    """D bits [W, M, N] for element bits A [W, M, K], B [W, K, N], C [W, M, N]. The sum is kept
    in f64 (f64 operands), else f32 if C or D is f32, else f16; D is the sum rounded (RN) to
    its type."""
    av, bv, cv = decode(a, atype), decode(b, btype), decode(c, ctype)
    if dtype == "f64":
        acc = cv
        for k in range(av.shape[-1]):
            acc = farith.ffma(np.broadcast_to(av[..., :, k:k + 1], acc.shape),
                              np.broadcast_to(bv[..., k:k + 1, :], acc.shape), acc, rnd)
        return acc.view(np.uint64)
    if "f32" in (ctype, dtype):
        acc = cv.astype(np.float32)
        a32, b32 = av.astype(np.float32), bv.astype(np.float32)   # exact: narrower formats
        for k in range(av.shape[-1]):
            acc = farith.ffma(np.broadcast_to(a32[..., :, k:k + 1], acc.shape),
                              np.broadcast_to(b32[..., k:k + 1, :], acc.shape), acc, "rn")
        acc = np.asarray(acc, dtype=np.float32)
        if dtype == "f32":
            return acc.view(np.uint32).astype(np.uint64)
        bits = _f16_bits(acc)                     # one RN rounding f32 -> f16
        return np.where(np.isnan(acc), np.uint16(0x7FFF), bits).astype(np.uint64)
    # f16 C and D (f16, e4m3 or e5m2 inputs, all exact in f16): the f16 fma per step.
    acc = _f16_bits(cv)
    ah, bh = _f16_bits(av), _f16_bits(bv)
    for k in range(av.shape[-1]):
        acc = fhalf.fma(np.broadcast_to(ah[..., :, k:k + 1], acc.shape),
                        np.broadcast_to(bh[..., k:k + 1, :], acc.shape), acc, "f16")
    return np.asarray(acc).astype(np.uint64)


def int_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, atype: str, btype: str,
            satfinite: bool) -> np.ndarray:
    """s32 D bits for integer A, B (s8/u8/s4/u4) and s32 C: the exact sum, clamped or wrapped."""
    av, bv = decode(a, atype), decode(b, btype)
    total = decode(c, "s32") + np.einsum("wik,wkj->wij", av, bv)   # |sum| < 2**63: exact
    if satfinite:
        total = np.clip(total, -(1 << 31), (1 << 31) - 1)
    return total.astype(np.uint64) & _MASK32


def bit_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, op: str) -> np.ndarray:
    """b1: C + popc over k of (A op B), op ``xor`` or ``and``; wraps modulo 2**32."""
    av, bv = a.astype(np.int64)[..., :, :, None], b.astype(np.int64)[..., None, :, :]
    bits = (av ^ bv) if op == "xor" else (av & bv)
    total = decode(c, "s32") + bits.sum(axis=-2)
    return total.astype(np.uint64) & _MASK32


__all__ = ["decode", "float_mma", "int_mma", "bit_mma"]
