"""Property tests of ptxvm.interp.numerics.half against an independent model: exact
rational arithmetic (fractions.Fraction) rounded to f16/bf16 by a plain
Python implementation of IEEE 754 rounding (PTX ISA 9.0, 9.7.4, 9.7.9.21)."""

from __future__ import annotations

import itertools
import math
import os
import struct
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxvm.interp.numerics import half as H

from models.half import (
    BF16_EDGES,
    CMP,
    F16_EDGES,
    FMT,
    NAN,
    decode,
    encode_round,
    ftz_in,
    fval,
    model_arith,
    model_convert,
    model_minmax,
)

FAST = settings(max_examples=int(os.environ.get("PTXVM_HYPOTHESIS_EXAMPLES", "30")), deadline=None)
SLOW = settings(max_examples=1500, deadline=None)


# ---------------------------------------------------------------------------


def f32_dec(u):
    return decode(u, "f32")


# ---------------------------------------------------------------------------


def hbits(fmt):
    edges = F16_EDGES if fmt == "f16" else BF16_EDGES
    return st.one_of(st.sampled_from(edges), st.integers(0, 0xFFFF))


def near_midpoints(fmt):
    """f32 values at, just below and just above a midpoint of two adjacent
    fmt values (ties for rn/rna)."""
    def build(h, delta):
        p, _ = FMT[fmt]
        d1, d2 = decode(h & 0x7FFE, fmt), decode((h & 0x7FFE) + 1, fmt)
        if d1[0] != "num" or d2[0] != "num":
            return 0
        mid = (d1[1] + d2[1]) / 2
        f = struct.unpack("<I", struct.pack("<f", float(mid)))[0]   # exact: <= 13 bits
        return (f + delta) & 0x7FFFFFFF | ((h & 0x8000) << 16)
    return st.builds(build, st.integers(0, 0xFFFF), st.sampled_from([-1, 0, 0, 1]))


F32_EDGES = [0, 0x80000000, 1, 0x007FFFFF, 0x00800000, 0x3F800000, 0x477FE000, 0x477FF000,
             0x477FEFFF, 0x47800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x33000000,
             0x33000001, 0x32FFFFFF, 0xB3000000, 0x387FC000, 0x38800000, 0x3F808000, 0x3F818000]
F32S = st.one_of(st.sampled_from(F32_EDGES), st.integers(0, 2**32 - 1))


def test_cvt_special_inputs():
    a = u32(F32_EDGES)
    for fmt in ("f16", "bf16"):
        for rnd in RNDS:
            for relu, satf in itertools.product((False, True), repeat=2):
                got = [int(v) for v in H.f32_to_half(a, fmt, rnd, relu=relu, satfinite=satf)]
                assert got == [model_convert(f32_dec(x), fmt, rnd, satfinite=satf, relu=relu) for x in F32_EDGES]


def u16(xs):
    return np.array(xs, np.uint16)


def u32(xs):
    return np.array(xs, np.uint32)


def lanes(strat, n=16):
    return st.lists(strat, min_size=1, max_size=n)


RNDS = ["rn", "rz", "rm", "rp"]


# ---------------------------------------------------------------------------

@FAST
@given(st.sampled_from(["f16", "bf16"]), lanes(st.one_of(F32S, near_midpoints("f16"), near_midpoints("bf16"))))
def test_cvt_f32_to_half(fmt, xs):
    a = u32(xs)
    for rnd in RNDS:
        got = [int(v) for v in H.f32_to_half(a, fmt, rnd)]
        assert got == [model_convert(f32_dec(x), fmt, rnd) for x in xs], rnd
    for rnd in ("rn", "rz"):
        for relu, satf in itertools.product((False, True), repeat=2):
            got = [int(v) for v in H.f32_to_half(a, fmt, rnd, relu=relu, satfinite=satf)]
            assert got == [model_convert(f32_dec(x), fmt, rnd, satfinite=satf, relu=relu) for x in xs]
    got = [int(v) for v in H.f32_to_half(a, fmt, "rn", sat=True)]
    assert got == [model_convert(f32_dec(x), fmt, "rn", sat=True) for x in xs]
    # .ftz flushes f32 subnormal inputs
    got = [int(v) for v in H.f32_to_half(a, fmt, "rp", ftz=True)]
    want = [model_convert(f32_dec(x & 0x80000000 if (x >> 23) & 0xFF == 0 else x), fmt, "rp") for x in xs]
    assert got == want


def test_cvt_matches_numpy_f16():
    xs = np.random.default_rng(1).integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    f = xs.view(np.float32)
    ok = ~np.isnan(f)
    with np.errstate(over="ignore"):
        want = f.astype(np.float16).view(np.uint16)
    got = H.f32_to_half(xs, "f16", "rn")
    assert np.array_equal(got[ok], want[ok])


@FAST
@given(lanes(F32S), lanes(F32S))
def test_cvt_x2_packing(xs, ys):
    n = min(len(xs), len(ys))
    xs, ys = xs[:n], ys[:n]
    for fmt in ("f16x2", "bf16x2"):
        got = H.cvt_x2_f32(u32(xs), u32(ys), fmt, "rz")
        f = fmt[:-2]
        want = [(model_convert(f32_dec(x), f, "rz") << 16) | model_convert(f32_dec(y), f, "rz")
                for x, y in zip(xs, ys)]
        assert [int(v) for v in got] == want


def test_cvt_x2_operand_order():
    one = struct.unpack("<I", struct.pack("<f", 1.0))[0]
    two = struct.unpack("<I", struct.pack("<f", 2.0))[0]
    # cvt.rn.f16x2.f32 d, a, b: a -> d[31:16], b -> d[15:0]
    assert int(H.cvt_x2_f32(one, two)[0]) == 0x3C004000
    assert int(H.cvt_x2_f32(one, two, "bf16x2")[0]) == 0x3F804000


@FAST
@given(st.sampled_from(["f16", "bf16"]), lanes(st.integers(0, 0xFFFF)))
def test_half_to_wider_and_cross(fmt, hs):
    a = u16(hs)
    f32 = H.half_to_f32(a, fmt)
    f64 = H.half_to_f64(a, fmt)
    other = "bf16" if fmt == "f16" else "f16"
    for h, x, y in zip(hs, f32, f64):
        d = decode(h, fmt)
        if d[0] == "nan":
            assert int(x) == 0x7FFFFFFF and int(y) == 0x7FFFFFFFFFFFFFFF
        else:
            assert decode(int(x), "f32")[:2] == d[:2]
            assert np.array(int(y), np.uint64).view(np.float64) == (
                float(d[1]) if d[0] == "num" else (-math.inf if d[1] else math.inf))
    for rnd in RNDS:
        got = [int(v) for v in H.half_to_half(a, fmt, other, rnd)]
        assert got == [model_convert(decode(h, fmt), other, rnd) for h in hs]


ITYPES = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]


@FAST
@given(st.sampled_from(["f16", "bf16"]), st.sampled_from(ITYPES), lanes(st.integers(0, 2**64 - 1)),
       st.sampled_from(RNDS))
def test_int_to_half(fmt, it, xs, rnd):
    w = int(it[1:])
    edges = [0, 1, (1 << w) - 1, 1 << (w - 1), (1 << (w - 1)) - 1, 65504, 65505, 65519, 65520, 2049, 2051]
    xs = [x & ((1 << w) - 1) for x in xs + edges]
    a = np.array(xs, np.uint64)
    got = [int(v) for v in H.int_to_half(a, it, fmt, rnd)]
    want = []
    for x in xs:
        v = x - (1 << w) if it[0] == "s" and x >> (w - 1) else x
        want.append(encode_round(Fraction(v), fmt, rnd))
    assert got == want


@FAST
@given(st.sampled_from(["f16", "bf16"]), st.sampled_from(ITYPES), lanes(hbits("f16")))
def test_half_to_int(fmt, it, hs):
    w = int(it[1:])
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if it[0] == "s" else (0, (1 << w) - 1)
    rfn = {"rni": lambda v: round(v), "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}
    for irnd, f in rfn.items():
        got = [int(v) for v in H.half_to_int(u16(hs), fmt, it, irnd)]
        want = []
        for h in hs:
            d = decode(h, fmt)
            if d[0] == "nan":
                v = 0
            elif d[0] == "inf":
                v = lo if d[1] else hi
            else:
                v = max(lo, min(hi, f(d[1])))      # Python round() is ties-to-even
            want.append(v & ((1 << w) - 1))
        assert got == want, irnd


# ---------------------------------------------------------------------------

@FAST
@given(st.sampled_from(["f16", "bf16"]), lanes(st.tuples(hbits("f16"), hbits("f16"), hbits("f16"))))
def test_arith(fmt, ts):
    if fmt == "bf16":
        ts = [tuple(((v & 0x8000) | ((v * 7) & 0x7FFF)) if i else v for i, v in enumerate(t)) for t in ts]
    a, b, c = (u16([t[i] for t in ts]) for i in range(3))
    for op in ("add", "sub", "mul"):
        got = [int(v) for v in getattr(H, op)(a, b, fmt)]
        assert got == [model_arith(op, t[:2], fmt) for t in ts], op
    got = [int(v) for v in H.fma(a, b, c, fmt)]
    assert got == [model_arith("fma", t, fmt) for t in ts]
    got = [int(v) for v in H.fma(a, b, c, fmt, relu=True)]
    assert got == [model_arith("fma", t, fmt, relu=True) for t in ts]
    if fmt == "f16":
        for op in ("add", "sub", "mul"):
            got = [int(v) for v in getattr(H, op)(a, b, fmt, ftz=True, sat=True)]
            assert got == [model_arith(op, t[:2], fmt, ftz=True, sat=True) for t in ts], op
            got = [int(v) for v in getattr(H, op)(a, b, fmt, ftz=True)]
            assert got == [model_arith(op, t[:2], fmt, ftz=True) for t in ts], op
        got = [int(v) for v in H.fma(a, b, c, fmt, ftz=True, sat=True)]
        assert got == [model_arith("fma", t, fmt, ftz=True, sat=True) for t in ts]


@FAST
@given(st.sampled_from(["f16", "bf16"]),
       lanes(st.tuples(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF),
                       st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF))))
def test_packed_x2(fmt, ts):
    a = u32([t[0] | (t[1] << 16) for t in ts])
    b = u32([t[2] | (t[3] << 16) for t in ts])
    c = u32([t[4] | (t[5] << 16) for t in ts])
    got = H.fma(a, b, c, fmt + "x2")
    want = [model_arith("fma", (t[0], t[2], t[4]), fmt) | (model_arith("fma", (t[1], t[3], t[5]), fmt) << 16)
            for t in ts]
    assert [int(v) for v in got] == want
    p, q = H.setp("lt", a, b, fmt + "x2")
    for t, pv, qv in zip(ts, p, q):
        lo_a, lo_b, hi_a, hi_b = decode(t[0], fmt), decode(t[2], fmt), decode(t[1], fmt), decode(t[3], fmt)

        def lt(x, y):
            if x[0] == "nan" or y[0] == "nan":
                return False
            fx = float(x[1]) if x[0] == "num" else (-math.inf if x[1] else math.inf)
            fy = float(y[1]) if y[0] == "num" else (-math.inf if y[1] else math.inf)
            return fx < fy
        assert bool(pv) == lt(lo_a, lo_b) and bool(qv) == lt(hi_a, hi_b)


def test_fma_no_double_rounding():
    # a*b + c = 16 + 2^-7 + 2^-27: just above the midpoint of 0x4C00/0x4C01.
    # Rounding a*b + c to f32 first lands exactly on the midpoint and ties to
    # 0x4C00; the single rounding PTX specifies gives 0x4C01.
    a, b, c = 0xA001, 0x3BFE, 0x4C01
    assert int(H.fma(a, b, c, "f16")[0]) == 0x4C01 == model_arith("fma", (a, b, c), "f16")
    # bf16: 7 * 37 = 259 is the midpoint of 258 (0x4381) and 260 (0x4382);
    # c = -2^-100 lies 108 bits below, beyond float64: only the TwoSum tail
    # tells that the exact sum is below the tie (rounding s alone gives 260).
    a, b = 0x40E0, 0x4214
    assert int(H.fma(a, b, 0x8D80, "bf16")[0]) == model_arith("fma", (a, b, 0x8D80), "bf16") == 0x4381
    assert int(H.fma(a, b, 0x0D80, "bf16")[0]) == model_arith("fma", (a, b, 0x0D80), "bf16") == 0x4382
    assert int(H.fma(a, b, 0x0000, "bf16")[0]) == 0x4382     # exact tie: even


def test_zero_signs_and_specials():
    nz, pz = 0x8000, 0x0000
    assert int(H.add(nz, nz)[0]) == 0x8000
    assert int(H.add(nz, pz)[0]) == 0x0000
    assert int(H.sub(pz, pz)[0]) == 0x0000
    assert int(H.mul(nz, 0x3C00)[0]) == 0x8000
    assert int(H.add(0x7C00, 0xFC00)[0]) == 0x7FFF
    assert int(H.add(0x7C00, 0xFC00, sat=True)[0]) == 0
    assert int(H.add(0x7BFF, 0x7BFF)[0]) == 0x7C00
    assert int(H.add(0x7E12, 0x3C00)[0]) == 0x7FFF   # canonical NaN
    assert int(H.mul(0x0001, 0x3800, ftz=False)[0]) == 0x0000   # 2^-25 ties to even 0
    assert int(H.mul(0x0003, 0x3800)[0]) == 0x0002              # 1.5 ulp -> 2 (even)


# ---------------------------------------------------------------------------


@FAST
@given(st.sampled_from(["f16", "bf16"]), lanes(st.tuples(hbits("f16"), hbits("f16"))))
def test_neg_abs_min_max(fmt, ts):
    a, b = u16([t[0] for t in ts]), u16([t[1] for t in ts])
    assert [int(v) for v in H.neg(a, fmt)] == [t[0] ^ 0x8000 for t in ts]
    assert [int(v) for v in H.abs_(a, fmt)] == [t[0] & 0x7FFF for t in ts]
    for want_min, fn in ((True, H.min_), (False, H.max_)):
        for nan, xs in itertools.product((False, True), repeat=2):
            got = [int(v) for v in fn(a, b, fmt, nan=nan, xorsign_abs=xs)]
            assert got == [model_minmax(x, y, fmt, want_min, nan, xs) for x, y in ts]
    if fmt == "f16":
        got = [int(v) for v in H.min_(a, b, fmt, ftz=True)]
        assert got == [model_minmax(ftz_in(x, fmt), ftz_in(y, fmt), fmt, True) for x, y in ts]


@FAST
@given(st.sampled_from(["f16", "bf16"]), lanes(st.tuples(hbits("f16"), hbits("f16"))))
def test_setp(fmt, ts):
    a, b = u16([t[0] for t in ts]), u16([t[1] for t in ts])
    for cmp, f in CMP.items():
        got = list(H.setp(cmp, a, b, fmt))
        want = []
        for x, y in ts:
            dx, dy = decode(x, fmt), decode(y, fmt)
            u = dx[0] == "nan" or dy[0] == "nan"
            want.append(f(0, 0, u) if u else f(fval(dx), fval(dy), u))
        assert got == want, cmp


# ---------------------------------------------------------------------------

BOUNDS = {("ex2", "f16"): 2 ** -9.9, ("ex2", "bf16"): 2 ** -7,
          ("tanh", "f16"): 2 ** -10.987, ("tanh", "bf16"): 2 ** -8}


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@pytest.mark.parametrize("fn", ["ex2", "tanh"])
def test_approx_exhaustive(fn, fmt):
    hs = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)
    if fn == "ex2":
        got = H.ex2_approx(hs, fmt, ftz=(fmt == "bf16"))
        ref = np.exp2
    else:
        got = H.tanh_approx(hs, fmt)
        ref = np.tanh
    x = H._to_f64(hs, H._fmt(fmt)[0], ftz=(fmt == "bf16" and fn == "ex2"))
    with np.errstate(over="ignore", invalid="ignore"):
        exact = ref(x)
    y = H._to_f64(got, H._fmt(fmt)[0])
    nan = np.isnan(x)
    assert np.all(np.isnan(y[nan]))
    fin = ~nan & np.isfinite(exact) & (np.abs(exact) >= (6.2e-5 if fmt == "f16" else 1.2e-38))
    fin &= np.isfinite(y)
    rel = np.abs(y[fin] - exact[fin]) / np.abs(exact[fin])
    assert rel.max() <= BOUNDS[(fn, fmt)]
    # exact special values
    if fn == "ex2":
        inf = 0x7C00 if fmt == "f16" else 0x7F80
        assert int(H.ex2_approx(inf, fmt)[0]) == inf
        assert int(H.ex2_approx(inf | 0x8000, fmt)[0]) == 0
        one = 0x3C00 if fmt == "f16" else 0x3F80
        assert int(H.ex2_approx(0, fmt)[0]) == one


# ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_slow_random_arith(fmt):
    rng = np.random.default_rng(7)
    n = 30000
    edges = F16_EDGES if fmt == "f16" else BF16_EDGES
    vals = rng.integers(0, 0x10000, (3, n))
    mask = rng.random((3, n)) < 0.2
    vals = np.where(mask, np.array(edges)[rng.integers(0, len(edges), (3, n))], vals)
    a, b, c = (vals[i].astype(np.uint16) for i in range(3))
    for op in ("add", "sub", "mul"):
        got = getattr(H, op)(a, b, fmt)
        assert [int(v) for v in got] == [model_arith(op, (int(x), int(y)), fmt) for x, y in zip(a, b)]
    got = H.fma(a, b, c, fmt)
    assert [int(v) for v in got] == [model_arith("fma", (int(x), int(y), int(z)), fmt)
                                     for x, y, z in zip(a, b, c)]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_slow_exhaustive_f32_to_half_rounding(fmt):
    # every half value's neighbourhood: midpoints +-1 f32 ulp, all modes
    hs = list(range(0, 0x7C00 if fmt == "f16" else 0x7F80))
    xs = []
    for h in hs[::3]:
        d1, d2 = decode(h, fmt), decode(h + 1, fmt)
        if d2[0] != "num":
            continue
        mid = struct.unpack("<I", struct.pack("<f", float((d1[1] + d2[1]) / 2)))[0]
        xs += [mid - 1, mid, mid + 1, mid | 0x80000000]
    a = u32(xs)
    for rnd in RNDS + ["rna"]:
        got = [int(v) for v in H.f32_to_half(a, fmt, rnd)]
        assert got == [model_convert(f32_dec(x), fmt, rnd) for x in xs], rnd


@FAST
@given(st.sampled_from(["f16", "bf16"]), lanes(st.one_of(
    st.integers(0, 2**64 - 1),
    st.sampled_from([0, 2**63, 0x3FF0000000000001, 0x3FF0020000000000, 0x3FF0020000000001,
                     0x40EFFE0000000000, 0x40EFFE0000000001, 0x7FF0000000000000, 0x7FF8000000000000]))))
def test_cvt_f64_to_half(fmt, xs):
    a = np.array(xs, np.uint64)
    for rnd in RNDS:
        got = [int(v) for v in H.f64_to_half(a, fmt, rnd)]
        want = []
        for x in xs:
            f = struct.unpack("<d", struct.pack("<Q", x))[0]
            if math.isnan(f):
                d = ("nan",)
            elif math.isinf(f):
                d = ("inf", f < 0)
            else:
                d = ("num", Fraction(f), bool(x >> 63))
            want.append(model_convert(d, fmt, rnd))
        assert got == want, rnd


@FAST
@given(st.sampled_from(["f16", "bf16"]), lanes(hbits("f16")))
def test_half_rint(fmt, hs):
    rfn = {"rni": lambda v: round(v), "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}
    for irnd, f in rfn.items():
        got = [int(v) for v in H.half_rint(u16(hs), fmt, irnd)]
        want = []
        for h in hs:
            d = decode(h, fmt)
            if d[0] == "nan":
                want.append(NAN[fmt])
            elif d[0] == "inf":
                want.append(h)
            else:
                r = f(d[1])
                want.append(encode_round(Fraction(r), fmt, "rn", neg_zero=d[2]))
        assert got == want, irnd
