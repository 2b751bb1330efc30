"""Registers whose per-thread values follow a formula instead of an array.

Most of a typical kernel's integer work is address arithmetic on values that
are the same in every thread (kernel parameters, ``%ntid``) or linear in the
thread and CTA index (``%ctaid.x * %ntid.x + %tid.x``, then ``* 4 + base``).
Computing those over a million-lane numpy array per instruction costs more
than the kernel's real work, so the interpreter keeps such values as

    value(thread) = (c + a * tid + q * cta) mod 2**bits

where ``tid`` is the thread's linear index in its CTA and ``cta`` its CTA's slot
in the batch. Modular addition, subtraction and multiplication by a uniform
value act on the coefficients exactly (the formula is a ring homomorphism), so
results are bit-identical to the array computation. Sign or zero extension is
exact only when no thread's value wraps; that is checked on the corners of the
(tid, cta) box (the formula is linear, so its extremes are at corners) and the
value is materialised as an array otherwise. Loads and stores through a
formula address that is contiguous or strided touch memory as one slice after
checking its two ends; anything else materialises and takes the general path,
so every fault report is the one the array path produces.

Formula values exist only while every thread of the batch runs the same
instruction (``lanes is batch.all``); any partial write materialises first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@dataclass(frozen=True, slots=True)
class Affine:
    """``(c + a * tid + q * cta) mod 2**bits`` in every thread; coefficients kept in [0, 2**bits)."""

    bits: int
    c: int
    a: int = 0
    q: int = 0

    @staticmethod
    def make(bits: int, c: int, a: int = 0, q: int = 0) -> "Affine":
        m = (1 << bits) - 1
        return Affine(bits, c & m, a & m, q & m)

    @property
    def uniform(self) -> bool:
        return self.a == 0 and self.q == 0

    def truncate(self, bits: int) -> "Affine":
        return self if bits == self.bits else Affine.make(bits, self.c, self.a, self.q)

    def __add__(self, o: "Affine") -> "Affine":
        return Affine.make(self.bits, self.c + o.c, self.a + o.a, self.q + o.q)

    def __sub__(self, o: "Affine") -> "Affine":
        return Affine.make(self.bits, self.c - o.c, self.a - o.a, self.q - o.q)

    def scale(self, k: int) -> "Affine":
        return Affine.make(self.bits, self.c * k, self.a * k, self.q * k)


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


def exact_range(v: Affine, tpc: int, ctas: int, signed: bool) -> tuple[int, int, int] | None:
    """Integer coefficients (c, a, q) whose formula gives every thread's value *as an integer* of
    the signed/unsigned ``v.bits``-bit type with no wrap; None when some thread's value wraps
    (then only the modular formula holds)."""
    bits = v.bits
    c = _signed(v.c, bits) if signed else v.c
    a, q = _signed(v.a, bits), _signed(v.q, bits)
    lo_lim, hi_lim = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    t, k = tpc - 1, ctas - 1
    corners = (c, c + a * t, c + q * k, c + a * t + q * k)
    if min(corners) < lo_lim or max(corners) > hi_lim:
        return None
    return c, a, q


def bounds(v: Affine, tpc: int, ctas: int, signed: bool) -> tuple[int, int] | None:
    """The least and greatest value over all threads, as integers of the signed/unsigned type,
    when no thread's value wraps; else None."""
    r = exact_range(v, tpc, ctas, signed)
    if r is None:
        return None
    c, a, q = r
    t, k = tpc - 1, ctas - 1
    corners = (c, c + a * t, c + q * k, c + a * t + q * k)
    return min(corners), max(corners)


def extend(v: Affine, bits: int, signed: bool, tpc: int, ctas: int) -> Affine | None:
    """Sign/zero extension to ``bits`` when no thread's value wraps; else None."""
    if bits <= v.bits:
        return v.truncate(bits)
    r = exact_range(v, tpc, ctas, signed)
    if r is None:
        return None
    c, a, q = r
    return Affine.make(bits, c, a, q)


def linear_stride(v: Affine, tpc: int) -> int | None:
    """The per-lane step ``s`` when value(lane) = c + s * lane over the batch's flat lane index
    (lane = cta * tpc + tid) without wrapping modulo 2**bits in between; else None."""
    if (v.a * tpc - v.q) % (1 << v.bits):
        return None
    return v.a


def materialize(v: Affine, n: int, tpc: int, tid, cta) -> np.ndarray:
    """The formula's value in lanes ``0 .. n-1`` as a ``uint{bits}`` array.

    ``tid``/``cta`` are callables giving the batch's per-lane index arrays (only built when the
    value is not linear in the flat lane index)."""
    ut = UINT[v.bits]
    if v.uniform:
        return np.full(n, ut(v.c))
    # Coefficients are below 2**bits, so they fit the working type; its wraparound is the modulus.
    wt = np.uint32 if v.bits <= 32 and n <= (1 << 32) else np.uint64
    with np.errstate(over="ignore"):
        if linear_stride(v, tpc) is not None:
            r = np.arange(n, dtype=wt)
            r *= wt(v.a)
        else:
            r = tid().astype(wt) * wt(v.a)
            r += cta().astype(wt) * wt(v.q)
        r += wt(v.c)
    return r if r.dtype == ut else r.astype(ut)
