"""Input data for generated kernels: bit patterns that exercise the corner cases.

A 64-bit word feeds registers of every width (a b16 register reads its low 16
bits, a b32 its low 32), so each word is drawn from one category: random bits,
small integers, integer boundaries, float specials (f64, two f32, four f16 or
bf16 lanes: zeros, infinities, NaNs with payloads, subnormals, extremes) and
ordinary floats of moderate magnitude (which is where rounding modes differ).
"""

from __future__ import annotations

from functools import cache

import numpy as np

F32_SPECIAL = (0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
               0x7F800001, 0x7FBFFFFF, 0x00000001, 0x807FFFFF, 0x00800000, 0x00400000, 0x7F7FFFFF, 0xFF7FFFFF,
               0x3F000000, 0x3EAAAAAB, 0x4B000000, 0x4B800000, 0x4F000000, 0xCF000000, 0x5F000000, 0x3FC00000,
               0x40490FDB, 0xC0A00000, 0x3F7FFFFF, 0x33800000)
F64_SPECIAL = (0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000,
               0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
               0x7FF0000000000001, 0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x0010000000000000,
               0x7FEFFFFFFFFFFFFF, 0x3FE0000000000000, 0x3FD5555555555555, 0x4330000000000000,
               0x43E0000000000000, 0xC3E0000000000000, 0x41E0000000000000, 0x47EFFFFFE0000000,
               0x3810000000000000, 0x36A0000000000000, 0x400921FB54442D18, 0x3FF8000000000000)
F16_SPECIAL = (0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x0001, 0x03FF, 0x0400,
               0x7BFF, 0xFBFF, 0x3800, 0x3E00, 0x6400, 0x5BFF)
BF16_SPECIAL = (0x0000, 0x8000, 0x3F80, 0xBF80, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x0001, 0x007F, 0x0080, 0x7F7F,
                0x3F00, 0x4B00, 0xC2C8, 0x3FC0)


@cache
def int_specials(bits: int) -> tuple[int, ...]:
    m = (1 << bits) - 1
    top = 1 << (bits - 1)
    vals = (0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, m, m - 1, top, top - 1, top + 1,
            0x5555555555555555 & m, 0xAAAAAAAAAAAAAAAA & m)
    return tuple(dict.fromkeys(v & m for v in vals))


def _pick(rng: np.random.Generator, table, n: int) -> np.ndarray:
    return np.asarray(table, dtype=np.uint64)[rng.integers(0, len(table), n)]


def _moderate_f32(rng, n) -> np.ndarray:
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(31)
    exp = rng.integers(110, 145, n, dtype=np.uint64) << np.uint64(23)
    return sign | exp | rng.integers(0, 1 << 23, n, dtype=np.uint64)


def _moderate_f16(rng, n) -> np.ndarray:
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(15)
    exp = rng.integers(8, 23, n, dtype=np.uint64) << np.uint64(10)
    return sign | exp | rng.integers(0, 1 << 10, n, dtype=np.uint64)


def words(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uint64 words, each from one category of interesting patterns."""
    cat = rng.integers(0, 10, n)
    sh = np.uint64
    cases = [
        rng.integers(0, 2**64, n, dtype=np.uint64, endpoint=False),
        rng.integers(-8, 9, n).astype(np.int64).view(np.uint64),
        _pick(rng, F64_SPECIAL, n),
        _pick(rng, F32_SPECIAL, n) | (_pick(rng, F32_SPECIAL, n) << sh(32)),
        _pick(rng, F16_SPECIAL, n) | (_pick(rng, BF16_SPECIAL, n) << sh(16))
        | (_pick(rng, F16_SPECIAL, n) << sh(32)) | (_pick(rng, BF16_SPECIAL, n) << sh(48)),
        _pick(rng, BF16_SPECIAL, n) | (_pick(rng, F16_SPECIAL, n) << sh(16)),
        _pick(rng, int_specials(32), n) | (_pick(rng, int_specials(32), n) << sh(32)),
        _pick(rng, int_specials(64), n) ^ _pick(rng, int_specials(16), n),
        _moderate_f32(rng, n) | (_moderate_f32(rng, n) << sh(32)),
        _moderate_f16(rng, n) | (_moderate_f16(rng, n) << sh(16)) | (rng.integers(0, 2**32, n, dtype=np.uint64) << sh(32)),
    ]
    out = np.empty(n, dtype=np.uint64)
    for k, values in enumerate(cases):
        out[cat == k] = values[cat == k]
    return out


def small_float_bits(rng: np.random.Generator, n: int, t: str) -> np.ndarray:
    """Small non-negative integers as f32/f64 bits: sums of them are exact in any order."""
    v = rng.integers(0, 16, n).astype(np.float32 if t == "f32" else np.float64)
    return v.view(np.uint32).astype(np.uint64) if t == "f32" else v.view(np.uint64)
