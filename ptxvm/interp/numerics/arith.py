"""IEEE-exact PTX float arithmetic (PTX ISA 9.0 §9.7.3): add, sub, mul, fma, div,
sqrt, rcp with .rn/.rz/.rm/.rp, .ftz and .sat, plus min/max/abs/neg/copysign/testp
and the setp/set comparison operators (§9.7.6.1-2, "Floating Point Comparison").

All functions take numpy arrays (scalars broadcast) of float32 or float64 and
infer the PTX type from the dtype.  ``ftz`` only affects .f32 (PTX: ".ftz applies
to .f32 only"); it flushes subnormal inputs and results to sign-preserving zero.
Directed roundings are computed exactly (see :mod:`core`) and never
change the host FPU's rounding mode; ``.rn`` add/sub/mul/div/sqrt use numpy's own
IEEE-754 round-to-nearest-even operation of the same width (which is exact by
definition under numpy's default environment), then apply the PTX NaN/.ftz/.sat
rules.
"""

from __future__ import annotations

import numpy as np

from .core import (F32, F64, NAN32_BITS, NAN64_BITS, as_bits, canon_nan32, check_rnd, errstate, finish,
                   from_bits, ftz32, quiet64, round_to_f32, round_to_f64, two_prod, two_sum, zero_sum_sign,
                   _sign, _split)


def prep(*xs, ftz=False):
    """Common dtype (float32/float64) of the operands, converted and broadcast."""
    dt = np.result_type(*xs)
    if dt not in (F32, F64):
        raise TypeError(f"float operands must be float32 or float64, got {dt}")
    arrs = [np.asarray(x, dtype=dt) for x in xs]
    if any(x.shape != arrs[0].shape for x in arrs):
        # Broadcast views are read-only and overlap: give the operations plain arrays.
        arrs = [np.array(x) for x in np.broadcast_arrays(*arrs)]
    if ftz and dt == F32:
        arrs = [ftz32(x) for x in arrs]
    # No numerics function writes into its operands, so same-shaped inputs are used as given.
    return dt, arrs


def _zero(neg):
    return np.where(neg, -0.0, 0.0)


# ---------------------------------------------------------------------------
# add / sub  (§9.7.3.3 add, §9.7.3.4 sub)

@errstate
def fadd(a, b, rnd="rn", ftz=False, sat=False):
    """PTX ``add{.rnd}{.ftz}{.sat}.f32`` / ``add{.rnd}.f64``: a + b rounded once."""
    check_rnd(rnd)
    dt, (a, b) = prep(a, b, ftz=ftz)
    if rnd == "rn":  # numpy's own IEEE round-to-nearest-even operation is exact
        return finish(a + b, dt, a, b, ftz=ftz, sat=sat)
    a64, b64 = a.astype(F64), b.astype(F64)
    if dt == F32:
        s, e = two_sum(a64, b64)  # exact: f32 operands cannot overflow f64
        k = 0
    else:
        # halve only sums that overflow: both addends are then >= 2**1022, so the
        # halving is exact (halving a subnormal would not be)
        big = np.isinf(a64 + b64) & np.isfinite(a64) & np.isfinite(b64)
        k = big.astype(np.int64)
        s, e = two_sum(np.where(big, a64 * 0.5, a64), np.where(big, b64 * 0.5, b64))
    fin = np.isfinite(a64) & np.isfinite(b64)
    nz = fin & (s != 0)
    hi = np.where(nz, s, 1.0)
    los = np.where(nz, _sign(e), 0)
    r = round_to_f32(hi, los, rnd).astype(F64) if dt == F32 else round_to_f64(hi, los, k, rnd)
    r = np.where(nz, r, np.where(fin, _zero(zero_sum_sign(a64, b64, rnd)), a64 + b64))
    return finish(r, dt, a, b, ftz=ftz, sat=sat)


def fsub(a, b, rnd="rn", ftz=False, sat=False):
    """PTX ``sub``: a - b == a + (-b) exactly (negation is exact; NaN policy as add)."""
    dt, (a, b) = prep(a, b)
    r = fadd(a, fneg(b), rnd=rnd, ftz=ftz, sat=sat)
    if dt == F64:  # propagate b's own payload, not its negation
        fix = np.isnan(r) & np.isnan(b) & ~np.isnan(a)
        r = np.where(fix & ~np.bool_(sat), quiet64(b), r)
    return r


# ---------------------------------------------------------------------------
# mul (§9.7.3.5)

@errstate
def fmul(a, b, rnd="rn", ftz=False, sat=False):
    """PTX ``mul{.rnd}{.ftz}{.sat}.f32`` / ``mul{.rnd}.f64``."""
    check_rnd(rnd)
    dt, (a, b) = prep(a, b, ftz=ftz)
    if rnd == "rn":
        return finish(a * b, dt, a, b, ftz=ftz, sat=sat)
    a64, b64 = a.astype(F64), b.astype(F64)
    p = a64 * b64
    gen = (a64 != 0) & (b64 != 0) & np.isfinite(a64) & np.isfinite(b64)
    if dt == F32:  # the product of two f32 is exact in f64
        r = round_to_f32(np.where(gen, p, 1.0), 0, rnd).astype(F64)
    else:
        ma, ea = np.frexp(np.where(gen, a64, 1.0))
        mb, eb = np.frexp(np.where(gen, b64, 1.0))
        ph, pl = two_prod(ma, mb)
        r = round_to_f64(ph, _sign(pl), ea.astype(np.int64) + eb, rnd)
    r = np.where(gen, r, a64 * b64)
    return finish(r, dt, a, b, ftz=ftz, sat=sat)


# ---------------------------------------------------------------------------
# fma (§9.7.3.6; mad.rnd is the same operation, §9.7.3.7)

def _ro_add(x, y):
    """Round-to-odd x + y: returns (v, dsign) with sign(x + y - v) == dsign."""
    v, ve = two_sum(x, y)
    even = (as_bits(v) & np.uint64(1)) == 0
    fix = (ve != 0) & even
    v2 = np.where(fix, np.nextafter(v, np.where(ve > 0, np.inf, -np.inf)), v)
    dsign = np.where(fix, -_sign(ve), _sign(ve))
    return v2, dsign


def _fma64_general(a, b, c):
    """(hi, sign(lo), k): exact a*b + c == (hi + lo) * 2**k, hi == RN53, for finite
    nonzero a, b and finite c.  Uses scaled TwoProduct/TwoSum and the
    Boldo-Melquiond round-to-odd FMA emulation (IEEE Trans. Comp. 57(4), 2008)."""
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    ph, pl = two_prod(ma, mb)
    k = ea.astype(np.int64) + eb
    cz = c == 0
    mc, ec = np.frexp(np.where(cz, 1.0, c))
    d = ec.astype(np.int64) - k
    cdom = (d > 110) & ~cz  # the product only acts as a sticky bit
    base = np.where(cdom, ec, k)
    uh = np.where(cdom, np.copysign(2.0**-200, ph), ph)
    ul = np.where(cdom, 0.0, pl)
    cs = np.where(cdom, mc, np.ldexp(mc, np.clip(d, -200, 200).astype(np.int32)))
    cs = np.where(~cdom & (d < -200), np.copysign(2.0**-200, mc), cs)
    cs = np.where(cz, 0.0, cs)
    th, tl = two_sum(cs, uh)
    v, dsign = _ro_add(tl, ul)
    z, w = two_sum(th, v)
    los = np.where(w != 0, _sign(w), dsign).astype(np.int8)
    return z, los, base


@errstate
def ffma(a, b, c, rnd="rn", ftz=False, sat=False):
    """PTX ``fma.rnd{.ftz}{.sat}.f32`` / ``fma.rnd.f64``: a*b + c with ONE rounding."""
    check_rnd(rnd)
    dt, (a, b, c) = prep(a, b, c, ftz=ftz)
    a64, b64, c64 = a.astype(F64), b.astype(F64), c.astype(F64)
    if dt == F32 and rnd == "rn" and not ftz and not sat:
        r, ok = _ffma32_rn(a64, b64, c64)
        if not ok.all():                 # zero sums, non-finite values: the exact path, those lanes only
            slow = ~ok
            r[slow] = finish(_ffma32_exact(a64[slow], b64[slow], c64[slow], rnd), dt, a[slow], b[slow], c[slow])
        return r
    if dt == F64:
        if rnd != "rn":
            return finish(_ffma64_exact(a64, b64, c64, rnd), dt, a, b, c, ftz=ftz, sat=sat)
        r, ok = _ffma64_rn(a64, b64, c64)
        if not ok.all():                 # the lanes the fast path cannot vouch for
            slow = ~ok
            r[slow] = _ffma64_exact(a64[slow], b64[slow], c64[slow], rnd)
        return finish(r, dt, a, b, c, ftz=ftz, sat=sat)
    return finish(_ffma32_exact(a64, b64, c64, rnd), dt, a, b, c, ftz=ftz, sat=sat)


def _ffma32_exact(a64, b64, c64, rnd):
    """fma.rnd.f32 for every input, as f64 values before the NaN/.ftz/.sat rules."""
    fin = np.isfinite(a64) & np.isfinite(b64) & np.isfinite(c64)
    naive = _naive_fma(a64, b64, c64)
    p = a64 * b64  # exact
    s, e = two_sum(np.where(fin, p, 0.0), np.where(fin, c64, 0.0))
    nz = fin & (s != 0)
    r = round_to_f32(np.where(nz, s, 1.0), np.where(nz, _sign(e), 0), rnd).astype(F64)
    zneg = zero_sum_sign(p, c64, rnd)
    return np.where(nz, r, np.where(fin, _zero(zneg), naive))


def _naive_fma(a64, b64, c64):
    # right for every non-finite case (inf*0, inf-inf, NaN); a finite product that
    # overflows f64 is still finite, so an infinite c wins
    return np.where(np.isinf(c64) & np.isfinite(a64) & np.isfinite(b64), c64, a64 * b64 + c64)


def _ffma64_exact(a64, b64, c64, rnd):
    """fma.rnd.f64 for every input (scaled, so over/underflow and zero signs are exact)."""
    fin = np.isfinite(a64) & np.isfinite(b64) & np.isfinite(c64)
    naive = _naive_fma(a64, b64, c64)
    pz = (a64 == 0) | (b64 == 0)
    gen = fin & ~pz
    z, los, k = _fma64_general(np.where(gen, a64, 1.0), np.where(gen, b64, 1.0),
                               np.where(gen, c64, 0.0))
    nz = (fin & pz & (c64 != 0)) | (gen & (z != 0))
    r = np.where(pz, c64, round_to_f64(np.where(z == 0, 1.0, z), los, k, rnd))
    zneg = zero_sum_sign(np.where(pz, a64 * b64, 1.0), np.where(pz, c64, -1.0), rnd)
    return np.where(nz, r, np.where(fin, _zero(zneg), naive))


# Bounds within which the unscaled emulation below is exact (see _ffma64_rn).
_FMA_TINY, _FMA_SPLIT_MAX, _FMA_HUGE, _FMA_RESULT_TINY = 2.0**-960, 2.0**995, 2.0**1000, 2.0**-1000


def _ffma64_rn(a, b, c):
    """fma.rn.f64 without scaling: (result, ok), the result exact on the lanes where ``ok``.

    Boldo-Melquiond's emulation (IEEE Trans. Comp. 57(4), 2008, Algorithm 5.4): Dekker's
    TwoProduct a*b = p + pl, TwoSum c + p = th + tl, v = tl + pl rounded to odd, result
    RN(th + v), exact when nothing overflows or underflows. ``ok`` keeps the lanes where that
    holds: |a|, |b|, |a*b| >= 2^-960 (every partial product and error term then is a multiple
    of 2^-1066, so even a subnormal one is exact), |a|, |b| < 2^995 (Veltkamp's split does
    not overflow), |a*b|, |c| <= 2^1000 (no sum overflows), and a result >= 2^-1000 (not
    near the subnormal range; this also leaves every zero result, with its sign rules, to
    the exact path). NaN and infinite inputs fail the comparisons."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    pl = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    th, tl = two_sum(c, p)
    v, ve = two_sum(tl, pl)
    inexact_even = (ve != 0) & ((as_bits(v) & np.uint64(1)) == 0)
    if inexact_even.any():               # round to odd: step away from the even neighbour
        v = np.where(inexact_even, np.nextafter(v, np.copysign(np.inf, ve)), v)
    r = th + v
    aa, ab, ap, az = np.abs(a), np.abs(b), np.abs(p), np.abs(r)
    ok = ((aa >= _FMA_TINY) & (aa < _FMA_SPLIT_MAX) & (ab >= _FMA_TINY) & (ab < _FMA_SPLIT_MAX)
          & (ap >= _FMA_TINY) & (ap <= _FMA_HUGE) & (np.abs(c) <= _FMA_HUGE) & (az >= _FMA_RESULT_TINY))
    return r, ok


def _ffma32_rn(a64, b64, c64):
    """fma.rn.f32 the cheap way: (result, ok), the result right on the lanes where ``ok``.

    a*b is exact in f64 (48-bit product) and s + e == a*b + c exactly (TwoSum). Rounding s
    to f32 is already right unless s lies exactly on an f32 midpoint (midpoints are f64
    values, and |e| <= half an f64 ulp cannot carry the true sum across one); there the
    sign of e decides, and e == 0 keeps ties-to-even. Non-finite inputs or results, and
    zero sums (whose sign has rules of its own), are not ``ok``: the general path's.
    """
    p = a64 * b64
    s, e = two_sum(p, c64)
    r = s.astype(F32)
    back = r.astype(F64)
    d = s - back                                             # exact: both near each other
    nb = np.where(d > 0, np.nextafter(r, np.float32(np.inf)), np.nextafter(r, np.float32(-np.inf)))
    ok = np.isfinite(r) & (s != 0) & np.isfinite(p) & np.isfinite(nb)
    tie = ok & (d != 0) & (d == nb.astype(F64) - s)
    if tie.any():
        toward = np.where(e > 0, np.maximum(r, nb), np.minimum(r, nb))
        r = np.where(tie & (e != 0), toward, r)
    return r, ok


def fmad(a, b, c, rnd="rn", ftz=False, sat=False):
    """PTX ``mad.rnd`` on floats is a fused multiply-add (§9.7.3.7)."""
    return ffma(a, b, c, rnd=rnd, ftz=ftz, sat=sat)


# ---------------------------------------------------------------------------
# div / rcp / sqrt  (§9.7.3.8 div, §9.7.3.13 rcp, §9.7.3.15 sqrt)

@errstate
def fdiv(a, b, rnd="rn", ftz=False):
    """PTX ``div.rnd{.ftz}.f32`` / ``div.rnd.f64``: IEEE-correct quotient.

    f32: the f64 quotient of two f32 lies within 2**-53 (relative) of the exact one,
    while an exact quotient that is not a 25-bit number is at least ~2**-50 away
    from every 25-bit number, so the f64 quotient falls in the same rounding
    interval (no double-rounding).  f64: the remainder a - q*b of the RN quotient is
    representable and computed exactly with TwoProduct on frexp mantissas."""
    check_rnd(rnd)
    dt, (a, b) = prep(a, b, ftz=ftz)
    if rnd == "rn":
        return finish(a / b, dt, a, b, ftz=ftz)
    a64, b64 = a.astype(F64), b.astype(F64)
    q = a64 / b64
    gen = np.isfinite(a64) & np.isfinite(b64) & (a64 != 0) & (b64 != 0)
    if dt == F32:
        r = round_to_f32(np.where(gen, q, 1.0), 0, rnd).astype(F64)
    else:
        ma, ea = np.frexp(np.where(gen, a64, 1.0))
        mb, eb = np.frexp(np.where(gen, b64, 1.0))
        qm = ma / mb
        ph, pl = two_prod(qm, mb)
        rem = (ma - ph) - pl
        r = round_to_f64(qm, _sign(rem) * _sign(mb), ea.astype(np.int64) - eb, rnd)
    r = np.where(gen, r, q)
    return finish(r, dt, a, b, ftz=ftz)


def frcp(a, rnd="rn", ftz=False):
    """PTX ``rcp.rnd{.ftz}.f32`` / ``rcp.rnd.f64``: IEEE-correct 1/a."""
    a = np.asarray(a)
    return fdiv(np.ones_like(a), a, rnd=rnd, ftz=ftz)


@errstate
def fsqrt(a, rnd="rn", ftz=False):
    """PTX ``sqrt.rnd{.ftz}.f32`` / ``sqrt.rnd.f64``: IEEE-correct square root;
    sqrt(-0) = -0, sqrt(x<0) = NaN, sqrt(+inf) = +inf."""
    check_rnd(rnd)
    dt, (a,) = prep(a, ftz=ftz)
    if rnd == "rn":
        return finish(np.sqrt(a), dt, a, ftz=ftz)
    a64 = a.astype(F64)
    s = np.sqrt(a64)
    gen = np.isfinite(a64) & (a64 > 0)
    if dt == F32:  # double rounding is innocuous for sqrt since 53 >= 2*24 + 2
        r = round_to_f32(np.where(gen, s, 1.0), 0, rnd).astype(F64)
    else:
        m, e = np.frexp(np.where(gen, a64, 1.0))
        odd = (e % 2) != 0
        m = np.where(odd, m * 2.0, m)
        e = np.where(odd, e - 1, e).astype(np.int64)
        sm = np.sqrt(m)
        ph, pl = two_prod(sm, sm)
        rem = (m - ph) - pl  # exact remainder of the RN square root
        r = round_to_f64(sm, _sign(rem), e // 2, rnd)
    r = np.where(gen, r, s)
    return finish(r, dt, a, ftz=ftz)


@errstate
def div_full_f32(a, b, ftz=False):
    """PTX ``div.full{.ftz}.f32`` (§9.7.3.8).  The ISA promises a full-range
    approximation with at most 2 ulp error; we return the correctly rounded (.rn)
    quotient, which satisfies that bound, with IEEE special cases."""
    return fdiv(np.asarray(a, dtype=F32), np.asarray(b, dtype=F32), "rn", ftz=ftz)


@errstate
def div_approx_f32(a, b, ftz=False):
    """PTX ``div.approx{.ftz}.f32`` (§9.7.3.8): the ISA defines d ~= a * (1/b) with
    at most 2 ulp error for 2**-126 <= |b| <= 2**126, and for 2**126 < |b| < 2**128
    d = NaN if a is infinite, else d = 0.  We return the correctly rounded quotient
    (within the bound) and implement that large-divisor rule (the zero carries the
    sign of a*b, as a * rcp(b) with rcp(b) flushed to zero would)."""
    dt, (a, b) = prep(np.asarray(a, dtype=F32), np.asarray(b, dtype=F32), ftz=ftz)
    r = fdiv(a, b, "rn", ftz=ftz)
    large = (np.abs(b) > np.float32(2.0**126)) & np.isfinite(b)
    neg = np.signbit(a) ^ np.signbit(b)
    special = np.where(np.isinf(a), np.float32(np.nan), np.where(neg, np.float32(-0.0), np.float32(0.0)))
    return canon_nan32(np.where(large & ~np.isnan(a), special, r))


# ---------------------------------------------------------------------------
# min / max  (§9.7.3.11, §9.7.3.12)

def _minmax(a, b, ftz, nan, want_min):
    dt, (a, b) = prep(a, b, ftz=ftz)
    an, bn = np.isnan(a), np.isnan(b)
    if want_min:
        pick_a = (a < b) | ((a == b) & np.signbit(a))
    else:
        pick_a = (a > b) | ((a == b) & ~np.signbit(a))
    r = np.where(pick_a, a, b)
    r = np.where(an & ~bn, b, np.where(bn & ~an, a, r))
    if dt == F32:
        canon = from_bits(NAN32_BITS, F32)
        both = np.where(an & bn, canon, r)
        return np.where((an | bn) if nan else (an & bn), canon, both).astype(F32)
    if nan:
        r = np.where(an | bn, from_bits(NAN64_BITS, F64), r)
    return np.where(an & bn & ~np.bool_(nan), quiet64(a), r).astype(F64)


def _minmax_f32_ext(a, b, c, ftz, nan, abs_, xorsign, want_min):
    """The ``.abs``, ``.xorsign.abs`` and three-input f32 forms, per the Semantics block
    of PTX ISA 9.0 §9.7.3.11 (min) / §9.7.3.12 (max):

        if (.xorsign && !isPresent(c)) xorsign = getSignBit(a) ^ getSignBit(b);
        if (.abs) { a = |a|; b = |b|; if (isPresent(c)) c = |c|; }
        d = two_inputs_min(d, a, b);
        if (isPresent(c)) d = two_inputs_min(d, d, c);
        if (.xorsign && !isPresent(c) && !isNaN(d)) setSignBit(d, xorsign);

    ``two_inputs_min`` is the two-operand rule of :func:`fmin` (.NaN: any NaN -> NaN,
    else a NaN operand is ignored; -0.0 < +0.0).  The sign for .xorsign is taken from
    the operands before .abs ("considers the sign bit of both inputs before applying
    .abs"), NaN operands included; "if the result is NaN then .xorsign and .abs are
    ignored": a NaN result is the canonical 0x7fffffff.  ``.ftz`` flushes subnormal
    inputs to sign-preserving zero first (a result is one of the inputs, so it is
    never subnormal)."""
    xs = (a, b) if c is None else (a, b, c)
    dt, xs = prep(*xs, ftz=ftz)
    if dt != F32:
        raise TypeError("min/max .abs, .xorsign.abs and three inputs are .f32 forms only")
    sign_m = np.uint32(0x80000000)
    if xorsign:
        if c is not None:
            raise ValueError(".xorsign cannot be specified for the three-input min/max")
        sign = (as_bits(xs[0]) ^ as_bits(xs[1])) & sign_m
    if abs_:
        xs = [from_bits(as_bits(x) & ~sign_m, F32) for x in xs]
    r = _minmax(xs[0], xs[1], False, nan, want_min)
    if c is not None:
        r = _minmax(r, xs[2], False, nan, want_min)
    if xorsign:
        rb = as_bits(r)
        r = np.where(np.isnan(r), r, from_bits((rb & ~sign_m) | sign, F32))
    return np.asarray(r, dtype=F32)


def fmin(a, b, ftz=False, nan=False, *, c=None, abs_=False, xorsign=False):
    """PTX ``min{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b``, ``min{.ftz}{.NaN}{.abs}.f32
    d, a, b, c`` (``c``) and ``min.f64``.  A NaN operand is ignored (the
    other operand is returned); both NaN -> NaN (f32 canonical 0x7fffffff, f64 the
    quieted first operand); with ``.NaN`` any NaN operand gives the canonical NaN.
    -0.0 is treated as less than +0.0 (so min(+0, -0) = -0 in either order).
    ``abs_``/``xorsign``/``c``: see :func:`_minmax_f32_ext` (§9.7.3.11)."""
    if c is not None or abs_ or xorsign:
        return _minmax_f32_ext(a, b, c, ftz, nan, abs_, xorsign, True)
    return _minmax(a, b, ftz, nan, True)


def fmax(a, b, ftz=False, nan=False, *, c=None, abs_=False, xorsign=False):
    """PTX ``max{.ftz}{.NaN}{.xorsign.abs}.f32``, the three-input ``max{.ftz}{.NaN}{.abs}.f32``
    and ``max.f64``; mirror of :func:`fmin` (+0.0 is greater than -0.0; §9.7.3.12)."""
    if c is not None or abs_ or xorsign:
        return _minmax_f32_ext(a, b, c, ftz, nan, abs_, xorsign, False)
    return _minmax(a, b, ftz, nan, False)


# ---------------------------------------------------------------------------
# abs / neg / copysign / testp  (§9.7.3.9, §9.7.3.10, §9.7.3.2, §9.7.3.1)

def _signmask(dt):
    return np.uint32(0x80000000) if dt == F32 else np.uint64(0x8000000000000000)


def fabs(a, ftz=False):
    """PTX ``abs{.ftz}.f32`` / ``abs.f64``: clear the sign bit (a bit operation, so a
    NaN keeps its payload; the ISA leaves the NaN result unspecified)."""
    dt, (a,) = prep(a, ftz=ftz)
    return from_bits(as_bits(a) & ~_signmask(dt), dt)


def fneg(a, ftz=False):
    """PTX ``neg{.ftz}.f32`` / ``neg.f64``: flip the sign bit (bit operation)."""
    dt, (a,) = prep(a, ftz=ftz)
    return from_bits(as_bits(a) ^ _signmask(dt), dt)


def copysign(a, b):
    """PTX ``copysign.type d, a, b``: d = b with the sign bit of a (note the PTX
    operand order: the SIGN comes from the first operand)."""
    dt, (a, b) = prep(a, b)
    m = _signmask(dt)
    return from_bits((as_bits(b) & ~m) | (as_bits(a) & m), dt)


TESTP_OPS = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


def testp(a, op):
    """PTX ``testp.op.type`` -> bool array.  Per the ISA, +0 and -0 count as
    *normal* numbers; subnormal = finite, nonzero, below the smallest normal."""
    dt, (a,) = prep(a)
    tiny = np.finfo(dt).tiny
    fin = np.isfinite(a)
    if op == "finite":
        return fin
    if op == "infinite":
        return np.isinf(a)
    if op == "number":
        return ~np.isnan(a)
    if op == "notanumber":
        return np.isnan(a)
    sub = fin & (a != 0) & (np.abs(a) < tiny)
    if op == "subnormal":
        return sub
    if op == "normal":
        return fin & ~sub
    raise ValueError(f"testp op must be one of {TESTP_OPS}, got {op!r}")


# ---------------------------------------------------------------------------
# comparisons for setp / set / slct  (§9.7.6.1-2; "Floating Point Comparison" table)

CMP_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
           "num", "nan")


@errstate
def fcompare(a, b, op, ftz=False):
    """Float comparison -> bool array.  Ordered ops (eq ne lt le gt ge) are false if
    either operand is NaN -- including ``ne``; unordered ops (…u) are true if either
    is NaN; ``num``: neither is NaN; ``nan``: either is NaN.  +0 == -0."""
    dt, (a, b) = prep(a, b, ftz=ftz)
    unord = np.isnan(a) | np.isnan(b)
    base = op[:-1] if op.endswith("u") and op not in ("num",) else op
    if op == "num":
        return ~unord
    if op == "nan":
        return unord
    fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
          "gt": np.greater, "ge": np.greater_equal}.get(base)
    if fn is None:
        raise ValueError(f"comparison must be one of {CMP_OPS}, got {op!r}")
    res = fn(a, b)
    if base == op:
        return res & ~unord
    return res | unord
