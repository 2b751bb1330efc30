"""Bit-exactness tests for the LLVM float emitters (``ptxvm.lift.semantics.fp``), JIT-compiled on the host.

Each emitter (one compile per function and modifier set, cached) runs over batches of raw bit
patterns; expected results come from the exact Fraction-based models of ``test_numerics``
(IEEE 754 rounding written out from the standard and the PTX ISA), with the PTX result
policies written out here: every f32 NaN result is 0x7fffffff, an f64 NaN result is the
first NaN operand quieted (else 0xfff8000000000000), ``.ftz`` flushes f32 subnormal inputs
and results, ``.sat`` clamps to [0, 1] with NaN -> +0.  The ``.approx`` functions are
checked against the PTX ISA's error bounds and special-value tables instead.

Inputs: every pair of edge values (signed zeros, infinities, NaN payloads, subnormals,
max-finite, rounding ties), seeded random bit patterns, operand pairs with close exponents
(cancellation, ties), results targeted at the subnormal range and at overflow, plus
hypothesis-generated lists.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llvmlite import ir

from ptxvm.errors import UnsupportedError
from ptxvm.interp.numerics import APPROX_BOUNDS
from ptxvm.lift.semantics import fp

from models.lift_harness import elementwise
from models.numerics import (
    EDGE32,
    EDGE64,
    f32_bits,
    f32_from_bits,
    f32_pair,
    f64_bits,
    f64_from_bits,
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
    sat,
    ulp32,
)

MODES = ("rn", "rz", "rm", "rp")
CANON32, CANON64, QUIET64 = 0x7FFFFFFF, 0xFFF8000000000000, 1 << 51
HYP = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
U = {"f32": np.uint32, "f64": np.uint64}

# ================================================================================ harness


@functools.cache
def kernel(name: str, t: str, n: int, out: str | None = None, opt: int = 0, **mods) -> Callable[..., np.ndarray]:
    """``fp.<name>`` with modifiers ``mods`` JIT-compiled over ``n`` inputs of type ``t``.

    Unoptimised by default (compiles 4x faster); :func:`test_optimised_builds_agree` checks
    that the O2 pipeline gives the same bits."""
    fn = getattr(fp, name)
    return elementwise(lambda b, *xs: fn(b, *xs, **mods), [t] * n, out or t, opt=opt)


def to_float(u: int, t: str) -> float:
    return f32_from_bits(u) if t == "f32" else f64_from_bits(u)


def is_nan_bits(u: int, t: str) -> bool:
    e, f = (0x7F800000, 0x7FFFFF) if t == "f32" else (0x7FF0000000000000, (1 << 52) - 1)
    return (u & e) == e and (u & f) != 0


def expect(v: float, t: str, ins: Sequence[int]) -> int:
    """Bits of a model result under the PTX NaN policy (``ins``: operand bits, in order)."""
    if math.isnan(v):
        if t == "f32":
            return CANON32
        return next((u | QUIET64 for u in ins if is_nan_bits(u, "f64")), CANON64)
    return f32_bits(v) if t == "f32" else f64_bits(v)


def check(got: np.ndarray, exp: Sequence[int], *ins: np.ndarray, what: str = "") -> None:
    got = [int(g) for g in got]
    bad = [i for i, (g, e) in enumerate(zip(got, exp)) if g != e]
    if bad:
        lines = [f"{what}: {len(bad)} of {len(exp)} differ"]
        for i in bad[:8]:
            lines.append(f"  in={[hex(int(x[i])) for x in ins]} got={hex(got[i])} exp={hex(exp[i])}")
        pytest.fail("\n".join(lines))


# ================================================================================ inputs

EDGE_BITS = {"f32": [f32_bits(x) for x in EDGE32] + [0x7FC12345, 0xFF800001, 0x7F800001, 0x00000003,
                                                    0x807FFFFE, 0x3F800001, 0x4B800001, 0x33800000],
             "f64": [f64_bits(x) for x in EDGE64] + [0x7FF0000000000123, 0xFFF8000000ABCDEF,
                                                    0x0000000000000003, 0x800FFFFFFFFFFFFE,
                                                    0x3FF0000000000001, 0x4340000000000001,
                                                    0x3CA0000000000000]}
LAYOUT = {"f32": (8, 23), "f64": (11, 52)}


def make(t: str, sign, exp, mant) -> np.ndarray:
    eb, mb = LAYOUT[t]
    ut = U[t]
    return ((np.asarray(sign, ut) << ut(eb + mb)) | (np.asarray(exp, ut) << ut(mb)) | np.asarray(mant, ut)).astype(ut)


def exponent(t: str, u: np.ndarray) -> np.ndarray:
    eb, mb = LAYOUT[t]
    return ((u >> U[t](mb)) & U[t]((1 << eb) - 1)).astype(np.int64)


def rand_bits(rng: np.random.Generator, t: str, n: int) -> np.ndarray:
    """Mixture: uniform bit patterns, normals of moderate exponent, subnormals, edge values."""
    eb, mb = LAYOUT[t]
    emax = (1 << eb) - 1
    bias = emax >> 1
    k = n // 4
    uni = rng.integers(0, 1 << (eb + mb + 1), n - 3 * k, dtype=np.uint64).astype(U[t])
    mid = make(t, rng.integers(0, 2, k), rng.integers(bias - 40, bias + 40, k), rng.integers(0, 1 << mb, k))
    sub = make(t, rng.integers(0, 2, k), 0, rng.integers(0, 1 << mb, k))
    edge = rng.choice(np.array(EDGE_BITS[t], U[t]), k)
    return np.concatenate([uni, mid, sub, edge])


def near(rng: np.random.Generator, t: str, a: np.ndarray, spread: int) -> np.ndarray:
    """Operands whose exponent is within ``spread`` of ``a``'s (cancellation, ties, sticky bits)."""
    eb, mb = LAYOUT[t]
    n = a.size
    e = np.clip(exponent(t, a) + rng.integers(-spread, spread + 1, n), 0, (1 << eb) - 2)
    mant = rng.integers(0, 1 << mb, n)
    # a third of them keep few mantissa bits, so exact halfway cases and exact zeros are common
    few = rng.random(n) < 0.33
    mant = np.where(few, mant & ~((1 << (mb - 3)) - 1), mant)
    return make(t, rng.integers(0, 2, n), e, mant)


def pairs(t: str, seed: int, n: int, grid: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of edge values (if ``grid``), ``n`` random pairs, ``n`` close-exponent pairs."""
    rng = np.random.default_rng(seed)
    edges = np.array(EDGE_BITS[t], U[t])
    ea, eb_ = np.meshgrid(edges, edges) if grid else (edges[:0], edges[:0])
    a1 = rand_bits(rng, t, n)
    b1 = rand_bits(rng, t, n)
    a2 = rand_bits(rng, t, n)
    b2 = near(rng, t, a2, {"f32": 26, "f64": 55}[t])
    return (np.concatenate([ea.ravel(), a1, a2]).astype(U[t]),
            np.concatenate([eb_.ravel(), b1, b2]).astype(U[t]))


def f64_scaled_pairs(seed: int, n: int, op: str) -> tuple[np.ndarray, np.ndarray]:
    """f64 operand pairs whose product (``mul``) or quotient (``div``) lands near the subnormal
    range (exponent sum/difference around -1074..-1000) or near overflow."""
    rng = np.random.default_rng(seed)
    ea = rng.integers(1, 2046, n)
    target = np.where(rng.random(n) < 0.8, rng.integers(-1080, -1015, n), rng.integers(1015, 1025, n))
    eb = target + 2 * 1023 - ea if op == "mul" else ea - target
    ok = (eb >= 0) & (eb <= 2046)
    ea, eb = ea[ok], eb[ok]
    m = rng.integers(0, 1 << 52, (2, ea.size))
    few = rng.random(ea.size) < 0.4
    m[1] = np.where(few, m[1] & ~((1 << 46) - 1), m[1])        # short mantissas: exact/tie cases
    a = make("f64", rng.integers(0, 2, ea.size), ea, m[0])
    bb = make("f64", rng.integers(0, 2, ea.size), eb, m[1])
    return a, bb


# ======================================================================= model evaluation


def model_binary(op: str, t: str, a: np.ndarray, b: np.ndarray, rnd: str, ftz: bool) -> list[float]:
    """Model results (after the .ftz output flush, before .sat)."""
    out = []
    for ua, ub in zip(a.tolist(), b.tolist()):
        x, y = flush(to_float(ua, t), t, ftz), flush(to_float(ub, t), t, ftz)
        if op == "fadd":
            v = m_add(x, y, t, rnd)
        elif op == "fsub":
            v = m_add(x, -y, t, rnd)
        elif op == "fmul":
            v = m_mul(x, y, t, rnd)
        else:
            v = m_div(x, y, t, rnd)
        out.append(flush(v, t, ftz))
    return out


def expected(raw: Sequence[float], t: str, ins: Sequence[np.ndarray], do_sat: bool) -> list[int]:
    cols = [x.tolist() for x in ins]
    return [expect(sat(v) if do_sat else v, t, [c[i] for c in cols]) for i, v in enumerate(raw)]


def run_binary(op: str, t: str, a, b, rnd: str, ftz: bool = False, sats: Sequence[bool] = (False,),
               raw: Sequence[float] | None = None) -> None:
    raw = model_binary(op, t, a, b, rnd, ftz) if raw is None else raw
    for do_sat in sats:
        mods = {"kind": rnd, "ftz": ftz} if op == "fdiv" else {"rnd": rnd, "ftz": ftz, "sat": do_sat}
        got = kernel(op, t, 2, **mods)(a, b)
        check(got, expected(raw, t, (a, b), do_sat), a, b, what=f"{op}.{rnd} ftz={ftz} sat={do_sat} {t}")


# ============================================================================ add sub mul div

@pytest.mark.parametrize("rnd", MODES)
@pytest.mark.parametrize("op", ["fadd", "fsub", "fmul"])
@pytest.mark.parametrize("ftz", [False, True])
def test_add_sub_mul_f32(op, rnd, ftz):
    # the edge grid once per (op, mode); random edge values still appear with .ftz
    a, b = pairs("f32", seed=zlib.crc32(f"{op}{rnd}{ftz}".encode()), n=150, grid=not ftz)
    run_binary(op, "f32", a, b, rnd, ftz, sats=(False, True))


@pytest.mark.parametrize("rnd", MODES)
@pytest.mark.parametrize("op", ["fadd", "fsub", "fmul"])
def test_add_sub_mul_f64(op, rnd):
    a, b = pairs("f64", seed=7 + MODES.index(rnd), n=250)
    if op == "fmul":
        sa, sb = f64_scaled_pairs(11 + MODES.index(rnd), 400, "mul")
        a, b = np.concatenate([a, sa]), np.concatenate([b, sb])
    run_binary(op, "f64", a, b, rnd)


@pytest.mark.parametrize("rnd", MODES)
@pytest.mark.parametrize("ftz", [False, True])
def test_div_f32(rnd, ftz):
    a, b = pairs("f32", seed=21 + MODES.index(rnd), n=250, grid=not ftz)
    run_binary("fdiv", "f32", a, b, rnd, ftz)


@pytest.mark.parametrize("rnd", MODES)
def test_div_f64(rnd):
    a, b = pairs("f64", seed=31 + MODES.index(rnd), n=200)
    sa, sb = f64_scaled_pairs(41 + MODES.index(rnd), 400, "div")
    run_binary("fdiv", "f64", np.concatenate([a, sa]), np.concatenate([b, sb]), rnd)


EXACT_CASES = [
    # (op, type, a, b, mode, expected): hand-checked from the ISA/IEEE rules
    ("fadd", "f32", 1.0, 2.0 ** -24, "rn", 1.0),                          # tie -> even
    ("fadd", "f32", 1.0, -(2.0 ** -60), "rz", 1.0 - 2.0 ** -24),          # crosses the binade
    ("fadd", "f32", 1.0, -(2.0 ** -60), "rm", 1.0 - 2.0 ** -24),
    ("fadd", "f32", 1.0, 2.0 ** -60, "rp", 1.0 + 2.0 ** -23),
    ("fadd", "f32", f32_from_bits(0x7F7FFFFF), 2.0 ** 103, "rn", math.inf),   # halfway to 2**128
    ("fadd", "f32", f32_from_bits(0x7F7FFFFF), 2.0 ** 103, "rz", f32_from_bits(0x7F7FFFFF)),
    ("fadd", "f32", -f32_from_bits(0x7F7FFFFF), -(2.0 ** 103), "rp", -f32_from_bits(0x7F7FFFFF)),
    ("fadd", "f32", 1.0, -1.0, "rm", -0.0), ("fadd", "f32", 1.0, -1.0, "rp", 0.0),
    ("fmul", "f32", 2.0 ** -149, 0.5, "rn", 0.0), ("fmul", "f32", 2.0 ** -149, 0.5, "rp", 2.0 ** -149),
    ("fmul", "f32", -(2.0 ** -149), 0.25, "rm", -(2.0 ** -149)),
    ("fmul", "f64", 5e-324, 0.5, "rn", 0.0), ("fmul", "f64", 5e-324, 0.75, "rn", 5e-324),
    ("fmul", "f64", 5e-324, 0.5, "rp", 5e-324), ("fmul", "f64", -5e-324, 0.5, "rm", -5e-324),
    ("fmul", "f64", 3 * 5e-324, 0.5, "rn", 2 * 5e-324),                    # 1.5 -> 2 (even)
    ("fmul", "f64", 2.0 ** -1022, 1 - 2.0 ** -53, "rz", 2.0 ** -1022 - 5e-324),
    ("fmul", "f64", 2.0 ** -1022, 1 - 2.0 ** -53, "rn", 2.0 ** -1022),
    ("fmul", "f64", 2.0 ** 1023, 2.0, "rz", 1.7976931348623157e308),
    ("fmul", "f64", 2.0 ** 1023, -2.0, "rp", -1.7976931348623157e308),
    ("fmul", "f64", 2.0 ** 1023, -2.0, "rm", -math.inf),
    ("fadd", "f64", 1.7976931348623157e308, 2.0 ** 970, "rn", math.inf),
    ("fadd", "f64", 1.7976931348623157e308, 2.0 ** 970, "rz", 1.7976931348623157e308),
    ("fadd", "f64", 1.0, -(2.0 ** -100), "rz", 1.0 - 2.0 ** -53),
    ("fdiv", "f64", 1.0, 3.0, "rp", 0.33333333333333337), ("fdiv", "f64", 1.0, 3.0, "rz", 0.3333333333333333),
    ("fdiv", "f64", 5e-324, 2.0, "rp", 5e-324), ("fdiv", "f64", 5e-324, -2.0, "rz", -0.0),
]


@pytest.mark.parametrize("op,t,a,b,rnd,exp", EXACT_CASES)
def test_exact_cases(op, t, a, b, rnd, exp):
    mods = {"kind": rnd} if op == "fdiv" else {"rnd": rnd}
    to = f32_bits if t == "f32" else f64_bits
    got = kernel(op, t, 2, **mods)(np.array([to(a)], U[t]), np.array([to(b)], U[t]))
    assert int(got[0]) == to(exp), (op, a, b, rnd, hex(int(got[0])), exp)


# =================================================================================== fma


def fma_rows(t: str, seed: int, n: int, grid: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Triples: random/edge operands, c cancelling most of a*b, c far above or below a*b,
    products near the subnormal range (f64) and a few exact-zero results."""
    rng = np.random.default_rng(seed)
    a, b = pairs(t, seed, n)
    a, b = a[-4 * n:], b[-4 * n:]            # skip most of the edge grid (covered below)
    m = a.size
    fl = np.float32 if t == "f32" else np.float64
    with np.errstate(all="ignore"):
        p = a.view(fl) * b.view(fl)
        c_rand = rand_bits(rng, t, m)
        small = near(rng, t, p.view(U[t]), 30).view(fl)
        c_cancel = (-p + np.where(rng.random(m) < 0.5, small * fl(2.0 ** -20), fl(0))).astype(fl)
        shift = rng.integers(-140, 140, m)
        c_far = np.ldexp(np.where(rng.random(m) < 0.5, -1.0, 1.0), np.clip(np.frexp(p.astype(np.float64))[1] + shift,
                                                                            -1074 if t == "f64" else -149, 127 if t == "f32" else 1023)).astype(fl)
    kind = rng.integers(0, 3, m)
    c = np.where(kind == 0, c_rand, np.where(kind == 1, c_cancel.view(U[t]), c_far.view(U[t]))).astype(U[t])
    edges = np.array(EDGE_BITS[t], U[t])
    # the first edge values are ±0, ±inf, NaN, ±1, 0.5 ...: every special-case combination
    ga, gb, gc = (g.ravel() for g in np.meshgrid(edges[:grid], edges[:grid], edges[:2 * grid]))
    parts_a, parts_b, parts_c = [a, ga], [b, gb], [c, gc]
    if t == "f64":
        sa, sb = f64_scaled_pairs(seed + 1, n, "mul")
        with np.errstate(all="ignore"):
            psub = sa.view(np.float64) * sb.view(np.float64)
        sc = np.where(rng.random(sa.size) < 0.5, (-psub).view(np.uint64), rand_bits(rng, "f64", sa.size))
        sc = np.where(rng.random(sa.size) < 0.5, make("f64", rng.integers(0, 2, sa.size), 0,
                                                      rng.integers(0, 1 << 52, sa.size)), sc)
        parts_a.append(sa), parts_b.append(sb), parts_c.append(sc.astype(np.uint64))
    return tuple(np.concatenate(x).astype(U[t]) for x in (parts_a, parts_b, parts_c))


def model_fma(t, a, b, c, rnd, ftz, do_sat) -> list[int]:
    return expected(raw_fma(t, a, b, c, rnd, ftz), t, (a, b, c), do_sat)


def raw_fma(t, a, b, c, rnd, ftz) -> list[float]:
    out = []
    for ua, ub, uc in zip(a.tolist(), b.tolist(), c.tolist()):
        x, y, z = (flush(to_float(u, t), t, ftz) for u in (ua, ub, uc))
        out.append(flush(m_fma(x, y, z, t, rnd), t, ftz))
    return out


@functools.cache
def fma_case(t: str, seed: int, n: int, rnd: str, ftz: bool):
    rows = fma_rows(t, seed, n)
    return rows, raw_fma(t, *rows, rnd, ftz)


@pytest.mark.parametrize("rnd", MODES)
@pytest.mark.parametrize("ftz", [False, True])
def test_fma_f32(rnd, ftz):
    (a, b, c), raw = fma_case("f32", 51, 120, rnd, ftz)
    for do_sat in (False, True):
        got = kernel("ffma", "f32", 3, rnd=rnd, ftz=ftz, sat=do_sat)(a, b, c)
        check(got, expected(raw, "f32", (a, b, c), do_sat), a, b, c, what=f"fma.{rnd} ftz={ftz} sat={do_sat}")


@pytest.mark.parametrize("rnd", MODES)
def test_fma_f64(rnd):
    a, b, c = fma_rows("f64", 61 + MODES.index(rnd), 250)
    got = kernel("ffma", "f64", 3, rnd=rnd)(a, b, c)
    check(got, model_fma("f64", a, b, c, rnd, False, False), a, b, c, what=f"fma.{rnd}.f64")


def test_fma_f64_hard_cases():
    """Hand-picked: sticky far below, result exactly on a subnormal tie, exact cancellation."""
    tiny, dmax = 5e-324, 1.7976931348623157e308
    rows = [
        (1.0, 1.0, 2.0 ** -200),                  # c is only a sticky bit
        (1.0, 1.0, -(2.0 ** -200)),
        (2.0 ** -600, 2.0 ** -600, 1.0),          # product is only a sticky bit
        (-(2.0 ** -600), 2.0 ** -600, 1.0),
        (2.0 ** -537, 2.0 ** -538, 0.0),          # product exactly 2**-1075: a subnormal tie
        (2.0 ** -537, 2.0 ** -538, tiny),         # 1.5 units -> 2
        (2.0 ** -537, 3 * 2.0 ** -539, -tiny),    # 0.75 - 1 = -0.25 units
        (1.5, 1.5, -2.25), (-1.5, 1.5, 2.25),     # exact zeros
        (0.0, -1.0, 0.0), (-0.0, -1.0, -0.0),
        (dmax, 2.0, -dmax), (dmax, 1.0, 2.0 ** 970), (dmax, -1.0, -(2.0 ** 970)),
        (2.0 ** -1022, 1 - 2.0 ** -53, 0.0), (3.0, 1 / 3, -1.0),
    ]
    a, b, c = (np.array([f64_bits(r[i]) for r in rows], np.uint64) for i in range(3))
    for rnd in MODES:
        got = kernel("ffma", "f64", 3, rnd=rnd)(a, b, c)
        check(got, model_fma("f64", a, b, c, rnd, False, False), a, b, c, what=f"fma.{rnd}.f64")


@pytest.mark.parametrize("ftz", [False, True])
def test_mad_legacy_is_fused_rn(ftz):
    (a, b, c), raw = fma_case("f32", 51, 120, "rn", ftz)      # the rows of test_fma_f32
    for do_sat in (False, True):
        got = kernel("fmad_f32_legacy", "f32", 3, ftz=ftz, sat=do_sat)(a, b, c)
        check(got, expected(raw, "f32", (a, b, c), do_sat), a, b, c, what="mad.f32")


# ========================================================================= sqrt and rcp


def model_unary(fn, t, a, ftz) -> list[int]:
    return [expect(flush(fn(flush(to_float(u, t), t, ftz)), t, ftz), t, (u,)) for u in a.tolist()]


def unary_inputs(t: str, seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rand_bits(rng, t, n)
    mb = LAYOUT[t][1]
    # perfect squares and their neighbours: the remainder is zero or tiny
    m = rng.integers(1, 1 << ((mb + 1) // 2), n // 4).astype(np.float64)
    sq = (m * m).astype(np.float32 if t == "f32" else np.float64)
    span = 30 if t == "f32" else 400
    sq = np.ldexp(sq, rng.integers(-span, span, sq.size) * 2).astype(sq.dtype).view(U[t])
    return np.concatenate([np.array(EDGE_BITS[t], U[t]), x, sq, sq + U[t](1), sq - U[t](1)]).astype(U[t])


@pytest.mark.parametrize("rnd", MODES)
@pytest.mark.parametrize("t,ftz", [("f32", False), ("f32", True), ("f64", False)])
def test_sqrt_rcp(t, rnd, ftz):
    a = unary_inputs(t, 81 + MODES.index(rnd), 250)
    got = kernel("fsqrt", t, 1, kind=rnd, ftz=ftz)(a)
    check(got, model_unary(lambda x: m_sqrt(x, t, rnd), t, a, ftz), a, what=f"sqrt.{rnd} {t} ftz={ftz}")
    got = kernel("frcp", t, 1, kind=rnd, ftz=ftz)(a)
    check(got, model_unary(lambda x: m_div(1.0, x, t, rnd), t, a, ftz), a, what=f"rcp.{rnd} {t} ftz={ftz}")


@pytest.mark.parametrize("ftz", [False, True])
def test_approx_forms_that_are_correctly_rounded(ftz):
    """sqrt.approx.f32, rcp.approx.f32 and div.full.f32 return the correctly rounded value
    (as the interpreter does), which lies inside the ISA's bounds."""
    a = unary_inputs("f32", 91, 400)
    check(kernel("fsqrt", "f32", 1, kind="approx", ftz=ftz)(a),
          model_unary(lambda x: m_sqrt(x, "f32", "rn"), "f32", a, ftz), a, what="sqrt.approx")
    check(kernel("frcp", "f32", 1, kind="approx", ftz=ftz)(a),
          model_unary(lambda x: m_div(1.0, x, "f32", "rn"), "f32", a, ftz), a, what="rcp.approx")
    x, y = pairs("f32", 92, 200)
    got = kernel("fdiv", "f32", 2, kind="full", ftz=ftz)(x, y)
    check(got, expected(model_binary("fdiv", "f32", x, y, "rn", ftz), "f32", (x, y), False), x, y,
          what="div.full")


@pytest.mark.parametrize("ftz", [False, True])
def test_div_approx_f32(ftz):
    """Correctly rounded quotient except the ISA's large-divisor rule: for 2**126 < |b| < 2**128
    the result is NaN if a is infinite, else zero (signed as a*b)."""
    x, y = pairs("f32", 93, 200)
    extra_b = np.array([f32_bits(v) for v in (2.0 ** 127, -(2.0 ** 127), 1.5 * 2.0 ** 126, 2.0 ** 126)], np.uint32)
    extra_a = np.array([f32_bits(v) for v in (1.0, math.inf, -3.0, 6.0)], np.uint32)
    x, y = np.concatenate([x, extra_a, extra_a]), np.concatenate([y, extra_b, extra_b[::-1]])
    exp = []
    for ua, ub in zip(x.tolist(), y.tolist()):
        a, b = flush(f32_from_bits(ua), "f32", ftz), flush(f32_from_bits(ub), "f32", ftz)
        if math.isfinite(b) and abs(b) > 2.0 ** 126 and not math.isnan(a):
            v = math.nan if math.isinf(a) else math.copysign(0.0, a) * math.copysign(1.0, b)
        else:
            v = flush(m_div(a, b, "f32", "rn"), "f32", ftz)
        exp.append(expect(v, "f32", (ua, ub)))
    check(kernel("fdiv", "f32", 2, kind="approx", ftz=ftz)(x, y), exp, x, y, what="div.approx")
    assert [int(v) for v in kernel("fdiv", "f32", 2, kind="approx", ftz=ftz)(extra_a, extra_b)] == [
        0, CANON32, 0x80000000, f32_bits(6.0 / 2.0 ** 126)]


def test_rcp_approx_ftz_f64():
    """rcp.approx.ftz.f64: f64 subnormal inputs and results flushed (§9.7.3.14), RN
    reciprocal, canonical NaN."""
    a = np.concatenate([unary_inputs("f64", 94, 300),
                        np.array([0x7FEFFFFFFFFFFFFF, 0xFFE0000000000001, 0x7FD0000000000000], dtype=np.uint64)])
    exp = []
    for u in a.tolist():
        x = f64_from_bits(u)
        if x != 0 and abs(x) < 2.0 ** -1022:
            x = math.copysign(0.0, x)
        v = m_div(1.0, x, "f64", "rn")
        if v != 0 and abs(v) < 2.0 ** -1022:        # 1/a for |a| > 2^1022: a subnormal result
            v = math.copysign(0.0, v)
        exp.append(CANON64 if math.isnan(v) else f64_bits(v))
    check(kernel("frcp", "f64", 1, kind="approx", ftz=True)(a), exp, a, what="rcp.approx.ftz.f64")


# ================================================================ min max abs neg copysign


@pytest.mark.parametrize("t,ftz", [("f32", False), ("f32", True), ("f64", False)])
@pytest.mark.parametrize("nan_mod", [False, True])
def test_minmax(t, ftz, nan_mod):
    a, b = pairs(t, 101, 200)
    for is_min, op in ((True, "fmin"), (False, "fmax")):
        exp = []
        for ua, ub in zip(a.tolist(), b.tolist()):
            x, y = flush(to_float(ua, t), t, ftz), flush(to_float(ub, t), t, ftz)
            v = m_minmax(x, y, is_min, nan_mod)
            if math.isnan(v):   # PTX: f32 canonical; f64 .NaN canonical, else a quieted
                e = CANON32 if t == "f32" else (CANON64 if nan_mod else ua | QUIET64)
            else:
                e = expect(v, t, ())
            exp.append(e)
        check(kernel(op, t, 2, ftz=ftz, nan=nan_mod)(a, b), exp, a, b, what=f"{op} {t} ftz={ftz} NaN={nan_mod}")


def test_minmax_signed_zeros():
    z = np.array([0, 0x80000000], np.uint32)
    assert kernel("fmin", "f32", 2)(z, z[::-1]).tolist() == [0x80000000] * 2
    assert kernel("fmax", "f32", 2)(z, z[::-1]).tolist() == [0, 0]
    sub = np.array([1], np.uint32)
    assert kernel("fmin", "f32", 2, ftz=True)(sub, np.array([0x80000000], np.uint32)).tolist() == [0x80000000]


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_abs_neg_copysign(t):
    a, b = pairs(t, 111, 200)
    sign = 1 << (31 if t == "f32" else 63)
    av, bv = a.tolist(), b.tolist()
    check(kernel("fabs", t, 1)(a), [u & ~sign for u in av], a, what="abs")
    check(kernel("fneg", t, 1)(a), [u ^ sign for u in av], a, what="neg")
    # copysign.type d, a, b: "copy sign bit of a into value of b"
    check(kernel("copysign", t, 2)(a, b), [(y & ~sign) | (x & sign) for x, y in zip(av, bv)], a, b, what="copysign")
    if t == "f32":   # .ftz: a subnormal operand becomes a zero of its sign first
        fl = [u & sign if (u & 0x7F800000) == 0 else u for u in av]
        check(kernel("fabs", t, 1, ftz=True)(a), [u & ~sign for u in fl], a, what="abs.ftz")
        check(kernel("fneg", t, 1, ftz=True)(a), [u ^ sign for u in fl], a, what="neg.ftz")


# ============================================================================ setp / testp

CMP_OPS = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


def packed(preds: list[ir.Value], b: ir.IRBuilder, width: int) -> ir.Value:
    """Several i1 results in one integer (bit i = preds[i]): one compile for all operators."""
    ty = ir.IntType(width)
    r = ir.Constant(ty, 0)
    for i, p in enumerate(preds):
        r = b.or_(r, b.shl(b.zext(p, ty), ir.Constant(ty, i)))
    return r


@functools.cache
def kernel_compare(t: str, ftz: bool):
    return elementwise(lambda b, x, y: packed([fp.fcompare(b, x, y, op, ftz=ftz) for op in CMP_OPS], b, 16),
                       [t, t], "u16", opt=0)


@functools.cache
def kernel_testp(t: str):
    return elementwise(lambda b, x: packed([fp.testp(b, x, op) for op in TESTP], b, 8), [t], "u8", opt=0)


@pytest.mark.parametrize("t,ftz", [("f32", False), ("f32", True), ("f64", False)])
def test_compare(t, ftz):
    a, b = pairs(t, 121, 150)
    xs = [flush(to_float(u, t), t, ftz) for u in a.tolist()]
    ys = [flush(to_float(u, t), t, ftz) for u in b.tolist()]
    got = kernel_compare(t, ftz)(a, b)
    for k, op in enumerate(CMP_OPS):
        check((got >> k) & 1, [int(m_cmp(x, y, op)) for x, y in zip(xs, ys)], a, b, what=f"setp.{op} {t} ftz={ftz}")


TESTP = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_testp(t):
    a = rand_bits(np.random.default_rng(131), t, 400)
    a = np.concatenate([np.array(EDGE_BITS[t], U[t]), a])
    tiny = 2.0 ** (-126 if t == "f32" else -1022)
    model = {"finite": math.isfinite, "infinite": math.isinf, "number": lambda x: not math.isnan(x),
             "notanumber": math.isnan, "subnormal": lambda x: math.isfinite(x) and 0 < abs(x) < tiny,
             "normal": lambda x: math.isfinite(x) and not 0 < abs(x) < tiny}   # ISA: ±0 are normal
    xs = [to_float(u, t) for u in a.tolist()]
    got = kernel_testp(t)(a)
    for k, op in enumerate(TESTP):
        check((got >> k) & 1, [int(model[op](x)) for x in xs], a, what=f"testp.{op}")


# =========================================================================== approx math


def approx_inputs(seed: int, n: int, lo: float, hi: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, n).astype(np.float32).view(np.uint32)
    return np.concatenate([x, rand_bits(rng, "f32", n)])


def _bound(name: str, x: float) -> float | None:
    for (lo, hi), bd in APPROX_BOUNDS[name]["bounds"]:
        if lo <= x <= hi:
            return bd
    return None


@pytest.mark.parametrize("ftz", [False, True])
def test_sin_cos_bounds(ftz):
    a = approx_inputs(141, 3000, -100 * math.pi, 100 * math.pi)
    for op, name, ref in (("fsin", "sin", math.sin), ("fcos", "cos", math.cos)):
        got = kernel(op, "f32", 1, ftz=ftz)(a)
        for u, r in zip(a.tolist(), got.tolist()):
            x = flush(f32_from_bits(u), "f32", ftz)
            bd = _bound(name, x) if math.isfinite(x) else None
            if bd is not None:
                assert abs(f32_from_bits(r) - ref(x)) <= bd, (name, x, f32_from_bits(r))


@pytest.mark.parametrize("ftz", [False, True])
def test_ex2_lg2_bounds(ftz):
    a = np.concatenate([approx_inputs(151, 2000, -150, 130), approx_inputs(152, 500, -1, 1)])
    got = kernel("fex2", "f32", 1, ftz=ftz)(a)
    for u, r in zip(a.tolist(), got.tolist()):
        x = flush(f32_from_bits(u), "f32", ftz)
        if math.isfinite(x) and x < 128:
            exact = 2.0 ** x
            got = f32_from_bits(r)
            # with .ftz a result that rounded to a subnormal is +0
            ok = abs(got - exact) <= 2 * ulp32(exact) or (ftz and r == 0 and exact < 2.0 ** -126)
            assert ok, ("ex2", x, got)
    b = np.concatenate([approx_inputs(153, 2000, 0, 4), a])
    got = kernel("flg2", "f32", 1, ftz=ftz)(b)
    for u, r in zip(b.tolist(), got.tolist()):
        x = flush(f32_from_bits(u), "f32", ftz)
        if math.isfinite(x) and x > 0:
            exact = math.log2(x)
            # the ISA's absolute bound, plus the unavoidable half ulp of the f32 result
            assert abs(f32_from_bits(r) - exact) <= 2.0 ** -22 + ulp32(exact) / 2, ("lg2", x, f32_from_bits(r))


@pytest.mark.parametrize("ftz", [False, True])
def test_tanh_rsqrt_bounds(ftz):
    a = np.concatenate([approx_inputs(161, 2000, -12, 12), approx_inputs(162, 1000, -0.7, 0.7)])
    got = kernel("ftanh", "f32", 1, ftz=ftz)(a)
    for u, r in zip(a.tolist(), got.tolist()):
        x = flush(f32_from_bits(u), "f32", ftz)
        if math.isfinite(x) and x != 0:
            exact = math.tanh(x)
            if ftz and abs(exact) < 2.0 ** -126:
                assert f32_from_bits(r) == 0.0
            else:
                assert abs(f32_from_bits(r) - exact) <= 2.0 ** -11 * abs(exact), ("tanh", x, f32_from_bits(r))
    got = kernel("frsqrt", "f32", 1, ftz=ftz)(a)
    for u, r in zip(a.tolist(), got.tolist()):
        x = flush(f32_from_bits(u), "f32", ftz)
        if math.isfinite(x) and x > 0:
            exact = 1 / math.sqrt(x)
            assert abs(f32_from_bits(r) - exact) <= 2.0 ** -22.9 * exact, ("rsqrt", x, f32_from_bits(r))


def test_rsqrt_f64():
    a = unary_inputs("f64", 171, 400)
    got = kernel("frsqrt", "f64", 1, ftz=True)(a)
    for u, r in zip(a.tolist(), got.tolist()):
        x = f64_from_bits(u)
        if x != 0 and abs(x) < 2.0 ** -1022:
            x = math.copysign(0.0, x)
        if math.isnan(x) or x < 0:
            assert r == CANON64
        elif x == 0:
            assert r == f64_bits(math.copysign(math.inf, x))
        elif math.isinf(x):
            assert r == 0
        else:   # our implementation: RN(1 / RN(sqrt x)); within 2 ulp of the exact value
            exact = 1 / math.sqrt(x)
            assert abs(f64_from_bits(r) - exact) <= 2 * math.ulp(exact) + math.ulp(exact), (x, f64_from_bits(r))


def test_approx_special_values():
    """The ISA's special-value tables (±0, ±inf, NaN, negative inputs)."""
    x = np.array([f32_bits(v) for v in (0.0, -0.0, math.inf, -math.inf)] + [0x7FC12345, f32_bits(-1.0)], np.uint32)
    nan, inf, ninf = CANON32, f32_bits(math.inf), f32_bits(-math.inf)
    table = {
        "fsin": [0, 0x80000000, nan, nan, nan, None],
        "fcos": [f32_bits(1.0), f32_bits(1.0), nan, nan, nan, None],
        "flg2": [ninf, ninf, inf, nan, nan, nan],
        "fex2": [f32_bits(1.0), f32_bits(1.0), inf, 0, nan, f32_bits(0.5)],
        "ftanh": [0, 0x80000000, f32_bits(1.0), f32_bits(-1.0), nan, None],
        "frsqrt": [inf, ninf, 0, nan, nan, nan],
    }
    for op, want in table.items():
        got = kernel(op, "f32", 1)(x).tolist()
        for g, w in zip(got, want):
            if w is not None:
                assert g == w, (op, [hex(v) for v in got])
    sub = np.array([1, 0x80000001], np.uint32)          # ±min subnormal with .ftz
    assert kernel("fsin", "f32", 1, ftz=True)(sub).tolist() == [0, 0x80000000]
    assert kernel("flg2", "f32", 1, ftz=True)(sub).tolist() == [ninf, ninf]
    assert kernel("ftanh", "f32", 1)(sub).tolist() == [1, 0x80000001]     # tanh(x) = x for tiny x


# ============================================================================ hypothesis


@HYP
@given(st.lists(f32_pair, min_size=1, max_size=32), st.sampled_from(MODES), st.booleans(), st.booleans())
def test_hypothesis_f32(rows, rnd, ftz, do_sat):
    a = np.array([f32_bits(r[0]) for r in rows], np.uint32)
    b = np.array([f32_bits(r[1]) for r in rows], np.uint32)
    for op in ("fadd", "fsub", "fmul"):
        run_binary(op, "f32", a, b, rnd, ftz, sats=(do_sat,))
    run_binary("fdiv", "f32", a, b, rnd, ftz)
    c = b[::-1].copy()
    check(kernel("ffma", "f32", 3, rnd=rnd, ftz=ftz, sat=do_sat)(a, b, c),
          model_fma("f32", a, b, c, rnd, ftz, do_sat), a, b, c, what="fma")


@HYP
@given(st.lists(st.tuples(f64_pair, f64s), min_size=1, max_size=32), st.sampled_from(MODES))
def test_hypothesis_f64(rows, rnd):
    a = np.array([f64_bits(r[0][0]) for r in rows], np.uint64)
    b = np.array([f64_bits(r[0][1]) for r in rows], np.uint64)
    c = np.array([f64_bits(r[1]) for r in rows], np.uint64)
    for op in ("fadd", "fsub", "fmul", "fdiv"):
        run_binary(op, "f64", a, b, rnd)
    check(kernel("ffma", "f64", 3, rnd=rnd)(a, b, c), model_fma("f64", a, b, c, rnd, False, False),
          a, b, c, what="fma.f64")
    check(kernel("fsqrt", "f64", 1, kind=rnd)(a), model_unary(lambda x: m_sqrt(x, "f64", rnd), "f64", a, False),
          a, what="sqrt.f64")


# ======================================================================= API and refusals


def test_unsupported_forms_raise():
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [ir.DoubleType(), ir.HalfType(), ir.FloatType()]), "f")
    bld = ir.IRBuilder(fn.append_basic_block())
    d, h, f = fn.args
    for call in (lambda: fp.fsin(bld, d), lambda: fp.ftanh(bld, d), lambda: fp.fex2(bld, d),
                 lambda: fp.fdiv(bld, d, d, kind="approx"), lambda: fp.fsqrt(bld, d, kind="approx"),
                 lambda: fp.fadd(bld, h, h), lambda: fp.fadd(bld, d, f),
                 lambda: fp.fadd(bld, f, f, rnd="rna"), lambda: fp.fcompare(bld, f, f, "lo"),
                 lambda: fp.testp(bld, f, "zero")):
        with pytest.raises(UnsupportedError):
            call()


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_optimised_builds_agree(t):
    """The lifter's output goes through LLVM's O2/O3 pipelines: the optimised kernels must give
    the same bits as the unoptimised ones (which the model tests check) on many inputs."""
    rng = np.random.default_rng(191)
    a, b = pairs(t, 192, 3000)
    c = rand_bits(rng, t, a.size)
    fmt_modes = ("rz", "rm", "rp") if t == "f64" else ("rp",)
    for rnd in fmt_modes:
        for name, n, mods in (("fadd", 2, {"rnd": rnd}), ("fmul", 2, {"rnd": rnd}), ("ffma", 3, {"rnd": rnd}),
                              ("fdiv", 2, {"kind": rnd}), ("fsqrt", 1, {"kind": rnd})):
            args = (a, b, c)[:n]
            fast, ref = kernel(name, t, n, opt=2, **mods)(*args), kernel(name, t, n, **mods)(*args)
            check(fast, ref.tolist(), *args, what=f"O2 vs O0 {name}.{rnd}.{t}")


def test_no_fast_math_and_no_rounding_mode_changes():
    """The directed modes must not rely on the FPU mode nor on fast-math licences."""
    for t in ("f32", "f64"):
        for rnd in ("rz", "rm", "rp"):
            text = kernel("ffma", t, 3, rnd=rnd).llvm_ir + kernel("fdiv", t, 2, kind=rnd).llvm_ir
            for bad in (" fast ", "nnan", "ninf", "contract", "afn", "reassoc", "rounding", "fesetround"):
                assert bad not in text, (t, rnd, bad)


# ================================================================ slow campaigns (-m slow)


@pytest.mark.slow
@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("rnd", MODES)
def test_slow_campaign(t, rnd):
    for seed in range(4):
        a, b = pairs(t, 1000 + seed, 4000)
        for op in ("fadd", "fsub", "fmul", "fdiv"):
            run_binary(op, t, a, b, rnd, ftz=(t == "f32" and seed % 2 == 1))
        if t == "f64":
            for op in ("mul", "div"):
                sa, sb = f64_scaled_pairs(2000 + seed, 8000, op)
                run_binary("f" + op, t, sa, sb, rnd)
        x, y, z = fma_rows(t, 3000 + seed, 3000, grid=14)
        check(kernel("ffma", t, 3, rnd=rnd)(x, y, z), model_fma(t, x, y, z, rnd, False, False), x, y, z,
              what=f"fma.{rnd}.{t}")
        u = unary_inputs(t, 4000 + seed, 8000)
        check(kernel("fsqrt", t, 1, kind=rnd)(u), model_unary(lambda v: m_sqrt(v, t, rnd), t, u, False), u,
              what=f"sqrt.{rnd}.{t}")


def test_nan_results_stay_canonical_after_optimisation():
    """LLVM may fold a float ``select(isnan(r), NaN, r)`` to ``r`` (any NaN will do for it); the
    NaN policy must survive O2 (found by running sqrt.rn.f32 of -inf on the host JIT)."""
    from models.lift_harness import elementwise
    f = elementwise(lambda b, x: fp.fsqrt(b, x, kind="rn"), ["f32"], "f32", opt=2)
    got = f(np.array([0xFF800000, 0xBF800000, 0x7FC00001], dtype=np.uint32))
    assert [hex(int(v)) for v in got] == ["0x7fffffff"] * 3
