"""LLVM half-precision emitters (ptxvm.lift.semantics.half) against independent models.

Expected values come from the exact models of tests/interp/test_half.py (Fraction arithmetic
rounded by hand to f16/bf16; min/max/compare written from the ISA text), never from the
code under test.  Inputs: every pair of edge values (signed zeros, subnormals, the largest
finite values, infinities, quiet and signalling NaNs with payloads, ones and their
neighbours), operand pairs whose exact results are ties of the format or lie one bit
beyond, and random bit patterns.  One JIT compile per operation family (variants selected
by a switch), O0 for the matrix, a sample again at O2.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from llvmlite import ir

from ptxvm import UnsupportedError
from ptxvm.lift.semantics import half as H

from models.cvt import dec, enc, m_sat
from models.half import BF16_EDGES, CMP, F16_EDGES
from models.lift_harness import multi

TYPES = ["f16", "bf16"]
NAN = 0x7FFF


# ---------------------------------------------------------------------------
# models (PTX ISA §9.7.4 on IEEE 754 binary16 / bfloat16; Fractions via test_lift_cvt's
# cached dec/enc, which keeps the default run fast)

def ftz_in(h: int, fmt: str) -> int:
    """.ftz on an operand: a subnormal becomes a zero of its sign."""
    p = 11 if fmt == "f16" else 8
    return h & 0x8000 if (h & 0x7FFF) < (1 << (p - 1)) else h


def fval(d) -> float:
    return float(d[1]) if d[0] == "num" else (-math.inf if d[1] else math.inf)


def model_arith(op: str, hs, fmt: str, ftz: bool = False, sat: bool = False, relu: bool = False) -> int:
    """add/sub/mul/fma.rn: the exact result rounded once to nearest even; NaN results are
    the canonical NaN; .ftz flushes subnormal operands and a subnormal rounded result;
    .sat clamps to [+0, 1] (NaN -> +0); .relu maps negatives and -0 to +0."""
    if ftz:
        hs = [ftz_in(h, fmt) for h in hs]
    ds = [dec(h, fmt) for h in hs]
    if any(d[0] == "nan" for d in ds):
        r = NAN
    elif any(d[0] == "inf" for d in ds):
        f = [fval(d) for d in ds]               # finite halves are exact floats, products too
        v = {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1], "mul": lambda: f[0] * f[1],
             "fma": lambda: f[0] * f[1] + f[2]}[op]()
        inf = 0x7C00 if fmt == "f16" else 0x7F80
        r = NAN if math.isnan(v) else (inf | (0x8000 if v < 0 else 0) if math.isinf(v) else enc(Fraction(v), fmt, "rn"))
    else:
        v = [d[1] for d in ds]
        n = [d[2] for d in ds]
        if op == "add":
            x, zero_neg = v[0] + v[1], n[0] and n[1]
        elif op == "sub":
            x, zero_neg = v[0] - v[1], n[0] and not n[1]
        elif op == "mul":
            x, zero_neg = v[0] * v[1], n[0] != n[1]
        else:
            x, zero_neg = v[0] * v[1] + v[2], (n[0] != n[1]) and n[2] and v[0] * v[1] == 0
        r = enc(x, fmt, "rn", neg_zero=zero_neg)          # exact zero: IEEE sign rules in RN
        if ftz:
            r = ftz_in(r, fmt)
    if sat:
        r = m_sat(r, fmt)
    if relu and r != NAN and r & 0x8000:
        r = 0
    return r


def model_minmax(x: int, y: int, fmt: str, want_min: bool, nan: bool = False, xorsign: bool = False) -> int:
    """min/max with -0 < +0; a single NaN operand is ignored unless .NaN; .xorsign.abs works
    on magnitudes and gives the result the sign sign(a) ^ sign(b); NaN results canonical."""
    sign = (x ^ y) & 0x8000
    if xorsign:
        x, y = x & 0x7FFF, y & 0x7FFF
    dx, dy = dec(x, fmt), dec(y, fmt)
    nx, ny = dx[0] == "nan", dy[0] == "nan"
    if (nx and ny) or ((nx or ny) and nan):
        return NAN
    if nx or ny:
        r = y if nx else x
    else:
        kx, ky = (fval(dx), not x & 0x8000), (fval(dy), not y & 0x8000)
        r = (x if kx <= ky else y) if want_min else (x if kx >= ky else y)
    return r | sign if xorsign else r


# ---------------------------------------------------------------------------
# operand sets

def _edges(fmt: str) -> list[int]:
    e = F16_EDGES if fmt == "f16" else BF16_EDGES
    return sorted(set(e) | {x ^ 0x8000 for x in e} | ({0x7D23, 0xFE01} if fmt == "f16" else {0x7FA3, 0xFF81}))


def _tie_pairs(fmt: str, rng: random.Random, n: int) -> list[tuple[int, int]]:
    """(x, y) whose exact sum is a tie of the format, or adjacent to one: x has its last bit
    set and y is half (or just under/over half) of x's ulp, both signs."""
    p = 11 if fmt == "f16" else 8
    emax = 0x1E if fmt == "f16" else 0xFE
    out = []
    for _ in range(n):
        ex = rng.randrange(p + 1, emax)
        x = (ex << (p - 1)) | rng.randrange(0, 1 << (p - 1)) | 1
        ey = ex - p                       # y = half an ulp of x: 2^(ex - bias - p)
        y = (ey << (p - 1)) | rng.choice([0, 0, 1, (1 << (p - 1)) - 1])
        sx, sy = rng.getrandbits(1) << 15, rng.getrandbits(1) << 15
        out.append((x | sx, y | sy))
    return out


def pairs(fmt: str, n_random: int = 300, seed: int = 1) -> list[tuple[int, int]]:
    rng = random.Random(f"{fmt}{seed}")
    base = F16_EDGES if fmt == "f16" else BF16_EDGES
    out = list(itertools.product(base, base))                  # every pair of the base edges
    e = _edges(fmt)                                            # ... and both signs of each
    out += [(x, rng.choice(e)) for x in e] + [(rng.choice(e), x) for x in e]
    out += _tie_pairs(fmt, rng, n_random // 3)
    out += [(rng.getrandbits(16), rng.getrandbits(16)) for _ in range(n_random)]
    # nearby exponents: cancellation in sub, products near the subnormal / overflow range
    for _ in range(n_random // 3):
        x = rng.getrandbits(16)
        out.append((x, (x & 0x8000) ^ 0x8000 | (x + rng.randrange(-40, 40)) & 0x7FFF))
    return out


def triples(fmt: str, n_random: int = 400, seed: int = 1) -> list[tuple[int, int, int]]:
    rng = random.Random(f"{fmt}3{seed}")
    e = _edges(fmt)
    out = [(rng.choice(e), rng.choice(e), rng.choice(e)) for _ in range(n_random)]
    out += [(rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16)) for _ in range(n_random)]
    # products that nearly cancel the addend, and addends far below the product (sticky)
    for _ in range(n_random // 2):
        a, c = rng.getrandbits(16) & 0x7FFF, rng.getrandbits(16) & 0x7FFF
        m = model_arith("mul", (a, c), fmt)
        out.append((a, c, (m ^ 0x8000) + rng.randrange(-2, 3) & 0xFFFF))
        out.append((a, c, rng.randrange(0, 0x0400 if fmt == "f16" else 0x2000) | rng.getrandbits(1) << 15))
    out += [(0xA001, 0x3BFE, 0x4C01)] if fmt == "f16" else [(0x40E0, 0x4214, 0x8D80), (0x40E0, 0x4214, 0x0D80)]
    return out


def u16(xs) -> np.ndarray:
    return np.array(xs, np.uint16)


def u32(xs) -> np.ndarray:
    return np.array(xs, np.uint32)


# ---------------------------------------------------------------------------
# arithmetic

def arith_variants(fmt: str) -> list[tuple[str, dict]]:
    out = []
    mods = [{}, {"sat": True}] + ([{"ftz": True}, {"ftz": True, "sat": True}] if fmt == "f16" else [])
    for op in ("add", "sub", "mul"):
        out += [(op, m) for m in mods]
    fma_mods = mods + [{"relu": True}] + ([{"ftz": True, "relu": True}] if fmt == "f16" else [])
    out += [("fma", m) for m in fma_mods]
    return out


_EMIT = {"add": H.hadd, "sub": H.hsub, "mul": H.hmul, "fma": H.hfma}


@functools.cache
def arith_fn(fmt: str, n_ops: int, opt: int, packed: bool = False, stride: int = 1):
    t = fmt + ("x2" if packed else "")
    vs = [(op, kw) for op, kw in arith_variants(fmt) if (op == "fma") == (n_ops == 3)][::stride]
    fns = [functools.partial(lambda b, *xs, op, kw: _EMIT[op](b, *xs, type=t, **kw), op=op, kw=kw) for op, kw in vs]
    return vs, multi(fns, [t] * n_ops, opt=opt)


def _check_arith(fmt: str, opt: int, n_random: int, seed: int, stride: int = 1, mod_every: int = 1):
    """Every variant on the operand sets; variants with modifiers on every ``mod_every``-th
    operand tuple only (the exact model is the slow part of this file)."""
    for n_ops, sets in ((2, pairs(fmt, n_random, seed)), (3, triples(fmt, n_random, seed))):
        vs, run = arith_fn(fmt, n_ops, opt, stride=stride)
        for k, (op, kw) in enumerate(vs):
            ts = sets if not kw else sets[::mod_every]
            got = run(k, *(u16([t[i] for t in ts]) for i in range(n_ops)))
            want = [model_arith(op, t, fmt, **kw) for t in ts]
            bad = [tuple(map(hex, t)) + (hex(g), hex(w)) for t, g, w in zip(ts, got, want) if g != w]
            assert not bad, (fmt, op, kw, bad[:5], len(bad))


@pytest.mark.parametrize("fmt", TYPES)
def test_arith(fmt):
    _check_arith(fmt, 0, 240, 1, mod_every=3)


@pytest.mark.parametrize("fmt", TYPES)
def test_arith_optimized(fmt):
    _check_arith(fmt, 2, 60, 2, stride=2, mod_every=4)


@pytest.mark.parametrize("fmt", TYPES)
def test_arith_packed(fmt):
    rng = random.Random(fmt)
    e = _edges(fmt)
    n = 120
    halves = [[rng.choice(e) if rng.random() < 0.5 else rng.getrandbits(16) for _ in range(n)] for _ in range(6)]
    x, y, z = (u32([lo | hi << 16 for lo, hi in zip(halves[i], halves[i + 1])]) for i in (0, 2, 4))
    vs, run = arith_fn(fmt, 2, 0, packed=True)
    for k, (op, kw) in enumerate(vs):
        got = run(k, x, y)
        want = [model_arith(op, (a0, b0), fmt, **kw) | model_arith(op, (a1, b1), fmt, **kw) << 16
                for a0, a1, b0, b1 in zip(*halves[:4])]
        assert got == want, (fmt, op, kw)
    vs, run = arith_fn(fmt, 3, 0, packed=True)
    for k, (op, kw) in enumerate(vs):
        got = run(k, x, y, z)
        want = [model_arith("fma", (a0, b0, c0), fmt, **kw) | model_arith("fma", (a1, b1, c1), fmt, **kw) << 16
                for a0, a1, b0, b1, c0, c1 in zip(*halves)]
        assert got == want, (fmt, "fma", kw)


def test_arith_known_values():
    def one(fn, t, *xs, **kw):
        run = multi([lambda b, *v: fn(b, *v, type=t, **kw)], [t] * len(xs))
        return run(0, *[u16([x]) for x in xs])[0]
    assert one(H.hfma, "f16", 0xA001, 0x3BFE, 0x4C01) == 0x4C01          # no double rounding via f32
    assert one(H.hfma, "bf16", 0x40E0, 0x4214, 0x8D80) == 0x4381         # tail below the tie
    assert one(H.hfma, "bf16", 0x40E0, 0x4214, 0x0000) == 0x4382         # exact tie: even
    assert one(H.hadd, "f16", 0x8000, 0x8000) == 0x8000
    assert one(H.hadd, "f16", 0x8000, 0x0000) == 0x0000
    assert one(H.hsub, "f16", 0x8000, 0x0000) == 0x8000
    assert one(H.hadd, "f16", 0x7C00, 0xFC00) == 0x7FFF
    assert one(H.hadd, "f16", 0x7C00, 0xFC00, sat=True) == 0
    assert one(H.hadd, "f16", 0x7BFF, 0x7BFF) == 0x7C00
    assert one(H.hmul, "f16", 0x0003, 0x3800) == 0x0002                  # 1.5 ulp -> 2 (even)
    assert one(H.hmul, "f16", 0x0003, 0x3800, ftz=True) == 0x0000        # subnormal input flushed
    assert one(H.hmul, "f16", 0x0400, 0x3800, ftz=True) == 0x0000        # subnormal result flushed
    assert one(H.hmul, "f16", 0x8400, 0x3800, ftz=True) == 0x8000
    assert one(H.hfma, "f16", 0xBC00, 0x3C00, 0x0000, relu=True) == 0    # -1 -> +0
    assert one(H.hfma, "f16", 0x7E00, 0x3C00, 0x0000, relu=True) == 0x7FFF


# ---------------------------------------------------------------------------
# neg / abs / min / max


def minmax_variants():
    return [(mn, nan, xs, ftz) for mn in (True, False) for nan in (False, True) for xs in (False, True)
            for ftz in (False, True)]


@functools.cache
def minmax_fn(t: str, opt: int):
    fns = []
    for mn, nan, xs, ftz in minmax_variants():
        fn = H.hmin if mn else H.hmax
        fns.append(functools.partial(lambda b, x, y, fn, kw: fn(b, x, y, type=t, **kw), fn=fn,
                                     kw={"nan": nan, "xorsign_abs": xs, "ftz": ftz}))
    for fn in (H.hneg, H.habs):
        for ftz in (False, True):
            fns.append(functools.partial(lambda b, x, y, fn, ftz: fn(b, x, type=t, ftz=ftz), fn=fn, ftz=ftz))
    return multi(fns, [t, t], opt=opt)


def _model_unary(neg: bool, h: int, fmt: str, ftz: bool) -> int:
    if ftz:
        h = ftz_in(h, fmt)
    return h ^ 0x8000 if neg else h & 0x7FFF


@pytest.mark.parametrize("fmt", TYPES)
@pytest.mark.parametrize("opt", [0, 2])
def test_neg_abs_min_max(fmt, opt):
    run = minmax_fn(fmt, opt)
    ps = pairs(fmt, 200 if opt == 0 else 50)
    a, c = u16([p[0] for p in ps]), u16([p[1] for p in ps])
    vs = minmax_variants()
    for k, (mn, nan, xs, ftz) in enumerate(vs):
        got = run(k, a, c)
        want = [model_minmax(ftz_in(x, fmt) if ftz else x, ftz_in(y, fmt) if ftz else y, fmt, mn, nan, xs)
                for x, y in ps]
        bad = [(hex(p[0]), hex(p[1]), hex(g), hex(w)) for p, g, w in zip(ps, got, want) if g != w]
        assert not bad, (fmt, "min" if mn else "max", nan, xs, ftz, bad[:5])
    for j, (neg, ftz) in enumerate(itertools.product((True, False), (False, True))):
        got = run(len(vs) + j, a, c)
        assert got == [_model_unary(neg, x, fmt, ftz) for x, _ in ps], (neg, ftz)


@pytest.mark.parametrize("fmt", TYPES)
def test_min_max_packed(fmt):
    t = fmt + "x2"
    rng = random.Random(7)
    e = _edges(fmt)
    hs = [[rng.choice(e) for _ in range(500)] for _ in range(4)]
    x, y = u32([lo | hi << 16 for lo, hi in zip(hs[0], hs[1])]), u32([lo | hi << 16 for lo, hi in zip(hs[2], hs[3])])
    run = minmax_fn(t, 0)
    for k, (mn, nan, xs, ftz) in enumerate(minmax_variants()):
        def m(p, q, mn=mn, nan=nan, xs=xs, ftz=ftz):
            return model_minmax(ftz_in(p, fmt) if ftz else p, ftz_in(q, fmt) if ftz else q, fmt, mn, nan, xs)
        got = run(k, x, y)
        assert got == [m(a0, b0) | m(a1, b1) << 16 for a0, a1, b0, b1 in zip(*hs)], (mn, nan, xs, ftz)


# ---------------------------------------------------------------------------
# comparisons

@functools.cache
def compare_fn(t: str, opt: int):
    fns = []
    for op in CMP:
        for ftz in (False, True):
            def f(b, x, y, op=op, ftz=ftz):
                r = H.hcompare(b, x, y, op, type=t, ftz=ftz)
                if isinstance(r, tuple):      # x2: (lo, hi) -> bit 0, bit 1
                    return b.or_(b.zext(r[0], ir.IntType(8)), b.shl(b.zext(r[1], ir.IntType(8)), ir.Constant(ir.IntType(8), 1)))
                return r
            fns.append(f)
    return multi(fns, [t, t], opt=opt)


def model_cmp(op: str, x: int, y: int, fmt: str, ftz: bool) -> bool:
    if ftz:
        x, y = ftz_in(x, fmt), ftz_in(y, fmt)
    dx, dy = dec(x, fmt), dec(y, fmt)
    u = dx[0] == "nan" or dy[0] == "nan"
    return CMP[op](0, 0, u) if u else CMP[op](fval(dx), fval(dy), u)


@pytest.mark.parametrize("fmt", TYPES)
def test_compare(fmt):
    run = compare_fn(fmt, 0)
    ps = pairs(fmt, 150)
    a, c = u16([p[0] for p in ps]), u16([p[1] for p in ps])
    for k, (op, ftz) in enumerate(itertools.product(CMP, (False, True))):
        got = run(k, a, c)
        assert got == [int(model_cmp(op, x, y, fmt, ftz)) for x, y in ps], (op, ftz)


@pytest.mark.parametrize("fmt", TYPES)
def test_compare_packed_order_and_o2(fmt):
    run = compare_fn(fmt + "x2", 2)
    rng = random.Random(3)
    e = _edges(fmt)
    hs = [[rng.choice(e) for _ in range(120)] for _ in range(4)]
    x, y = u32([lo | hi << 16 for lo, hi in zip(hs[0], hs[1])]), u32([lo | hi << 16 for lo, hi in zip(hs[2], hs[3])])
    for k, (op, ftz) in enumerate(itertools.product(CMP, (False, True))):
        got = run(k, x, y)
        want = [int(model_cmp(op, a0, b0, fmt, ftz)) | int(model_cmp(op, a1, b1, fmt, ftz)) << 1
                for a0, a1, b0, b1 in zip(*hs)]
        assert got == want, (op, ftz)


# ---------------------------------------------------------------------------
# what is refused

@pytest.mark.parametrize("call", [
    lambda b, v: H.hadd(b, v, v, type="f16", rnd="rz"),
    lambda b, v: H.hmul(b, v, v, type="bf16", ftz=True),
    lambda b, v: H.hfma(b, v, v, v, type="bf16x2", ftz=True),
    lambda b, v: H.hmin(b, v, v, type="f16", relu=True),
    lambda b, v: H.hadd(b, v, v, type="f32"),
    lambda b, v: H.hcompare(b, v, v, "lo", type="f16"),
])
def test_unsupported(call):
    b = ir.IRBuilder(ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [ir.IntType(16)]), "f").append_basic_block())
    with pytest.raises(UnsupportedError):
        call(b, b.function.args[0])


# ---------------------------------------------------------------------------
# heavier campaigns

@pytest.mark.slow
@pytest.mark.parametrize("fmt", TYPES)
def test_slow_arith_o2(fmt):
    _check_arith(fmt, 2, 20000, 9)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", TYPES)
def test_slow_mul_exhaustive_row(fmt):
    # every operand against a handful of fixed ones (all exponents, subnormals, NaNs)
    vs, run = arith_fn(fmt, 2, 2)
    xs = list(range(0x10000))
    for fixed in (0x3C01 if fmt == "f16" else 0x3F81, 0x0001, 0x8203, 0x7BFF if fmt == "f16" else 0x7F7F):
        a, c = u16(xs), u16([fixed] * len(xs))
        for k, (op, kw) in enumerate(vs):
            got = run(k, a, c)
            assert got == [model_arith(op, (x, fixed), fmt, **kw) for x in xs], (op, kw, hex(fixed))



# ---------------------------------------------------------------------------
# differential: the interpreter's half models on the same operands

@pytest.mark.parametrize("fmt", TYPES)
def test_agrees_with_interpreter(fmt):
    from ptxvm.interp.numerics import half as IH
    ps = pairs(fmt, 120, 4)
    a, c = u16([p[0] for p in ps]), u16([p[1] for p in ps])
    ts = triples(fmt, 120, 4)
    x, y, z = (u16([t[i] for t in ts]) for i in range(3))
    for n_ops, ops in ((2, (a, c)), (3, (x, y, z))):
        vs, run = arith_fn(fmt, n_ops, 0)
        for k, (op, kw) in enumerate(vs):
            fn = {"add": IH.add, "sub": IH.sub, "mul": IH.mul, "fma": IH.fma}[op]
            assert run(k, *ops) == [int(v) for v in fn(*ops, fmt, **kw)], (op, kw)
    run = minmax_fn(fmt, 0)
    for k, (mn, nan, xs, ftz) in enumerate(minmax_variants()):
        fn = IH.min_ if mn else IH.max_
        assert run(k, a, c) == [int(v) for v in fn(a, c, fmt, nan=nan, xorsign_abs=xs, ftz=ftz)], (mn, nan, xs, ftz)
    for j, (fn, ftz) in enumerate(itertools.product((IH.neg, IH.abs_), (False, True))):
        assert run(len(minmax_variants()) + j, a, c) == [int(v) for v in fn(a, fmt, ftz=ftz)]
    run = compare_fn(fmt, 0)
    for k, (op, ftz) in enumerate(itertools.product(CMP, (False, True))):
        assert run(k, a, c) == [int(v) for v in IH.setp(op, a, c, fmt, ftz=ftz)], (op, ftz)


# ---------------------------------------------------------------------------
# ex2.approx / tanh.approx: correctly rounded (what the interpreter returns)

def _ref_approx(fn: str, h: int, fmt: str, ftz: bool) -> int:
    """200-digit decimal evaluation rounded once (Fraction) to the format, RN."""
    import decimal
    if ftz:
        h = ftz_in(h, fmt)
    d = dec(h, fmt)
    inf = 0x7C00 if fmt == "f16" else 0x7F80
    if d[0] == "nan":
        return NAN
    if d[0] == "inf":
        if fn == "ex2":
            return 0 if d[1] else inf
        return (0x8000 if d[1] else 0) | (0x3C00 if fmt == "f16" else 0x3F80)
    x = d[1]
    # far outside, the rounded result is known exactly: 2^x overflows (x >= 129 > log2 of
    # every finite value) or is below a quarter of the smallest subnormal (x <= -140);
    # |tanh(x)| > 1 - 2^-40 for |x| >= 20, nearer to 1 than any rounding boundary
    if fn == "ex2" and x >= 129:
        return inf
    if fn == "ex2" and x <= -140:
        return 0
    if fn == "tanh" and abs(x) >= 20:
        return (0x8000 if d[2] else 0) | (0x3C00 if fmt == "f16" else 0x3F80)
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        xd = decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)
        if fn == "ex2":
            if x == int(x):
                v = Fraction(2) ** int(x)
            else:
                v = Fraction((xd * decimal.Decimal(2).ln()).exp())
        elif x == 0:
            return h
        else:
            e = (2 * xd).exp()
            v = Fraction((e - 1) / (e + 1))
    r = enc(v, fmt, "rn", neg_zero=d[2])
    return ftz_in(r, fmt) if ftz else r


APPROX = [("ex2", "f16", False), ("ex2", "bf16", True), ("tanh", "f16", False), ("tanh", "bf16", False)]


@functools.cache
def approx_fn(fn: str, t: str, ftz: bool, opt: int = 2):
    if fn == "ex2":
        return multi([lambda b, x: H.hex2_approx(b, x, type=t, ftz=ftz)], [t], opt=opt)
    return multi([lambda b, x: H.htanh_approx(b, x, type=t)], [t], opt=opt)


@pytest.mark.parametrize("fn,fmt,ftz", APPROX)
def test_approx_exhaustive_vs_interpreter_and_sampled_reference(fn, fmt, ftz):
    from ptxvm.interp.numerics import half as IH
    xs = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)
    got = approx_fn(fn, fmt, ftz)(0, xs)
    ref = IH.ex2_approx(xs, fmt, ftz=ftz) if fn == "ex2" else IH.tanh_approx(xs, fmt)
    assert got == [int(v) for v in ref]
    # an independent high-precision reference on a sample (every value: slow run)
    sample = list(range(0, 0x10000, 97)) + _edges(fmt) + [0xCE40, 0xCE80, 0xCC00, 0x4B00, 0xC300, 0x4300]
    assert [got[h] for h in sample] == [_ref_approx(fn, h, fmt, ftz) for h in sample]


@pytest.mark.parametrize("fn,fmt,ftz", APPROX)
def test_approx_packed(fn, fmt, ftz):
    t = fmt + "x2"
    rng = random.Random(11)
    lo, hi = [rng.getrandbits(16) for _ in range(300)], [rng.getrandbits(16) for _ in range(300)]
    got = approx_fn(fn, t, ftz, 0)(0, u32([a | c << 16 for a, c in zip(lo, hi)]))
    scalar = approx_fn(fn, fmt, ftz)(0, np.arange(0x10000, dtype=np.uint32).astype(np.uint16))
    assert got == [scalar[a] | scalar[c] << 16 for a, c in zip(lo, hi)]
    assert scalar[0] == (0x3C00 if fmt == "f16" else 0x3F80) or fn == "tanh"


@pytest.mark.slow
@pytest.mark.parametrize("fn,fmt,ftz", APPROX)
def test_slow_approx_exhaustive_reference(fn, fmt, ftz):
    got = approx_fn(fn, fmt, ftz)(0, np.arange(0x10000, dtype=np.uint32).astype(np.uint16))
    assert got == [_ref_approx(fn, h, fmt, ftz) for h in range(0x10000)]
