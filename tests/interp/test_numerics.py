"""Bit-exactness tests for ptxvm.interp.numerics against an independent exact model.

The model (tests/models/numerics.py) works on Python ``fractions.Fraction`` values and rounds the exact
rational result to f32/f64 by hand (IEEE 754 §4.3 rounding-direction attributes,
§7.4 overflow, gradual underflow), with the special-value rules (inf, NaN, signed
zero) written out in plain Python.  The vectorised implementation is compared
bit-for-bit on arrays of hypothesis-generated values, including edge values.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptxvm.interp import numerics as N

from models.numerics import (
    INF,
    MAX32,
    MIN_NORM32,
    MIN_SUB32,
    NAN,
    f32_bits,
    f32_pair,
    f32s,
    f64_bits,
    f64_pair,
    f64s,
    flush,
    m_add,
    m_cmp,
    m_div,
    m_fma,
    m_minmax,
    m_mul,
    m_sqrt,
    round_exact,
    sat,
    ulp32,
)

SETTINGS = settings(max_examples=50, deadline=None, derandomize=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MODES = ["rn", "rz", "rm", "rp"]

# ---------------------------------------------------------------------------
# strategies


LISTS = dict(min_size=1, max_size=24)


def arr32(xs):
    return np.array([f32_bits(x) for x in xs], dtype=np.uint32).view(np.float32)


def arr64(xs):
    return np.array(xs, dtype=np.float64)


def check(got, expected, fmt, inputs=None):
    got = np.asarray(got)
    for i, e in enumerate(expected):
        g = got[i].item()
        if fmt == "f32":
            gb = f32_bits(g) if not math.isnan(g) else int(N.as_bits(got[i:i + 1])[0])
            if math.isnan(e):
                assert gb == 0x7FFFFFFF, (i, inputs and [x[i] for x in inputs], hex(gb))
            else:
                assert gb == f32_bits(e), (i, inputs and [x[i] for x in inputs], g, e)
        else:
            if math.isnan(e):
                assert math.isnan(g), (i, inputs and [x[i] for x in inputs], g)
            else:
                assert f64_bits(g) == f64_bits(e), (i, inputs and [x[i] for x in inputs], g, e)


# ---------------------------------------------------------------------------
# f32 arithmetic


@SETTINGS
@given(st.lists(f32_pair, **LISTS), st.sampled_from(MODES), st.booleans(), st.booleans())
def test_add_sub_mul_f32(pairs, mode, ftz, do_sat):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    A, B = arr32(a), arr32(b)
    fa = [flush(x, "f32", ftz) for x in a]
    fb = [flush(x, "f32", ftz) for x in b]
    post = (lambda x: sat(flush(x, "f32", ftz))) if do_sat else (lambda x: flush(x, "f32", ftz))
    check(N.fadd(A, B, mode, ftz, do_sat), [post(m_add(x, y, "f32", mode)) for x, y in zip(fa, fb)], "f32", (a, b))
    check(N.fsub(A, B, mode, ftz, do_sat), [post(m_add(x, -y, "f32", mode)) for x, y in zip(fa, fb)], "f32", (a, b))
    check(N.fmul(A, B, mode, ftz, do_sat), [post(m_mul(x, y, "f32", mode)) for x, y in zip(fa, fb)], "f32", (a, b))


@SETTINGS
@given(st.lists(st.tuples(f32_pair, f32s, st.booleans()), **LISTS), st.sampled_from(MODES), st.booleans())
def test_fma_f32(rows, mode, ftz):
    a = [r[0][0] for r in rows]
    b = [r[0][1] for r in rows]
    # half the rows: c cancels most of a*b, to exercise the tie/sticky logic
    c = []
    for (x, y), z, cancel in rows:
        if cancel and math.isfinite(x * y):
            z = -float(np.float32(x * y)) + (z if math.isfinite(z) and abs(z) < 1 else 0.0)
            z = float(np.float32(z))
        c.append(z)
    f = [[flush(v, "f32", ftz) for v in col] for col in (a, b, c)]
    exp = [flush(m_fma(x, y, z, "f32", mode), "f32", ftz) for x, y, z in zip(*f)]
    check(N.ffma(arr32(a), arr32(b), arr32(c), mode, ftz), exp, "f32", (a, b, c))


@SETTINGS
@given(st.lists(f32_pair, **LISTS), st.sampled_from(MODES), st.booleans())
def test_div_sqrt_rcp_f32(pairs, mode, ftz):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    fa = [flush(x, "f32", ftz) for x in a]
    fb = [flush(x, "f32", ftz) for x in b]
    fl = lambda x: flush(x, "f32", ftz)  # noqa: E731
    check(N.fdiv(arr32(a), arr32(b), mode, ftz), [fl(m_div(x, y, "f32", mode)) for x, y in zip(fa, fb)], "f32", (a, b))
    check(N.fsqrt(arr32(a), mode, ftz), [fl(m_sqrt(x, "f32", mode)) for x in fa], "f32", (a,))
    check(N.frcp(arr32(b), mode, ftz), [fl(m_div(1.0, y, "f32", mode)) for y in fb], "f32", (b,))


# ---------------------------------------------------------------------------
# f64 arithmetic


@SETTINGS
@given(st.lists(f64_pair, **LISTS), st.sampled_from(MODES))
def test_add_mul_div_sqrt_f64(pairs, mode):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    A, B = arr64(a), arr64(b)
    check(N.fadd(A, B, mode), [m_add(x, y, "f64", mode) for x, y in zip(a, b)], "f64", (a, b))
    check(N.fsub(A, B, mode), [m_add(x, -y, "f64", mode) for x, y in zip(a, b)], "f64", (a, b))
    check(N.fmul(A, B, mode), [m_mul(x, y, "f64", mode) for x, y in zip(a, b)], "f64", (a, b))
    check(N.fdiv(A, B, mode), [m_div(x, y, "f64", mode) for x, y in zip(a, b)], "f64", (a, b))
    check(N.fsqrt(A, mode), [m_sqrt(x, "f64", mode) for x in a], "f64", (a,))


@SETTINGS
@given(st.lists(st.tuples(f64_pair, f64s, st.integers(0, 3)), **LISTS), st.sampled_from(MODES))
def test_fma_f64(rows, mode):
    a = [r[0][0] for r in rows]
    b = [r[0][1] for r in rows]
    c = []
    for (x, y), z, kind in rows:
        p = x * y
        if kind == 1 and math.isfinite(p):  # cancellation
            z = -p + (z if math.isfinite(z) and abs(z) < abs(p) * 2.0 ** -40 else 0.0)
        elif kind == 2 and math.isfinite(p) and p != 0:  # c tiny / huge relative to a*b
            z = math.ldexp(1.0 if z >= 0 else -1.0, max(-1074, min(1023, math.frexp(p)[1] + (z > 0 and 130 or -130))))
        c.append(z)
    exp = [m_fma(x, y, z, "f64", mode) for x, y, z in zip(a, b, c)]
    check(N.ffma(arr64(a), arr64(b), arr64(c), mode), exp, "f64", (a, b, c))


EXACT_CASES_F32 = [
    # (op, a, b, mode, expected)
    ("add", 1.0, 2.0 ** -24, "rn", 1.0),                       # tie -> even (down)
    ("add", 1.0, 3 * 2.0 ** -24, "rn", 1.0 + 2 * 2.0 ** -23),  # tie -> even (up)
    ("add", 1.0, 2.0 ** -60, "rp", 1.0 + 2.0 ** -23),
    ("add", 1.0, -(2.0 ** -60), "rz", 1.0 - 2.0 ** -24),       # crosses the binade down
    ("add", 1.0, -(2.0 ** -60), "rm", 1.0 - 2.0 ** -24),
    ("add", 1.0, -(2.0 ** -60), "rn", 1.0),
    ("add", MAX32, MAX32, "rz", MAX32), ("add", MAX32, MAX32, "rm", MAX32),
    ("add", -MAX32, -MAX32, "rp", -MAX32), ("add", -MAX32, -MAX32, "rm", -INF),
    ("add", MAX32, 2.0 ** 103, "rn", INF),  # exactly halfway to 2**128 -> inf
    ("add", MAX32, 2.0 ** 102, "rn", MAX32),
    ("add", 1.0, -1.0, "rm", -0.0), ("add", 1.0, -1.0, "rn", 0.0), ("add", -0.0, -0.0, "rp", -0.0),
    ("mul", MIN_SUB32, 0.5, "rn", 0.0), ("mul", MIN_SUB32, 0.5, "rp", MIN_SUB32),
    ("mul", MIN_SUB32, 1.5, "rn", 2 * MIN_SUB32), ("mul", -MIN_SUB32, 0.25, "rm", -MIN_SUB32),
    ("mul", MIN_NORM32, 1.0 - 2.0 ** -24, "rn", MIN_NORM32),  # rounds up into the normals
]


@pytest.mark.parametrize("op,a,b,mode,exp", EXACT_CASES_F32)
def test_exact_cases_f32(op, a, b, mode, exp):
    fn = {"add": N.fadd, "mul": N.fmul}[op]
    got = fn(np.float32([a]), np.float32([b]), mode)
    assert f32_bits(got[0].item()) == f32_bits(exp)


def test_nan_policy():
    nanp = np.array([0x7FC12345], np.uint32).view(np.float32)
    r = N.fadd(nanp, np.float32([1.0]))
    assert N.as_bits(r)[0] == 0x7FFFFFFF
    assert N.as_bits(N.fmul(np.float32([INF]), np.float32([0.0])))[0] == 0x7FFFFFFF
    snan64 = np.array([0x7FF0000000000123], np.uint64).view(np.float64)
    assert N.as_bits(N.fadd(np.float64([1.0]), snan64))[0] == 0x7FF8000000000123
    assert N.as_bits(N.fsub(np.float64([1.0]), snan64))[0] == 0x7FF8000000000123
    assert N.as_bits(N.ffma(snan64, np.float64([NAN]), np.float64([1.0])))[0] == 0x7FF8000000000123
    assert N.as_bits(N.fadd(np.float64([INF]), np.float64([-INF])))[0] == 0xFFF8000000000000
    assert N.as_bits(N.fsqrt(np.float64([-1.0])))[0] == 0xFFF8000000000000
    # .sat: NaN -> +0, -0 -> +0, clamps
    r = N.fadd(np.float32([NAN, -0.0, 2.0, 0.25]), np.float32([0.0, -0.0, 0.0, 0.0]), sat=True)
    assert [f32_bits(x) for x in r.tolist()] == [0, 0, f32_bits(1.0), f32_bits(0.25)]
    # abs/neg are bit operations
    assert N.as_bits(N.fneg(nanp))[0] == 0xFFC12345
    assert N.as_bits(N.fabs(N.fneg(nanp)))[0] == 0x7FC12345


# ---------------------------------------------------------------------------
# min / max / abs / neg / copysign / testp / comparisons


@SETTINGS
@given(st.lists(f32_pair, **LISTS), st.booleans(), st.booleans())
def test_minmax_compare_f32(pairs, ftz, nan_mod):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    fa = [flush(x, "f32", ftz) for x in a]
    fb = [flush(x, "f32", ftz) for x in b]
    A, B = arr32(a), arr32(b)
    check(N.fmin(A, B, ftz, nan_mod), [m_minmax(x, y, True, nan_mod) for x, y in zip(fa, fb)], "f32", (a, b))
    check(N.fmax(A, B, ftz, nan_mod), [m_minmax(x, y, False, nan_mod) for x, y in zip(fa, fb)], "f32", (a, b))
    for op in N.CMP_OPS:
        got = N.fcompare(A, B, op, ftz)
        assert got.tolist() == [m_cmp(x, y, op) for x, y in zip(fa, fb)], op


@SETTINGS
@given(st.lists(f64_pair, **LISTS))
def test_bitops_testp_f64_f32(pairs):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    A, B = arr64(a), arr64(b)
    assert [f64_bits(x) for x in N.copysign(A, B).tolist()] == [
        (f64_bits(y) & ~(1 << 63)) | (f64_bits(x) & (1 << 63)) for x, y in zip(a, b)]
    assert [f64_bits(x) for x in N.fabs(A).tolist()] == [f64_bits(x) & ~(1 << 63) for x in a]
    assert [f64_bits(x) for x in N.fneg(A).tolist()] == [f64_bits(x) ^ (1 << 63) for x in a]
    for op, fn in [("finite", math.isfinite), ("infinite", math.isinf), ("notanumber", math.isnan),
                   ("number", lambda x: not math.isnan(x)),
                   ("subnormal", lambda x: math.isfinite(x) and 0 < abs(x) < 2.0 ** -1022),
                   ("normal", lambda x: math.isfinite(x) and not 0 < abs(x) < 2.0 ** -1022)]:
        assert N.testp(A, op).tolist() == [fn(x) for x in a], op
    A32 = arr32([float(np.float32(x)) if math.isfinite(x) else x for x in a])
    assert N.testp(A32, "subnormal").tolist() == [
        math.isfinite(x) and 0 < abs(x) < 2.0 ** -126 for x in A32.tolist()]


def test_minmax_specifics():
    assert N.as_bits(N.fmin(np.float32([0.0, -0.0]), np.float32([-0.0, 0.0]))).tolist() == [0x80000000] * 2
    assert N.as_bits(N.fmax(np.float32([0.0, -0.0]), np.float32([-0.0, 0.0]))).tolist() == [0, 0]
    r = N.fmin(np.float32([NAN, 1.0, NAN]), np.float32([2.0, NAN, NAN]))
    assert N.as_bits(r).tolist() == [f32_bits(2.0), f32_bits(1.0), 0x7FFFFFFF]
    r = N.fmax(np.float32([NAN, 1.0]), np.float32([2.0, 3.0]), nan=True)
    assert N.as_bits(r).tolist() == [0x7FFFFFFF, f32_bits(3.0)]
    assert N.fmin(np.float32([MIN_SUB32]), np.float32([-0.0]), ftz=True).tolist() == [-0.0]
    assert N.testp(np.float32([0.0, -0.0]), "normal").tolist() == [True, True]


# ---------------------------------------------------------------------------
# conversions

INT_RANGES = {t: (np.iinfo(d).min, np.iinfo(d).max) for t, d in N.INT_TYPES.items()}
IRND_MODEL = {"rni": round, "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}


def m_f2i(x, dst, irnd):
    if math.isnan(x):
        return 0
    lo, hi = INT_RANGES[dst]
    if math.isinf(x):
        return hi if x > 0 else lo
    v = IRND_MODEL[irnd](Fraction(x))
    return min(max(v, lo), hi)


@SETTINGS
@given(st.lists(st.one_of(f32s, st.integers(-2**65, 2**65).map(lambda i: float(np.float32(i))),
                          st.sampled_from([0.5, -0.5, 1.5, 2.5, -2.5, 2**31 - 128.0, 2.0**31, 2.0**63,
                                           -(2.0**63), 2.0**64, 255.5, -128.5, -0.99])), **LISTS),
       st.sampled_from(sorted(N.INT_TYPES)), st.sampled_from(["rni", "rzi", "rmi", "rpi"]), st.booleans())
def test_cvt_f2i(xs, dst, irnd, ftz):
    A = arr32(xs)
    got = N.cvt_f2i(A, dst, irnd, ftz)
    assert got.dtype == np.dtype(N.INT_TYPES[dst])
    assert [int(v) for v in got.tolist()] == [m_f2i(flush(x, "f32", ftz), dst, irnd) for x in xs]
    got64 = N.cvt_f2i(A.astype(np.float64), dst, irnd)
    assert [int(v) for v in got64.tolist()] == [m_f2i(x, dst, irnd) for x in xs]


def _ints_for(t):
    lo, hi = INT_RANGES[t]
    edges = [lo, hi, 0, 1, -1 if lo < 0 else 2, hi // 2, (1 << 24) + 1, (1 << 53) + 1, 2**62 + 2**38 + 2**37,
             2**63 - 2**39 - 1, 2**63 - 2**38, 2**64 - 2**39, 2**64 - 2**40 + 1]
    edges = [e for e in edges if lo <= e <= hi]
    return st.one_of(st.integers(lo, hi), st.sampled_from(edges),
                     st.integers(0, 40).flatmap(lambda s: st.integers(max(lo, -(1 << s) * 3), min(hi, (1 << s) * 3))))


@SETTINGS
@given(st.sampled_from(sorted(N.INT_TYPES)).flatmap(lambda t: st.tuples(st.just(t), st.lists(_ints_for(t), **LISTS))),
       st.sampled_from(["f32", "f64"]), st.sampled_from(MODES))
def test_cvt_i2f(src_vals, dst, mode):
    src, vals = src_vals
    got = N.cvt_i2f(np.array(vals, dtype=N.INT_TYPES[src]), src, dst, mode)
    exp = [round_exact(Fraction(v), dst, mode) if v else 0.0 for v in vals]
    check(got, exp, dst, (vals,))


@SETTINGS
@given(st.lists(f64s, **LISTS), st.sampled_from(MODES + ["rni", "rzi", "rmi", "rpi"]), st.booleans(), st.booleans())
def test_cvt_f2f(xs, rnd, ftz, do_sat):
    A = arr64(xs)
    got = N.cvt_f2f(A, "f32", rnd, ftz=ftz, sat=do_sat)
    exp = []
    for x in xs:
        if rnd in IRND_MODEL and math.isfinite(x):
            v = IRND_MODEL[rnd](Fraction(x))
            e = round_exact(Fraction(v), "f32", "rn") if v else math.copysign(0.0, x)
        elif math.isfinite(x) and x != 0:
            e = round_exact(Fraction(x), "f32", rnd)
        else:
            e = x
        e = flush(e, "f32", ftz)
        exp.append(sat(e) if do_sat else e)
    check(got, exp, "f32", (xs,))
    # widening is exact (ftz flushes the f32 source)
    B = A.astype(np.float32)
    wide = N.cvt_f2f(B, "f64", ftz=ftz)
    check(wide, [flush(float(x), "f32", ftz) for x in B.tolist()], "f64")


@SETTINGS
@given(st.sampled_from(sorted(N.INT_TYPES)).flatmap(lambda t: st.tuples(st.just(t), st.lists(_ints_for(t), **LISTS))),
       st.sampled_from(sorted(N.INT_TYPES)), st.booleans())
def test_cvt_i2i(src_vals, dst, do_sat):
    src, vals = src_vals
    got = N.cvt_i2i(np.array(vals, dtype=N.INT_TYPES[src]), src, dst, do_sat)
    lo, hi = INT_RANGES[dst]
    bits = np.dtype(N.INT_TYPES[dst]).itemsize * 8
    exp = []
    for v in vals:
        if do_sat:
            exp.append(min(max(v, lo), hi))
        else:
            w = v % (1 << bits)
            exp.append(w - (1 << bits) if lo < 0 and w > hi else w)
    assert got.dtype == np.dtype(N.INT_TYPES[dst])
    assert [int(x) for x in got.tolist()] == exp


def test_u64_to_f32_ties():
    # 2**62 + 2**38 is exactly halfway between two f32 neighbours: ties-to-even.
    v = np.array([2**62 + 2**38, 2**62 + 3 * 2**38, 2**62 + 2**38 + 1, 2**64 - 1], np.uint64)
    got = N.cvt_i2f(v, "u64", "f32", "rn").tolist()
    assert got == [2.0**62, 2.0**62 + 2**40, 2.0**62 + 2**39, 2.0**64]
    # numpy's own path double-rounds: (2**62 + 2**38 + 1) -> f64 -> f32
    assert N.cvt_i2f(v[2:3], "u64", "f32", "rz").tolist() == [2.0**62]
    assert N.cvt_i2f(v[3:], "u64", "f32", "rz").tolist() == [2.0**64 - 2**40]


# ---------------------------------------------------------------------------
# approximate math: PTX bounds and special values


@SETTINGS
@given(st.lists(f32s, **LISTS))
def test_approx_bounds(xs):
    A = arr32(xs)
    for name, fn, ref in [("sin", N.sin_approx, math.sin), ("cos", N.cos_approx, math.cos)]:
        for x, r in zip(xs, fn(A).tolist()):
            if math.isfinite(x) and abs(x) <= 100 * math.pi:
                bound = N.APPROX_BOUNDS[name]["bounds"][1][1]
                assert abs(r - ref(x)) <= bound, (name, x, r)
    for x, r in zip(xs, N.ex2_approx(A).tolist()):
        if math.isfinite(x) and -126 < x < 127:
            assert abs(r - 2.0 ** x) <= 2 * ulp32(2.0 ** x)
    for x, r in zip(xs, N.lg2_approx(A).tolist()):
        if math.isfinite(x) and x > 0:
            assert abs(r - math.log2(x)) <= 2.0 ** -22 * max(1.0, abs(math.log2(x)))
    for x, r in zip(xs, N.rsqrt_approx(A).tolist()):
        if math.isfinite(x) and x > 0:
            exact = 1 / math.sqrt(x)
            assert abs(r - exact) <= 2.0 ** -22.9 * exact
    for x, r in zip(xs, N.tanh_approx(A).tolist()):
        if math.isfinite(x) and x != 0:
            assert abs(r - math.tanh(x)) <= 2.0 ** -11 * abs(math.tanh(x))
    check(N.sqrt_approx(A), [m_sqrt(x, "f32", "rn") for x in xs], "f32")
    check(N.rcp_approx(A), [m_div(1.0, x, "f32", "rn") for x in xs], "f32")


def test_approx_special_values():
    x = np.float32([0.0, -0.0, INF, -INF, NAN, -1.0])
    b = lambda r: [f32_bits(v) if not math.isnan(v) else 0x7FFFFFFF for v in r.tolist()]  # noqa: E731
    assert b(N.sin_approx(x)) == b(np.float32([0.0, -0.0, NAN, NAN, NAN, math.sin(-1.0)]))
    assert b(N.cos_approx(x))[:5] == b(np.float32([1.0, 1.0, NAN, NAN, NAN]))
    assert b(N.lg2_approx(x)) == b(np.float32([-INF, -INF, INF, NAN, NAN, NAN]))
    assert b(N.ex2_approx(x)) == b(np.float32([1.0, 1.0, INF, 0.0, NAN, 0.5]))
    assert b(N.rcp_approx(x)) == b(np.float32([INF, -INF, 0.0, -0.0, NAN, -1.0]))
    assert b(N.rsqrt_approx(x)) == b(np.float32([INF, -INF, 0.0, NAN, NAN, NAN]))
    assert b(N.sqrt_approx(x)) == b(np.float32([0.0, -0.0, INF, NAN, NAN, NAN]))
    assert b(N.tanh_approx(x))[:5] == b(np.float32([0.0, -0.0, 1.0, -1.0, NAN]))
    assert N.as_bits(N.sin_approx(np.float32([MIN_SUB32]), ftz=True)).tolist() == [0]
    assert N.lg2_approx(np.float32([MIN_SUB32]), ftz=True).tolist() == [-INF]
    for k in ("sin", "cos", "lg2", "ex2", "rcp", "rsqrt", "sqrt", "tanh", "div.approx", "div.full"):
        assert N.APPROX_BOUNDS[k]["metric"] in ("abs", "rel", "ulp")


def test_div_approx_large_divisor():
    a = np.float32([1.0, INF, -3.0, 6.0])
    b = np.float32([2.0 ** 127, 2.0 ** 127, 2.0 ** 126 * 1.5, 3.0])
    r = N.div_approx_f32(a, b)
    assert N.as_bits(r).tolist() == [0, 0x7FFFFFFF, 0x80000000, f32_bits(2.0)]
    assert N.div_full_f32(a, b).tolist()[0] == 2.0 ** -127


# ---------------------------------------------------------------------------
# heavier campaigns (pytest -m slow)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(f64_pair, f64s), min_size=1, max_size=200), st.sampled_from(MODES))
def test_slow_f64_campaign(rows, mode):
    a = [r[0][0] for r in rows]
    b = [r[0][1] for r in rows]
    c = [r[1] for r in rows]
    A, B, C = arr64(a), arr64(b), arr64(c)
    check(N.ffma(A, B, C, mode), [m_fma(x, y, z, "f64", mode) for x, y, z in zip(a, b, c)], "f64")
    check(N.fdiv(A, B, mode), [m_div(x, y, "f64", mode) for x, y in zip(a, b)], "f64")
    check(N.fmul(A, B, mode), [m_mul(x, y, "f64", mode) for x, y in zip(a, b)], "f64")


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(f32_pair, f32s), min_size=1, max_size=200), st.sampled_from(MODES), st.booleans())
def test_slow_f32_campaign(rows, mode, ftz):
    a = [flush(r[0][0], "f32", ftz) for r in rows]
    b = [flush(r[0][1], "f32", ftz) for r in rows]
    c = [flush(r[1], "f32", ftz) for r in rows]
    fl = lambda x: flush(x, "f32", ftz)  # noqa: E731
    check(N.ffma(arr32(a), arr32(b), arr32(c), mode, ftz), [fl(m_fma(x, y, z, "f32", mode)) for x, y, z in zip(a, b, c)], "f32")
    check(N.fdiv(arr32(a), arr32(b), mode, ftz), [fl(m_div(x, y, "f32", mode)) for x, y in zip(a, b)], "f32")
    check(N.fsqrt(arr32(a), mode, ftz), [fl(m_sqrt(x, "f32", mode)) for x in a], "f32")
