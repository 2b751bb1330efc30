"""Exact model of PTX cvt (PTX ISA 9.7.9.21): decode raw bits to a Fraction, round by hand to each format (enc), saturation (m_sat)."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

FM = {"f16": (11, 5), "bf16": (8, 8), "f32": (24, 8), "f64": (53, 11), "tf32": (11, 8)}


def width(t: str) -> int:
    return {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}.get(t) or int(t[1:])


@functools.lru_cache(maxsize=1 << 16)
def dec(bits: int, t: str):
    """-> ('nan',) | ('inf', neg) | ('num', Fraction, neg)."""
    p, eb = FM[t]
    n = eb + p
    neg = bool(bits >> (n - 1) & 1)
    ef = (bits >> (p - 1)) & ((1 << eb) - 1)
    fr = bits & ((1 << (p - 1)) - 1)
    bias = (1 << (eb - 1)) - 1
    if ef == (1 << eb) - 1:
        return ("nan",) if fr else ("inf", neg)
    if ef == 0:
        v = Fraction(fr) * Fraction(2) ** (1 - bias - (p - 1))
    else:
        v = Fraction(fr + (1 << (p - 1))) * Fraction(2) ** (ef - bias - (p - 1))
    return ("num", -v if neg else v, neg)


@functools.lru_cache(maxsize=1 << 16)
def enc(x: Fraction, t: str, rnd: str, neg_zero: bool = False, satfinite: bool = False) -> int:
    """Round the exact rational ``x`` to format ``t`` in mode ``rnd``; the bits."""
    p, eb = FM[t]
    n = eb + p
    bias = (1 << (eb - 1)) - 1
    qmin = 1 - bias - (p - 1)
    sign = 1 << (n - 1)
    if x == 0:
        return sign if neg_zero else 0
    neg = x < 0
    ax = -x if neg else x
    e = ax.numerator.bit_length() - ax.denominator.bit_length()
    if Fraction(2) ** e > ax:
        e -= 1
    q = max(e - (p - 1), qmin)
    scaled = ax / Fraction(2) ** q
    k = math.floor(scaled)
    r = scaled - k
    up = {"rn": r > Fraction(1, 2) or (r == Fraction(1, 2) and k % 2 == 1),
          "rna": r >= Fraction(1, 2), "rz": False, "rm": neg and r > 0, "rp": (not neg) and r > 0}[rnd]
    k += up
    if k == 1 << p:
        k >>= 1
        q += 1
    inf = ((1 << eb) - 1) << (p - 1)
    if q > (1 << eb) - 2 - bias - (p - 1):              # beyond the top binade: overflow
        to_inf = not satfinite and (rnd in ("rn", "rna") or (rnd == "rm" and neg) or (rnd == "rp" and not neg))
        mag = inf if to_inf else inf - 1
    elif k < (1 << (p - 1)):
        mag = k                                          # subnormal (or zero)
    else:
        mag = ((q - qmin + 1) << (p - 1)) | (k - (1 << (p - 1)))
    return mag | (sign if neg else 0)


def m_sat(bits: int, t: str) -> int:
    d = dec(bits, t)
    one = ((1 << (FM[t][1] - 1)) - 1) << (FM[t][0] - 1)
    if d[0] == "nan" or (bits >> (width(t) - 1)):
        return 0
    return one if d[0] == "inf" or d[1] > 1 else bits
