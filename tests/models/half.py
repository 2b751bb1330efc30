"""Exact reference models of f16/bf16 arithmetic and conversion (PTX ISA 9.7.4), and their edge-value tables."""

from __future__ import annotations

import math
from fractions import Fraction

# (precision incl. hidden bit, exponent bits)
FMT = {"f16": (11, 5), "bf16": (8, 8), "f32": (24, 8)}


NAN = {"f16": 0x7FFF, "bf16": 0x7FFF}


def decode(bits, fmt):
    """-> ('nan',) | ('inf', neg) | ('num', Fraction, neg)"""
    p, eb = FMT[fmt]
    n = 1 + eb + p - 1
    neg = bool(bits >> (n - 1))
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


def encode_round(x, fmt, rnd="rn", neg_zero=False, satfinite=False):
    """Round the exact rational x to fmt (IEEE 754), return bits."""
    p, eb = FMT[fmt]
    n = 1 + eb + p - 1
    bias = (1 << (eb - 1)) - 1
    qmin = 1 - bias - (p - 1)
    sign = 1 << (n - 1)
    if x == 0:
        return sign if neg_zero else 0
    neg = x < 0
    ax = -x if neg else x
    E = ax.numerator.bit_length() - ax.denominator.bit_length()
    if Fraction(2) ** E > ax:
        E -= 1
    q = max(E - (p - 1), qmin)
    scaled = ax / Fraction(2) ** q
    k = math.floor(scaled)
    r = scaled - k
    if rnd == "rn":
        up = r > Fraction(1, 2) or (r == Fraction(1, 2) and k % 2 == 1)
    elif rnd == "rna":
        up = r >= Fraction(1, 2)
    elif rnd == "rz":
        up = False
    elif rnd == "rm":
        up = neg and r > 0
    else:
        up = (not neg) and r > 0
    k += up
    if k == 1 << p:
        k >>= 1
        q += 1
    emax_q = (1 << eb) - 2 - bias - (p - 1)       # quantum of the top binade
    maxfin = ((1 << (eb + p - 1)) - 1) - (1 << (p - 1))   # bits of max finite
    inf = ((1 << eb) - 1) << (p - 1)
    if q > emax_q:
        if satfinite:
            mag = maxfin
        else:
            to_inf = rnd in ("rn", "rna") or (rnd == "rm" and neg) or (rnd == "rp" and not neg)
            mag = inf if to_inf else maxfin
    elif k < (1 << (p - 1)):
        mag = k                               # subnormal (or zero)
    else:
        mag = ((q - qmin + 1) << (p - 1)) | (k - (1 << (p - 1)))
    return mag | (sign if neg else 0)


def model_convert(d, fmt, rnd="rn", satfinite=False, relu=False, sat=False):
    p, eb = FMT[fmt]
    inf = ((1 << eb) - 1) << (p - 1)
    sgn = 1 << (eb + p - 1)
    maxfin = inf - 1
    if d[0] == "nan":
        return 0 if sat else NAN[fmt]
    if d[0] == "inf":
        neg = d[1]
        if sat:
            return 0 if neg else ((1 << (eb - 1)) - 1) << (p - 1)
        if relu and neg:
            return 0
        return (sgn if neg else 0) | (maxfin if satfinite else inf)
    v, neg = d[1], d[2]
    r = encode_round(v, fmt, rnd, neg_zero=neg, satfinite=satfinite)
    if sat:
        one = ((1 << (eb - 1)) - 1) << (p - 1)
        if r & sgn:
            return 0
        return min(r, one)
    if relu and r & sgn:
        return 0
    return r


def ftz_in(h, fmt):
    p, eb = FMT[fmt]
    if (h >> (p - 1)) & ((1 << eb) - 1) == 0:
        return h & 0x8000
    return h


def flush_out(r, fmt):
    p, _ = FMT[fmt]
    if r & 0x7FFF and (r & 0x7FFF) < (1 << (p - 1)):
        return r & 0x8000
    return r


def model_arith(op, hs, fmt, ftz=False, sat=False, relu=False):
    if ftz:
        hs = [ftz_in(h, fmt) for h in hs]
    ds = [decode(h, fmt) for h in hs]
    if any(d[0] == "nan" for d in ds):
        return 0 if sat else NAN[fmt]
    if any(d[0] == "inf" for d in ds):
        fl = [(-math.inf if d[1] else math.inf) if d[0] == "inf" else float(d[1]) for d in ds]
        if op == "add":
            r = fl[0] + fl[1]
        elif op == "sub":
            r = fl[0] - fl[1]
        elif op == "mul":
            r = fl[0] * fl[1]
        else:
            r = fl[0] * fl[1] + fl[2]
        if math.isnan(r):
            return 0 if sat else NAN[fmt]
        d = ("inf", r < 0) if math.isinf(r) else ("num", Fraction(r), math.copysign(1, r) < 0)
        return model_convert(d, fmt, sat=sat, relu=relu)
    v = [d[1] for d in ds]
    negz = [d[2] for d in ds]
    if op == "add":
        x, nz = v[0] + v[1], negz[0] and negz[1]
    elif op == "sub":
        x, nz = v[0] - v[1], negz[0] and not negz[1]
    elif op == "mul":
        x, nz = v[0] * v[1], negz[0] != negz[1]
    else:
        x, nz = v[0] * v[1] + v[2], (negz[0] != negz[1]) and negz[2]
    r = encode_round(x, fmt, "rn", neg_zero=nz)
    if ftz:
        r = flush_out(r, fmt)
    return model_convert(decode(r, fmt), fmt, sat=sat, relu=relu)


F16_EDGES = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x0401, 0x3C00, 0xBC00, 0x3BFF,
             0x3C01, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFFFF, 0x3800, 0x4000]


BF16_EDGES = [0x0000, 0x8000, 0x0001, 0x007F, 0x0080, 0x0081, 0x3F80, 0xBF80, 0x3F7F, 0x3F81,
              0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0xFFFF, 0x3F00, 0x4000]


def fval(d):
    if d[0] == "num":
        return float(d[1])
    return -math.inf if d[1] else math.inf


def model_minmax(x, y, fmt, want_min, nan=False, xorsign=False):
    sign = (x ^ y) & 0x8000
    if xorsign:
        x, y = x & 0x7FFF, y & 0x7FFF
    dx, dy = decode(x, fmt), decode(y, fmt)
    if dx[0] == "nan" and dy[0] == "nan":
        return NAN[fmt]
    if dx[0] == "nan" or dy[0] == "nan":
        if nan:
            return NAN[fmt]
        r = y if dx[0] == "nan" else x
    else:
        kx = (fval(dx), 0 if x & 0x8000 else 1)   # -0 < +0
        ky = (fval(dy), 0 if y & 0x8000 else 1)
        r = (x if kx <= ky else y) if want_min else (x if kx >= ky else y)
    return r | sign if xorsign else r


CMP = {
    "eq": lambda x, y, u: not u and x == y, "ne": lambda x, y, u: not u and x != y,
    "lt": lambda x, y, u: not u and x < y, "le": lambda x, y, u: not u and x <= y,
    "gt": lambda x, y, u: not u and x > y, "ge": lambda x, y, u: not u and x >= y,
    "equ": lambda x, y, u: u or x == y, "neu": lambda x, y, u: u or x != y,
    "ltu": lambda x, y, u: u or x < y, "leu": lambda x, y, u: u or x <= y,
    "gtu": lambda x, y, u: u or x > y, "geu": lambda x, y, u: u or x >= y,
    "num": lambda x, y, u: not u, "nan": lambda x, y, u: u,
}
