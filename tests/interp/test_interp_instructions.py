"""Instruction wiring tests: one PTX instruction per tiny kernel, run on the interpreter.

The numeric models in ``ptxvm.interp.numerics*`` / ``intops`` / ``half`` are
tested on their own elsewhere; this file checks what sits between PTX text and
those models: operand decoding (registers, immediates incl. ``0f``/``0d``
literals, vectors ``{a,b}``, ``%p|%q`` pairs, negated predicates), typed
register reads and writes (truncation of wider source registers, zero/sign
extension into wider destination registers), modifiers reaching the model
(``.rz .ftz .sat .hi .wide .cc`` ...), guards, special registers and warp
instructions.

Every kernel loads its operands from global arrays by global thread index,
executes the instruction under test, and stores the destinations (which are
first loaded from the output arrays, so a lane that does not write keeps a
known value).  Results are compared bit for bit with a model written here from
the PTX ISA 9.0 on Python ints / ``fractions.Fraction`` (the exact float
rounding helpers are shared with ``test_numerics``).
"""

from __future__ import annotations

import functools
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ptxvm
from ptxvm.interp.numerics import APPROX_BOUNDS

from models.instruction_harness import HEADER, NT, cached_module, run
from models.intops import (
    m_int_binary,
    m_lop3,
    m_mad,
    m_shf,
    m_shift,
    m_unary,
    mask,
    model_bfe,
    model_bfi,
    model_prmt,
    sx,
    tv,
    type_bits,
)
from models.numerics import (
    F32_EDGE_BITS,
    F64_EDGE_BITS,
    IRND_MODEL,
    f32_bits,
    f32_from_bits,
    f64_bits,
    flush,
    ftz_in,
    fval,
    m_add,
    m_cmp,
    m_div,
    m_f2i,
    m_fma,
    m_minmax,
    m_mul,
    m_sqrt,
    round_exact,
)

FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
FEW = settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
SOME = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))


# ============================================================================ harness


def lanes(values, n=NT):
    return [values[i % len(values)] for i in range(n)]


# ============================================================================ integer models


def int_edges(w):
    m = mask(w)
    h = 1 << (w - 1)
    base = {0, 1, 2, 3, m, m - 1, h, h - 1, h + 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF,
            1 << (w // 2), (1 << (w // 2)) - 1, 5, 7, w - 1, w, w + 1}
    return sorted({x for x in base if x <= m} | {x & m for x in (-2, -3, -7, 31, 32, 33, 63, 64)})


def ints(w):
    return st.one_of(st.sampled_from(int_edges(w)), st.integers(0, mask(w)),
                     st.integers(-300, 300).map(lambda x: x & mask(w)))


def lane_lists(strat, max_size=16):
    """Per-lane values: a short drawn list, cycled over the lanes (keeps hypothesis' data small)."""
    return st.lists(strat, min_size=1, max_size=max_size)


def seeded(gen):
    """NT lane values from a drawn seed: ``gen(rng)`` per lane."""
    return st.integers(0, 2**32 - 1).map(lambda seed: (lambda r: [gen(r) for _ in range(NT)])(random.Random(seed)))


def ext_into(v, t, reg_bits):
    """A t result written into a reg_bits register (PTX ISA 6.4.x: sign-extend signed types)."""
    w = type_bits(t)
    v &= mask(w)
    if reg_bits > w and t[0] == "s":
        v = sx(v, w) & mask(reg_bits)
    return v


# ============================================================================ integer tests

INT_TYPES = ["u16", "s16", "u32", "s32", "u64", "s64"]
BIN_OPS = [(op, t) for op in ("add", "sub", "mul.lo", "mul.hi", "div", "rem", "min", "max") for t in INT_TYPES]
BIN_OPS += [(op, t) for op in ("and", "or", "xor") for t in ("b16", "b32", "b64")]
BIN_OPS += [("add.sat", "s32"), ("sub.sat", "s32")]


def _int_binary_case(op, t, av, bv):
    name = op.split(".")[0]
    mods = "." + op.split(".")[1] if "." in op else ""
    body = f"{name}{mods}.{t} %d, %a, %b;"
    (d,), _ = run(body, [("%a", t), ("%b", t)], [("%d", t)], [av, bv])
    for i, got in enumerate(d):
        a, b = av[i % len(av)], bv[i % len(bv)]
        assert got == m_int_binary(op, t, a, b), (body, hex(a), hex(b), hex(got))


@pytest.mark.parametrize("op,t", BIN_OPS)
def test_int_binary_edges(op, t):
    w = type_bits(t)
    e = int_edges(w)
    pairs = [(x, y) for x in e for y in e]
    _int_binary_case(op, t, [p[0] for p in pairs], [p[1] for p in pairs])


@pytest.mark.parametrize("op,t", BIN_OPS)
@FEW
@given(data=st.data())
def test_int_binary(op, t, data):
    w = type_bits(t)
    _int_binary_case(op, t, data.draw(lane_lists(ints(w))), data.draw(lane_lists(ints(w))))


SHIFT_AMOUNTS = [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 2**31, 2**32 - 1]


@pytest.mark.parametrize("op,t", [("shl", t) for t in ("b16", "b32", "b64")] +
                         [("shr", t) for t in ("b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64")])
def test_shift(op, t):
    w = type_bits(t)
    vals = int_edges(w) + [0x123456789ABCDEF0 & mask(w)]
    pairs = [(x, s) for x in vals for s in SHIFT_AMOUNTS]
    av, sv = [p[0] for p in pairs], [p[1] for p in pairs]
    body = f"{op}.{t} %d, %a, %s;"
    (d,), _ = run(body, [("%a", t), ("%s", "u32")], [("%d", t)], [av, sv])
    for i in range(len(av)):
        assert d[i] == m_shift(op, t, av[i], sv[i]), (body, hex(av[i]), sv[i], hex(d[i]))
    # immediate shift amounts, including >= width
    for k in (0, 1, w - 1, w, w + 5):
        (d,), _ = run(f"{op}.{t} %d, %a, {k};", [("%a", t)], [("%d", t)], [vals])
        assert d[:len(vals)] == [m_shift(op, t, x, k) for x in vals], (op, t, k)


@pytest.mark.parametrize("t", ["u16", "s16", "u32", "s32"])
def test_mul_wide(t):
    w = type_bits(t)
    wt = t[0] + str(2 * w)
    e = int_edges(w)
    pairs = [(x, y) for x in e for y in e]
    av, bv = [p[0] for p in pairs], [p[1] for p in pairs]
    (d,), _ = run(f"mul.wide.{t} %d, %a, %b;", [("%a", t), ("%b", t)], [("%d", wt)], [av, bv])
    for i in range(len(av)):
        assert d[i] == (tv(av[i], t) * tv(bv[i], t)) & mask(2 * w), (t, hex(av[i]), hex(bv[i]), hex(d[i]))


MAD_CASES = [(m, t) for m in ("lo", "hi") for t in INT_TYPES] + [("wide", t) for t in ("u16", "s16", "u32", "s32")]
MAD_CASES += [("hi.sat", "s32")]


@pytest.mark.parametrize("mode,t", MAD_CASES)
@SOME
@given(data=st.data())
def test_mad(mode, t, data):
    w = type_bits(t)
    ct = t[0] + str(2 * w) if mode == "wide" else t
    e = int_edges(w)
    av = data.draw(lane_lists(st.one_of(st.sampled_from(e), st.integers(0, mask(w)))))
    bv = data.draw(lane_lists(st.one_of(st.sampled_from(e), st.integers(0, mask(w)))))
    cv = data.draw(lane_lists(ints(type_bits(ct))))
    body = f"mad.{mode}.{t} %d, %a, %b, %c;"
    (d,), _ = run(body, [("%a", t), ("%b", t), ("%c", ct)], [("%d", ct)], [av, bv, cv])
    for i, got in enumerate(d):
        a, b, c = av[i % len(av)], bv[i % len(bv)], cv[i % len(cv)]
        exp = m_mad(mode.split(".")[0], t, a, b, c, sat=mode.endswith("sat"))
        assert got == exp, (body, hex(a), hex(b), hex(c), hex(got), hex(exp))


@pytest.mark.parametrize("w", [32, 64])
def test_carry_chain_multiword_add_sub(w):
    """A 2w-bit add / sub from w-bit halves: add.cc + addc.cc, sub.cc + subc.cc, and the
    carry-out / borrow captured with addc / subc of zeros."""
    t = f"u{w}"
    rng = random.Random(w)
    edges = [0, 1, mask(2 * w), mask(w), 1 << w, (1 << w) - 1, 1 << (2 * w - 1), mask(2 * w) - mask(w)]
    xs = [x for x in edges for _ in edges] + [rng.getrandbits(2 * w) for _ in range(NT)]
    ys = [y for _ in edges for y in edges] + [rng.getrandbits(2 * w) for _ in range(NT)]
    lo = lambda v: v & mask(w)  # noqa: E731
    hi = lambda v: v >> w  # noqa: E731
    srcs = [("%alo", t), ("%ahi", t), ("%blo", t), ("%bhi", t)]
    dsts = [("%dlo", t), ("%dhi", t), ("%cy", t)]
    vals = [[lo(x) for x in xs], [hi(x) for x in xs], [lo(y) for y in ys], [hi(y) for y in ys]]
    (dlo, dhi, cy), _ = run(f"""
        add.cc.{t} %dlo, %alo, %blo;
        addc.cc.{t} %dhi, %ahi, %bhi;
        addc.{t} %cy, 0, 0;""", srcs, dsts, vals, skip_unsupported=False)
    for i in range(len(xs)):
        s = xs[i] + ys[i]
        assert (dlo[i], dhi[i], cy[i]) == (lo(s), hi(s) & mask(w), s >> (2 * w)), (hex(xs[i]), hex(ys[i]))
    (dlo, dhi, cy), _ = run(f"""
        sub.cc.{t} %dlo, %alo, %blo;
        subc.cc.{t} %dhi, %ahi, %bhi;
        subc.{t} %cy, 0, 0;""", srcs, dsts, vals, skip_unsupported=False)
    for i in range(len(xs)):
        s = (xs[i] - ys[i]) & mask(2 * w)
        borrow = 1 if xs[i] < ys[i] else 0
        assert (dlo[i], dhi[i], cy[i]) == (lo(s), hi(s), (-borrow) & mask(w)), (hex(xs[i]), hex(ys[i]))


@FAST
@given(data=st.data())
def test_carry_chain_madc_multiword_multiply(data):
    """64x64->128 multiply from 32-bit limbs with mad.lo.cc / madc.hi(.cc) / addc."""
    xs = lanes(data.draw(lane_lists(ints(64))))
    ys = lanes(data.draw(lane_lists(ints(64))))
    body = """
        mul.lo.u32 %d0, %a0, %b0;
        mul.hi.u32 %d1, %a0, %b0;
        mad.lo.cc.u32 %d1, %a1, %b0, %d1;
        madc.hi.u32 %d2, %a1, %b0, 0;
        mad.lo.cc.u32 %d1, %a0, %b1, %d1;
        madc.hi.cc.u32 %d2, %a0, %b1, %d2;
        addc.u32 %d3, 0, 0;
        mad.lo.cc.u32 %d2, %a1, %b1, %d2;
        madc.hi.u32 %d3, %a1, %b1, %d3;"""
    srcs = [("%a0", "u32"), ("%a1", "u32"), ("%b0", "u32"), ("%b1", "u32")]
    dsts = [(f"%d{i}", "u32") for i in range(4)]
    vals = [[x & mask(32) for x in xs], [x >> 32 for x in xs], [y & mask(32) for y in ys], [y >> 32 for y in ys]]
    outs, _ = run(body, srcs, dsts, vals)
    for i in range(NT):
        p = xs[i] * ys[i]
        got = sum(outs[k][i] << (32 * k) for k in range(4))
        assert got == p, (hex(xs[i]), hex(ys[i]), hex(got), hex(p))


UNARY_INT = [("neg", t) for t in ("s16", "s32", "s64")] + [("abs", t) for t in ("s16", "s32", "s64")]
UNARY_INT += [("not", t) for t in ("b16", "b32", "b64", "pred")] + [("cnot", t) for t in ("b16", "b32", "b64")]
UNARY_INT += [(op, t) for op in ("popc", "clz") for t in ("b32", "b64")]
UNARY_INT += [("brev", t) for t in ("b32", "b64")]
UNARY_INT += [(op, t) for op in ("bfind", "bfind.shiftamt") for t in ("u32", "s32", "u64", "s64")]


@pytest.mark.parametrize("op,t", UNARY_INT)
@SOME
@given(data=st.data())
def test_int_unary(op, t, data):
    w = type_bits(t)
    av = int_edges(w) + data.draw(st.lists(ints(w), min_size=1, max_size=16)) if t != "pred" else [0, 1]
    dt = "u32" if op.split(".")[0] in ("popc", "clz", "bfind") else t
    name, _, mod = op.partition(".")
    body = f"{name}{'.' + mod if mod else ''}.{t} %d, %a;"
    (d,), _ = run(body, [("%a", t)], [("%d", dt)], [av])
    for i, got in enumerate(d):
        a = av[i % len(av)]
        assert got == m_unary(op, t, a), (body, hex(a), hex(got))


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
@FAST
@given(data=st.data())
def test_bfe(t, data):
    w = type_bits(t)
    pos = st.one_of(st.sampled_from([0, 1, 8, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256, 257]), st.integers(0, 2**32 - 1))
    av = data.draw(lane_lists(ints(w)))
    pv = data.draw(lane_lists(pos))
    lv = data.draw(lane_lists(pos))
    (d,), _ = run(f"bfe.{t} %d, %a, %p, %l;", [("%a", t), ("%p", "u32"), ("%l", "u32")], [("%d", t)], [av, pv, lv])
    for i, got in enumerate(d):
        a, p, ln = av[i % len(av)], pv[i % len(pv)], lv[i % len(lv)]
        assert got == model_bfe(a, p, ln, t), (t, hex(a), p, ln, hex(got))


@pytest.mark.parametrize("t", ["b32", "b64"])
@FAST
@given(data=st.data())
def test_bfi(t, data):
    w = type_bits(t)
    pos = st.one_of(st.sampled_from([0, 1, 8, 31, 32, 33, 63, 64, 255, 256]), st.integers(0, 2**32 - 1))
    av, bv = data.draw(lane_lists(ints(w))), data.draw(lane_lists(ints(w)))
    pv, lv = data.draw(lane_lists(pos)), data.draw(lane_lists(pos))
    (d,), _ = run(f"bfi.{t} %d, %a, %b, %p, %l;", [("%a", t), ("%b", t), ("%p", "u32"), ("%l", "u32")],
                  [("%d", t)], [av, bv, pv, lv])
    for i, got in enumerate(d):
        a, b, p, ln = av[i % len(av)], bv[i % len(bv)], pv[i % len(pv)], lv[i % len(lv)]
        assert got == model_bfi(a, b, p, ln, w), (t, hex(a), hex(b), p, ln, hex(got))


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
@SOME
@given(data=st.data())
def test_prmt(mode, data):
    av, bv = data.draw(lane_lists(ints(32))), data.draw(lane_lists(ints(32)))
    cv = data.draw(lane_lists(st.one_of(st.integers(0, 0xFFFF), st.integers(0, mask(32)),
                                        st.sampled_from([0x3210, 0x7654, 0x8888, 0x0123, 0x4321]))))
    m = f".{mode}" if mode else ""
    (d,), _ = run(f"prmt.b32{m} %d, %a, %b, %c;", [("%a", "b32"), ("%b", "b32"), ("%c", "b32")],
                  [("%d", "b32")], [av, bv, cv])
    for i, got in enumerate(d):
        a, b, c = av[i % len(av)], bv[i % len(bv)], cv[i % len(cv)]
        assert got == model_prmt(a, b, c, mode), (mode, hex(a), hex(b), hex(c), hex(got))


@pytest.mark.parametrize("d", ["l", "r"])
@pytest.mark.parametrize("mode", ["wrap", "clamp"])
@FAST
@given(data=st.data())
def test_shf(d, mode, data):
    av, bv = data.draw(lane_lists(ints(32))), data.draw(lane_lists(ints(32)))
    nv = data.draw(lane_lists(st.one_of(st.sampled_from(SHIFT_AMOUNTS), st.integers(0, mask(32)))))
    (r,), _ = run(f"shf.{d}.{mode}.b32 %d, %a, %b, %n;", [("%a", "b32"), ("%b", "b32"), ("%n", "u32")],
                  [("%d", "b32")], [av, bv, nv])
    for i, got in enumerate(r):
        a, b, n = av[i % len(av)], bv[i % len(bv)], nv[i % len(nv)]
        assert got == m_shf(a, b, n, d == "l", mode == "clamp"), (d, mode, hex(a), hex(b), n, hex(got))


@pytest.mark.parametrize("lut", [0x00, 0xFF, 0x96, 0xE8, 0xF0, 0xCC, 0xAA, 0x80, 0xFE, 0x1E, 0x6A, 0x5B])
def test_lop3(lut):
    rng = random.Random(lut)
    av, bv, cv = ([rng.getrandbits(32) for _ in range(NT)] for _ in range(3))
    (d,), _ = run(f"lop3.b32 %d, %a, %b, %c, {lut:#x};", [("%a", "b32"), ("%b", "b32"), ("%c", "b32")],
                  [("%d", "b32")], [av, bv, cv])
    assert d == [m_lop3(a, b, c, lut, 32) for a, b, c in zip(av, bv, cv)]


@pytest.mark.parametrize("mode", ["wrap", "clamp"])
def test_bmsk(mode):
    av = [0, 1, 5, 31, 32, 33, 200, 2**32 - 1] * 9
    bv = [0, 1, 7, 31, 32, 33, 64, 2**31] * 9
    bv = [bv[(i * 5) % len(bv)] for i in range(len(bv))]
    (d,), _ = run(f"bmsk.{mode}.b32 %d, %a, %b;", [("%a", "u32"), ("%b", "u32")], [("%d", "b32")], [av, bv])
    for i in range(len(av)):
        a, b = av[i], bv[i]
        if mode == "wrap":
            a, b = a & 31, b & 31
        a, b = min(a, 32), min(b, 32)
        exp = ((1 << min(a + b, 32)) - 1) & ~((1 << a) - 1) & mask(32) if a < 32 else 0
        assert d[i] == exp, (mode, av[i], bv[i], hex(d[i]), hex(exp))


# ---------------------------------------------------------------------------- immediates / register widths

@pytest.mark.parametrize("imm,t,value", [
    ("-1", "s32", -1), ("0xFFFFFFFF", "u32", 0xFFFFFFFF), ("0x80000000", "u32", 0x80000000),
    ("017", "u32", 0o17), ("0b1011", "u32", 0b1011), ("-0x10", "s32", -16), ("42U", "u32", 42),
    ("-1", "s64", -1), ("0x8000000000000000", "u64", 1 << 63), ("-32768", "s16", -32768), ("65535", "u16", 65535),
    ("0x7FFFFFFFFFFFFFFF", "s64", (1 << 63) - 1),
])
def test_integer_immediates(imm, t, value):
    w = type_bits(t)
    av = int_edges(w)
    (d,), _ = run(f"add.{t} %d, %a, {imm};", [("%a", t)], [("%d", t)], [av])
    assert d[:len(av)] == [(a + value) & mask(w) for a in av], imm
    (d,), _ = run(f"mov.{t} %d, {imm};", [], [("%d", t)], [])
    assert set(d) == {value & mask(w)}, imm


@pytest.mark.parametrize("t,rt", [("u16", "b32"), ("s16", "b32"), ("u32", "b64"), ("s32", "b64"),
                                  ("s16", "b64"), ("u16", "b64"), ("b16", "b32"), ("b32", "b64"),
                                  ("u8", "b32"), ("s8", "b32"), ("s8", "b64"), ("u8", "b16"), ("s8", "s16")])
def test_wide_register_operands(t, rt):
    """ld/st/cvt accept registers wider than the instruction type (PTX ISA 9.0 §6.4.x):
    sources are truncated to the type, destinations are sign-extended for signed types and
    zero-extended otherwise."""
    w, rw = type_bits(t), type_bits(rt)
    rng = random.Random(t + rt)
    av = [rng.getrandbits(rw) for _ in range(NT)] + [mask(rw), 1 << (w - 1), (1 << (w - 1)) - 1, mask(w)]
    # ld.global.<t> into the wide register; st.global.<t> from it
    (d,), _ = run("mov.b{0} %d, %a;".format(rw), [("%a", rt, t)], [("%d", rt)], [av])
    for i in range(len(av)):
        assert d[i] == ext_into(av[i] & mask(w), t, rw), ("ld", t, rt, hex(av[i]), hex(d[i]))
    (d,), _ = run("mov.b{0} %d, %a;".format(rw), [("%a", rt)], [("%d", rt, t)], [av])
    for i in range(len(av)):
        assert d[i] == av[i] & mask(w), ("st", t, rt, hex(av[i]), hex(d[i]))
    # cvt with a wide source register of the narrow type, and a wide destination register
    if t[0] != "b":
        other = ("s" if t[0] == "u" else "u") + str(w)
        (d,), _ = run(f"cvt.{other}.{t} %d, %a;", [("%a", rt)], [("%d", rt)], [av])
        for i in range(len(av)):
            assert d[i] == ext_into(av[i] & mask(w), other, rw), ("cvt", t, rt, hex(av[i]), hex(d[i]))


# ============================================================================ cvt (integer)

CVT_INT = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]


def regtype_for(t):
    """The register type nvcc uses for a value of type t (8-bit types live in 16-bit registers)."""
    return {"u8": "u16", "s8": "s16", "b8": "b16"}.get(t, t)


def m_cvt_int(v, src, dst, sat):
    x = tv(v, src)
    w = type_bits(dst)
    if sat:
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dst[0] == "s" else (0, mask(w))
        x = max(lo, min(hi, x))
    return x & mask(w)


@pytest.mark.parametrize("src", CVT_INT)
@pytest.mark.parametrize("dst", CVT_INT)
def test_cvt_int(src, dst):
    sw = type_bits(src)
    rs, rd = regtype_for(src), regtype_for(dst)
    rsw, rdw = type_bits(rs), type_bits(rd)
    # the source register may hold junk above the source width (8-bit values in 16-bit registers)
    av = int_edges(sw) + [x | (0xAB << sw) & mask(rsw) for x in int_edges(sw)[:8]] if rsw > sw else int_edges(sw)
    for sat in (False, True):
        s = ".sat" if sat else ""
        (d,), _ = run(f"cvt{s}.{dst}.{src} %d, %a;", [("%a", rs)], [("%d", rd)], [av])
        for i, a in enumerate(av):
            exp = ext_into(m_cvt_int(a & mask(sw), src, dst, sat), dst, rdw)
            assert d[i] == exp, (src, dst, sat, hex(a), hex(d[i]), hex(exp))


# ============================================================================ setp / selp / predicates

INT_CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"]
FLOAT_CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]
_PYCMP = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
          "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
_PYCMP.update({"lo": _PYCMP["lt"], "ls": _PYCMP["le"], "hi": _PYCMP["gt"], "hs": _PYCMP["ge"]})


def m_setp_int(cmp, t, a, b):
    w = type_bits(t)
    if cmp in ("lo", "ls", "hi", "hs") or t[0] in "ub":
        x, y = a & mask(w), b & mask(w)
    else:
        x, y = sx(a, w), sx(b, w)
    return _PYCMP[cmp](x, y)


@pytest.mark.parametrize("cmp,t", [(c, t) for c in INT_CMPS for t in ("b16", "u16", "s16", "u32", "s32", "b32", "u64",
                                                                       "s64") if t[0] != "b" or c in ("eq", "ne")])
def test_setp_int(cmp, t):
    w = type_bits(t)
    e = int_edges(w)[::2] + [mask(w), 1 << (w - 1)]
    pairs = [(x, y) for x in e for y in e]
    av, bv = [p[0] for p in pairs], [p[1] for p in pairs]
    (p, q), _ = run(f"setp.{cmp}.{t} %p|%q, %a, %b;", [("%a", t), ("%b", t)], [("%p", "pred"), ("%q", "pred")],
                    [av, bv])
    for i in range(len(av)):
        exp = m_setp_int(cmp, t, av[i], bv[i])
        assert (p[i], q[i]) == (int(exp), int(not exp)), (cmp, t, hex(av[i]), hex(bv[i]))


def f32v(bits):
    return f32_from_bits(bits)


def f32_bits_strat():
    def near(t):
        base, de, mant, sgn = t
        e = min(max(((base >> 23) & 0xFF) + de, 0), 254)
        return (sgn << 31) | (e << 23) | mant
    return st.one_of(st.sampled_from(F32_EDGE_BITS), st.integers(0, mask(32)),
                     st.floats(width=32, allow_nan=False).map(f32_bits),
                     st.tuples(st.sampled_from([0x3F800000, 0x00800000, 0x7F000000, 0x4B000000, 0x2F800000]),
                               st.integers(-26, 26), st.integers(0, 2**23 - 1), st.integers(0, 1)).map(near))


def f64_bits_strat():
    return st.one_of(st.sampled_from(F64_EDGE_BITS), st.integers(0, mask(64)),
                     st.floats(allow_nan=False).map(f64_bits),
                     st.floats(width=32, allow_nan=False).map(f64_bits))


def fbits_strat(t):
    return f32_bits_strat() if t == "f32" else f64_bits_strat()


@pytest.mark.parametrize("cmp", FLOAT_CMPS)
@pytest.mark.parametrize("t,ftz", [("f32", False), ("f32", True), ("f64", False)])
def test_setp_float(cmp, t, ftz):
    e = F32_EDGE_BITS if t == "f32" else F64_EDGE_BITS
    pairs = [(x, y) for x in e for y in e]
    av, bv = [p[0] for p in pairs], [p[1] for p in pairs]
    f = ".ftz" if ftz else ""
    (p, q), _ = run(f"setp.{cmp}{f}.{t} %p|%q, %a, %b;", [("%a", t), ("%b", t)],
                    [("%p", "pred"), ("%q", "pred")], [av, bv])
    for i in range(len(av)):
        exp = m_cmp(ftz_in(av[i], t, ftz), ftz_in(bv[i], t, ftz), cmp)
        assert (p[i], q[i]) == (int(exp), int(not exp)), (cmp, t, ftz, hex(av[i]), hex(bv[i]))


@pytest.mark.parametrize("bop", ["and", "or", "xor"])
@pytest.mark.parametrize("neg", [False, True])
@pytest.mark.parametrize("pair", [False, True])
def test_setp_bool_combine(bop, neg, pair):
    rng = random.Random(bop + str(neg) + str(pair))
    av = [rng.randrange(-3, 3) & mask(32) for _ in range(NT)]
    bv = [rng.randrange(-3, 3) & mask(32) for _ in range(NT)]
    cv = [rng.randrange(2) for _ in range(NT)]
    c = "!%c" if neg else "%c"
    dst = "%p|%q" if pair else "%p"
    dsts = [("%p", "pred"), ("%q", "pred")] if pair else [("%p", "pred")]
    outs, _ = run(f"setp.lt.{bop}.s32 {dst}, %a, %b, {c};", [("%a", "s32"), ("%b", "s32"), ("%c", "pred")], dsts,
                  [av, bv, cv])
    fn = {"and": lambda x, y: x and y, "or": lambda x, y: x or y, "xor": lambda x, y: x != y}[bop]
    for i in range(NT):
        r = sx(av[i], 32) < sx(bv[i], 32)
        cc = bool(cv[i]) != neg
        assert outs[0][i] == int(fn(r, cc)), (bop, neg, av[i], bv[i], cv[i])
        if pair:
            assert outs[1][i] == int(fn(not r, cc)), (bop, neg, av[i], bv[i], cv[i])
    # a float compare with a combining op
    fa = [0x7FC00000, 0x3F800000, 0x00000000, 0x80000000] * 16
    fb = [0x3F800000, 0x7FC00000, 0x80000000, 0x3F800000] * 16
    outs, _ = run(f"setp.gtu.{bop}.f32 {dst}, %a, %b, {c};", [("%a", "f32"), ("%b", "f32"), ("%c", "pred")], dsts,
                  [fa, fb, cv])
    for i in range(NT):
        r = m_cmp(f32v(fa[i]), f32v(fb[i]), "gtu")
        cc = bool(cv[i]) != neg
        assert outs[0][i] == int(fn(r, cc))
        if pair:
            assert outs[1][i] == int(fn(not r, cc))


@pytest.mark.parametrize("t", ["b16", "u16", "s16", "b32", "s32", "u64", "b64", "f32", "f64"])
def test_selp(t):
    w = type_bits(t)
    rng = random.Random(t)
    av = [rng.getrandbits(w) for _ in range(NT)]
    bv = [rng.getrandbits(w) for _ in range(NT)]
    cv = [rng.randrange(2) for _ in range(NT)]
    for neg in (False, True):
        (d,), _ = run(f"selp.{t} %d, %a, %b, {'!' if neg else ''}%c;", [("%a", t), ("%b", t), ("%c", "pred")],
                      [("%d", t)], [av, bv, cv])
        assert d == [a if bool(c) != neg else b for a, b, c in zip(av, bv, cv)], (t, neg)
    (d,), _ = run(f"selp.{t} %d, %a, {1 if t[0] != 'f' else '0f3F800000' if w == 32 else '0d3FF0000000000000'}, %c;",
                  [("%a", t), ("%c", "pred")], [("%d", t)], [av, cv])
    one = 1 if t[0] != "f" else (0x3F800000 if w == 32 else 0x3FF0000000000000)
    assert d == [a if c else one for a, c in zip(av, cv)]


@pytest.mark.parametrize("neg", [False, True])
@pytest.mark.parametrize("ins,t", [("add.s32 %d, %a, %b;", "s32"), ("mul.lo.u64 %d, %a, %b;", "u64"),
                                   ("fma.rn.f32 %d, %a, %b, %a;", "f32"), ("mov.b16 %d, %a;", "b16"),
                                   ("cvt.rn.f64.s32 %d, %a;", None), ("setp.lt.u32 %d, %a, %b;", None),
                                   ("div.s32 %d, %a, %b;", "s32")])
def test_guards(ins, t, neg):
    """`@%g` / `@!%g`: lanes whose guard is false keep their destination."""
    if ins.startswith("cvt"):
        srcs, dst = [("%a", "s32"), ("%b", "s32")], ("%d", "f64")
    elif ins.startswith("setp"):
        srcs, dst = [("%a", "u32"), ("%b", "u32")], ("%d", "pred")
    else:
        srcs, dst = [("%a", t), ("%b", t)], ("%d", t)
    rng = random.Random(ins)
    w = type_bits(srcs[0][1])
    av = [rng.getrandbits(w) for _ in range(NT)]
    bv = [rng.getrandbits(w) | 1 for _ in range(NT)]
    gv = [rng.randrange(2) for _ in range(NT)]
    init = [[rng.getrandbits(type_bits(dst[1])) if dst[1] != "pred" else rng.randrange(2) for _ in range(NT)]]
    (plain,), _ = run(ins, srcs, [dst], [av, bv], init=init)
    g = f"@{'!' if neg else ''}%g "
    (guarded,), _ = run(g + ins, srcs + [("%g", "pred")], [dst], [av, bv, gv], init=init)
    for i in range(NT):
        active = bool(gv[i]) != neg
        assert guarded[i] == (plain[i] if active else init[0][i]), (ins, neg, i)


# ============================================================================ mov / packing

@FAST
@given(data=st.data())
def test_mov_pack_unpack(data):
    xs = lanes(data.draw(lane_lists(ints(64))))
    # unpack b64 -> {b32, b32} and b32 -> {b16, b16}; pack them back
    (lo, hi, h0, h1), _ = run("""
        mov.b64 {%lo, %hi}, %a;
        mov.b32 {%h0, %h1}, %lo;""", [("%a", "b64")], [("%lo", "b32"), ("%hi", "b32"), ("%h0", "b16"),
                                                       ("%h1", "b16")], [xs])
    for i in range(NT):
        assert (lo[i], hi[i]) == (xs[i] & mask(32), xs[i] >> 32)
        assert (h0[i], h1[i]) == (xs[i] & 0xFFFF, (xs[i] >> 16) & 0xFFFF)
    (d, e), _ = run("""
        mov.b64 %d, {%x, %y};
        mov.b32 %e, {%u, %v};""", [("%x", "b32"), ("%y", "b32"), ("%u", "b16"), ("%v", "b16")],
                    [("%d", "b64"), ("%e", "b32")],
                    [[x & mask(32) for x in xs], [x >> 32 for x in xs], [x & 0xFFFF for x in xs],
                     [(x >> 48) for x in xs]])
    for i in range(NT):
        assert d[i] == xs[i]
        assert e[i] == (xs[i] & 0xFFFF) | ((xs[i] >> 48) << 16)
    # four 16-bit parts of a b64 and the f32 pair of an f64-sized register
    (a, b, c, dd), _ = run("mov.b64 {%p0, %p1, %p2, %p3}, %a;", [("%a", "b64")],
                           [("%p0", "b16"), ("%p1", "b16"), ("%p2", "b16"), ("%p3", "b16")], [xs])
    for i in range(NT):
        assert [a[i], b[i], c[i], dd[i]] == [(xs[i] >> (16 * k)) & 0xFFFF for k in range(4)]


@pytest.mark.parametrize("lit,t,bits", [
    ("0f3F800000", "f32", 0x3F800000), ("0f7FC00001", "f32", None), ("0fFF800000", "f32", 0xFF800000),
    ("0f80000000", "f32", 0x80000000), ("0f00000001", "f32", 0x00000001),
    ("0d3FF0000000000000", "f64", 0x3FF0000000000000), ("0d8000000000000000", "f64", 1 << 63),
    ("0d7FF4000000000123", "f64", 0x7FF4000000000123), ("0d0000000000000001", "f64", 1),
    ("0f3F800000", "b32", 0x3F800000), ("0d3FF0000000000000", "b64", 0x3FF0000000000000),
])
def test_float_literals(lit, t, bits):
    """`0fXXXXXXXX` / `0dXXXXXXXXXXXXXXXX` give exactly those bits to mov; add with them reads them."""
    (d,), _ = run(f"mov.{t} %d, {lit};", [], [("%d", t)], [])
    want = int(lit[2:], 16) if bits is None else bits
    if bits is None and t == "f32":
        # a NaN immediate moved: mov is a bit copy
        assert set(d) == {want}, [hex(x) for x in set(d)]
    else:
        assert set(d) == {want}, [hex(x) for x in set(d)]
    if t in ("f32", "f64") and bits is not None:
        av = (F32_EDGE_BITS if t == "f32" else F64_EDGE_BITS)
        (d,), _ = run(f"add.rn.{t} %d, %a, {lit};", [("%a", t)], [("%d", t)], [av])
        for i, a in enumerate(av):
            exp = fbits_result(m_add(fval(a, t), fval(want, t), t, "rn"), t, [a, want])
            assert d[i] == exp, (lit, hex(a), hex(d[i]), hex(exp))


# ============================================================================ floating point

QNAN32 = 0x7FFFFFFF          # ptxvm's canonical f32 NaN (numerics module docstring)


def f64_nan_result(operands):
    """numerics' f64 NaN rule: the first NaN operand with its quiet bit set, else the default NaN."""
    for b in operands:
        if (b >> 52) & 0x7FF == 0x7FF and b & mask(52):
            return b | (1 << 51)
    return 0xFFF8000000000000


def fbits_result(x, t, operands=()):
    """Encode a model result (Python float) as the bits ptxvm must produce."""
    if math.isnan(x):
        return QNAN32 if t == "f32" else f64_nan_result(operands)
    return f32_bits(x) if t == "f32" else f64_bits(x)


def sat01(x):
    if math.isnan(x) or x <= 0:
        return 0.0
    return min(x, 1.0)


def m_float(op, t, rnd, ftz, sat_, ops):
    """Model of add/sub/mul/fma/div/sqrt/rcp on raw-bit operands -> result bits."""
    vals = [ftz_in(b, t, ftz) for b in ops]
    if op == "add":
        r = m_add(vals[0], vals[1], t, rnd)
    elif op == "sub":
        r = m_add(vals[0], -vals[1], t, rnd)
    elif op == "mul":
        r = m_mul(vals[0], vals[1], t, rnd)
    elif op == "fma":
        r = m_fma(vals[0], vals[1], vals[2], t, rnd)
    elif op == "div":
        r = m_div(vals[0], vals[1], t, rnd)
    elif op == "sqrt":
        r = m_sqrt(vals[0], t, rnd)
    elif op == "rcp":
        r = m_div(1.0, vals[0], t, rnd)
    else:
        raise AssertionError(op)
    r = flush(r, t, ftz)
    if sat_:
        r = sat01(r)
    return fbits_result(r, t, ops)


FLOAT_OPS = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "div": 2, "sqrt": 1, "rcp": 1}
FLOAT_CASES = []
for _op in FLOAT_OPS:
    for _rnd in ("rn", "rz", "rm", "rp"):
        FLOAT_CASES.append((_op, "f64", _rnd, False, False))
        for _ftz in (False, True):
            for _sat in (False, True):
                if _sat and _op not in ("add", "sub", "mul", "fma"):
                    continue
                if _sat and _rnd not in ("rn", "rz"):
                    continue
                FLOAT_CASES.append((_op, "f32", _rnd, _ftz, _sat))


def _float_case(op, t, rnd, ftz, sat_, cols):
    n = FLOAT_OPS[op]
    mods = f".{rnd}" + (".ftz" if ftz else "") + (".sat" if sat_ else "")
    regs = ["%a", "%b", "%c"][:n]
    body = f"{op}{mods}.{t} %d, {', '.join(regs)};"
    (d,), _ = run(body, [(r, t) for r in regs], [("%d", t)], cols)
    for i, got in enumerate(d):
        ops = [c[i % len(c)] for c in cols]
        exp = m_float(op, t, rnd, ftz, sat_, ops)
        assert got == exp, (body, [hex(o) for o in ops], hex(got), hex(exp))


@pytest.mark.parametrize("op,t,rnd,ftz,sat_", FLOAT_CASES)
def test_float_edges(op, t, rnd, ftz, sat_):
    e = F32_EDGE_BITS if t == "f32" else F64_EDGE_BITS
    n = FLOAT_OPS[op]
    if n == 1:
        cols = [e]
    elif n == 2:
        cols = [[x for x in e for _ in e], [y for _ in e for y in e]]
    else:
        sub = e[::3]
        cols = [[x for x in sub for _ in sub for _ in sub], [y for _ in sub for y in sub for _ in sub],
                [z for _ in sub for _ in sub for z in sub]]
    _float_case(op, t, rnd, ftz, sat_, cols)


@pytest.mark.parametrize("op,t", [(op, t) for op in FLOAT_OPS for t in ("f32", "f64")])
@FAST
@given(data=st.data())
def test_float_random(op, t, data):
    """Random operands; the rounding mode, .ftz and .sat are drawn too (every combination
    is also run on the edge-value cross product in test_float_edges)."""
    rnd, ftz, sat_ = data.draw(st.sampled_from([c[2:] for c in FLOAT_CASES if c[:2] == (op, t)]))
    n = FLOAT_OPS[op]
    cols = [data.draw(lane_lists(fbits_strat(t))) for _ in range(n)]
    if op == "fma" and data.draw(st.booleans()):
        # c cancels most of a*b: exercises the single rounding of fma
        a, b = lanes(cols[0]), lanes(cols[1])
        c = []
        for x, y in zip(a, b):
            p = fval(x, t) * fval(y, t)
            c.append(fbits_of(-p, t) if math.isfinite(p) else x)
        cols = [a, b, c]
    _float_case(op, t, rnd, ftz, sat_, cols)


def fbits_of(x, t):
    if t == "f32":
        return f32_bits(float(np.float32(x))) if abs(x) < 3.4e38 else f32_bits(math.copysign(math.inf, x))
    return f64_bits(x)


@pytest.mark.parametrize("op", ["add", "mul", "fma"])
def test_float_default_rounding_is_rn(op):
    """`add.f32` without a rounding modifier rounds to nearest (and may be fused later; not here)."""
    e = F32_EDGE_BITS
    cols = [[x for x in e for _ in e], [y for _ in e for y in e]]
    if op == "fma":
        cols.append(cols[0])
        body = "fma.rn.f32 %d, %a, %b, %c;"     # fma requires a rounding modifier
    else:
        body = f"{op}.f32 %d, %a, %b;"
    regs = [("%a", "f32"), ("%b", "f32"), ("%c", "f32")][:len(cols)]
    (d,), _ = run(body, regs, [("%d", "f32")], cols)
    for i in range(len(cols[0])):
        ops = [c[i] for c in cols]
        assert d[i] == m_float(op, "f32", "rn", False, False, ops), (body, [hex(o) for o in ops])


def m_misc_float(op, t, ftz, nan, a, b=None):
    if op in ("neg", "abs"):
        w = type_bits(t)
        if ftz and t == "f32" and fval(a, t) != 0 and abs(fval(a, t)) < 2.0 ** -126:
            a &= 1 << 31                            # flushed to sign-preserving zero first
        return a ^ (1 << (w - 1)) if op == "neg" else a & ~(1 << (w - 1))
    x, y = ftz_in(a, t, ftz), ftz_in(b, t, ftz)
    r = m_minmax(x, y, op == "min", nan)
    if math.isnan(r):
        return QNAN32 if t == "f32" else f64_nan_result([a, b]) if nan else 0x7FFFFFFFFFFFFFFF
    return fbits_result(r, t)


@pytest.mark.parametrize("op,t,ftz,nan", [(op, t, ftz, nan) for op in ("min", "max", "neg", "abs")
                                          for t, ftz in (("f32", False), ("f32", True), ("f64", False))
                                          for nan in (False, True)
                                          if not nan or (op in ("min", "max") and t == "f32")])
def test_float_minmax_neg_abs(op, t, ftz, nan):
    e = F32_EDGE_BITS if t == "f32" else F64_EDGE_BITS
    mods = (".ftz" if ftz else "") + (".NaN" if nan else "")
    if op in ("neg", "abs"):
        (d,), _ = run(f"{op}{mods}.{t} %d, %a;", [("%a", t)], [("%d", t)], [e])
        for i, a in enumerate(e):
            assert d[i] == m_misc_float(op, t, ftz, nan, a), (op, t, ftz, hex(a), hex(d[i]))
        return
    av, bv = [x for x in e for _ in e], [y for _ in e for y in e]
    (d,), _ = run(f"{op}{mods}.{t} %d, %a, %b;", [("%a", t), ("%b", t)], [("%d", t)], [av, bv])
    for i in range(len(av)):
        exp = m_misc_float(op, t, ftz, nan, av[i], bv[i])
        if t == "f64" and math.isnan(fval(exp, t)) and math.isnan(fval(d[i], t)):
            continue        # both NaN: the f64 min/max NaN bits are not pinned down by the ISA
        assert d[i] == exp, (op, t, ftz, nan, hex(av[i]), hex(bv[i]), hex(d[i]), hex(exp))


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_copysign(t):
    e = F32_EDGE_BITS if t == "f32" else F64_EDGE_BITS
    w = type_bits(t)
    av, bv = [x for x in e for _ in e], [y for _ in e for y in e]
    (d,), _ = run(f"copysign.{t} %d, %a, %b;", [("%a", t), ("%b", t)], [("%d", t)], [av, bv])
    for i in range(len(av)):
        # d = b with the sign of a (PTX ISA 9.7.3.2)
        exp = (bv[i] & mask(w - 1)) | (av[i] & (1 << (w - 1)))
        assert d[i] == exp, (t, hex(av[i]), hex(bv[i]), hex(d[i]))


def ulp32(x):
    x = abs(x)
    if x < 2.0 ** -126:
        return 2.0 ** -149
    return 2.0 ** (math.frexp(x)[1] - 24)


def _approx_ok(name, x, r, ftz):
    """Whether f32 result r of `name.approx` at x lies within the ISA bound (special values exact)."""
    if name == "sin" or name == "cos":
        if not math.isfinite(x):
            return math.isnan(r)
        ref = math.sin(x) if name == "sin" else math.cos(x)
        if abs(x) > 100 * math.pi:
            return math.isnan(r) or abs(r) <= 1.0
        bound = APPROX_BOUNDS[name]["bounds"][0 if abs(x) <= math.pi else 1][1]
        return abs(r - ref) <= bound
    if name == "ex2":
        if math.isnan(x):
            return math.isnan(r)
        if x == -math.inf:
            return r == 0.0
        if x >= 128:
            return r == math.inf
        ref = 2.0 ** x if x > -1100 else 0.0
        if ftz and ref < 2.0 ** -126:
            return r == 0.0 or abs(r - ref) <= 2 * ulp32(ref)
        return abs(r - ref) <= 2 * ulp32(ref) + (2.0 ** -149 if ref < 2.0 ** -126 else 0)
    if name == "lg2":
        if math.isnan(x) or x < 0:
            return math.isnan(r)
        if x == 0:
            return r == -math.inf
        if x == math.inf:
            return r == math.inf
        return abs(r - math.log2(x)) <= APPROX_BOUNDS["lg2"]["bounds"][0][1] * max(1.0, abs(math.log2(x)))
    if name == "rsqrt":
        if math.isnan(x) or x < 0:
            return math.isnan(r)
        if x == 0:
            return r == math.copysign(math.inf, x)
        if x == math.inf:
            return r == 0.0
        ref = 1 / math.sqrt(x)
        return abs(r - ref) <= APPROX_BOUNDS["rsqrt"]["bounds"][0][1] * ref
    if name == "rcp":
        if math.isnan(x):
            return math.isnan(r)
        if x == 0:
            return r == math.copysign(math.inf, x)
        if math.isinf(x):
            return r == 0.0 and math.copysign(1, r) == math.copysign(1, x)
        ref = 1 / Fraction(x)
        if abs(ref) >= 2 ** 128:
            return math.isinf(r)
        if ftz and abs(ref) < Fraction(2) ** -126:
            return r == 0.0 or abs(Fraction(r) - ref) <= Fraction(ulp32(float(ref)))
        return abs(Fraction(r) - ref) <= Fraction(ulp32(float(ref))) * APPROX_BOUNDS["rcp"]["bounds"][0][1]
    if name == "sqrt":
        if math.isnan(x) or x < 0:
            return math.isnan(r)
        if x == 0 or math.isinf(x):
            return r == x and math.copysign(1, r) == math.copysign(1, x)
        ref = math.sqrt(x)
        return abs(r - ref) <= ulp32(ref)
    if name == "tanh":
        if math.isnan(x):
            return math.isnan(r)
        ref = math.tanh(x)
        return abs(r - ref) <= 2.0 ** -11 * abs(ref) + 2.0 ** -149
    raise AssertionError(name)


@pytest.mark.parametrize("name", ["sin", "cos", "ex2", "lg2", "rsqrt", "rcp", "sqrt", "tanh"])
@pytest.mark.parametrize("ftz", [False, True])
@SOME
@given(data=st.data())
def test_approx_f32(name, ftz, data):
    if name == "tanh" and ftz:
        pytest.skip("tanh.approx.f32 has no .ftz form")
    xs = F32_EDGE_BITS + data.draw(lane_lists(st.one_of(
        f32_bits_strat(), st.floats(-31.25, 31.25, width=32).map(f32_bits),
        st.floats(-130.0, 130.0, width=32).map(f32_bits))))
    f = ".ftz" if ftz else ""
    (d,), _ = run(f"{name}.approx{f}.f32 %d, %a;", [("%a", "f32")], [("%d", "f32")], [xs])
    for i, xb in enumerate(xs):
        x = flush(f32v(xb), "f32", ftz)
        r = f32v(d[i])
        if ftz and r != 0 and abs(r) < 2.0 ** -126:
            raise AssertionError((name, "ftz result not flushed", hex(xb), hex(d[i])))
        if math.isnan(r):
            assert d[i] == QNAN32, (name, hex(xb), hex(d[i]))
        assert _approx_ok(name, x, r, ftz), (name, ftz, hex(xb), x, r)


@pytest.mark.parametrize("kind", ["approx", "full"])
@pytest.mark.parametrize("ftz", [False, True])
def test_div_approx_full(kind, ftz):
    rng = random.Random(kind + str(ftz))
    av = [rng.getrandbits(32) for _ in range(NT)]
    bv = [f32_bits(float(np.float32(rng.uniform(-1e3, 1e3)))) for _ in range(NT)]
    cols = [av + [x for x in F32_EDGE_BITS[:12] for _ in range(12)],
            bv + [y for _ in range(12) for y in F32_EDGE_BITS[:12]]]
    f = ".ftz" if ftz else ""
    (d,), _ = run(f"div.{kind}{f}.f32 %d, %a, %b;", [("%a", "f32"), ("%b", "f32")], [("%d", "f32")], cols)
    bound = APPROX_BOUNDS[f"div.{kind}"]["bounds"]
    for i in range(len(cols[0])):
        x, y = flush(f32v(cols[0][i]), "f32", ftz), flush(f32v(cols[1][i]), "f32", ftz)
        r = f32v(d[i])
        exact = m_div(x, y, "f32", "rn")
        if math.isnan(exact) or math.isinf(exact) or exact == 0:
            if math.isfinite(y) and abs(y) > 2.0 ** 126 and kind == "approx":
                continue        # div.approx with |b| > 2^126 is allowed to flush (ISA 9.7.3.8)
            assert (math.isnan(r) and math.isnan(exact)) or r == exact or \
                (not math.isnan(exact) and abs(Fraction(r) - Fraction(exact)) <= Fraction(2.0 ** -149) * 2), \
                (kind, hex(cols[0][i]), hex(cols[1][i]), r, exact)
            continue
        if 2.0 ** -126 <= abs(y) <= 2.0 ** 126 and abs(exact) >= 2.0 ** -126:
            assert abs(Fraction(r) - Fraction(x) / Fraction(y)) <= Fraction(ulp32(exact)) * 2, \
                (kind, bound, hex(cols[0][i]), hex(cols[1][i]), r, exact)


# ---------------------------------------------------------------------------- cvt (float)


@pytest.mark.parametrize("src", ["f32", "f64"])
@pytest.mark.parametrize("dst", CVT_INT)
@pytest.mark.parametrize("irnd", ["rni", "rzi", "rmi", "rpi"])
def test_cvt_float_to_int(src, dst, irnd):
    e = F32_EDGE_BITS if src == "f32" else F64_EDGE_BITS
    extra = [-0.5, 0.5, 1.5, 2.5, -2.5, -1.5, 127.5, 128.0, -128.5, -129.0, 255.5, 256.0, 32767.5, 65535.5,
             -32768.5, 2.0 ** 31 - 0.5 if src == "f64" else 2.0 ** 31 - 128, 2.0 ** 31, -(2.0 ** 31) - 1,
             2.0 ** 32, 2.0 ** 63, -(2.0 ** 63), 2.0 ** 64, 4294967295.5, -0.99, 0.99]
    xs = e + [fbits_of(v, src) for v in extra]
    rd = regtype_for(dst)
    ftzs = (False, True) if src == "f32" else (False,)
    for ftz in ftzs:
        f = ".ftz" if ftz else ""
        (d,), _ = run(f"cvt.{irnd}{f}.{dst}.{src} %d, %a;", [("%a", src)], [("%d", rd)], [xs])
        for i, xb in enumerate(xs):
            exp = ext_into(m_f2i(xb, src, dst, irnd, ftz), dst, type_bits(rd))
            assert d[i] == exp, (src, dst, irnd, ftz, hex(xb), fval(xb, src), hex(d[i]), hex(exp))
    if irnd == "rzi" and src == "f32":
        # cvt with saturation is implied for float->int; `.sat` spelled out is accepted too
        (d,), _ = run(f"cvt.rzi.sat.{dst}.{src} %d, %a;", [("%a", src)], [("%d", rd)], [xs])
        assert d[:len(xs)] == [ext_into(m_f2i(xb, src, dst, irnd, False), dst, type_bits(rd)) for xb in xs]


def int_edges_t(t):
    w = type_bits(t)
    return int_edges(w) + [(1 << 24) + 1, (1 << 53) + 1, 2**62 + 2**38, 2**63 - 2**39 - 1, 2**64 - 2**39,
                           2**31 - 64, 2**31 - 65, 16777217 * 3]


@pytest.mark.parametrize("src", CVT_INT)
@pytest.mark.parametrize("dst", ["f32", "f64"])
@pytest.mark.parametrize("rnd", ["rn", "rz", "rm", "rp"])
def test_cvt_int_to_float(src, dst, rnd):
    sw = type_bits(src)
    av = sorted({v & mask(sw) for v in int_edges_t(src)})
    rs = regtype_for(src)
    (d,), _ = run(f"cvt.{rnd}.{dst}.{src} %a2, %a;", [("%a", rs)], [("%a2", dst)], [av])
    for i, a in enumerate(av):
        v = tv(a, src)
        exp = fbits_result(round_exact(Fraction(v), dst, rnd) if v else 0.0, dst)
        assert d[i] == exp, (src, dst, rnd, v, hex(d[i]), hex(exp))


def m_f2f(bits, src, dst, rnd, ftz, sat_):
    x = fval(bits, src)
    if src == "f32":
        x = flush(x, "f32", ftz)
    if math.isnan(x):
        r = x
    elif rnd in IRND_MODEL and math.isfinite(x) and x != 0:
        v = IRND_MODEL[rnd](Fraction(x))
        r = round_exact(Fraction(v), dst, "rn") if v else math.copysign(0.0, x)
    elif math.isfinite(x) and x != 0 and dst == "f32" and src == "f64":
        r = round_exact(Fraction(x), dst, rnd or "rn")
    else:
        r = x
    if dst == "f32":
        r = flush(r, "f32", ftz)
    if sat_:
        r = sat01(r)
    if math.isnan(r):
        if dst == "f32":
            return QNAN32
        if src == "f32":
            # f32 NaN widened: payload moved to the top of the f64 mantissa, quiet bit set
            return ((bits >> 31) << 63) | (0x7FF << 52) | ((bits & mask(23)) << 29) | (1 << 51)
        return bits | (1 << 51)
    return fbits_result(r, dst)


F2F_CASES = [("f64", "f32", r, ftz, s) for r in ("rn", "rz", "rm", "rp") for ftz in (False, True)
             for s in (False, True)]
F2F_CASES += [("f32", "f64", None, ftz, s) for ftz in (False, True) for s in (False, True)]
F2F_CASES += [(t, t, r, ftz, False) for t in ("f32", "f64") for r in ("rni", "rzi", "rmi", "rpi")
              for ftz in ((False, True) if t == "f32" else (False,))]
F2F_CASES += [("f64", "f32", r, False, False) for r in ("rni", "rzi")]


@pytest.mark.parametrize("src,dst,rnd,ftz,sat_", F2F_CASES)
def test_cvt_float_to_float(src, dst, rnd, ftz, sat_):
    rng = random.Random(f"{src}{dst}{rnd}{ftz}{sat_}")
    e = F32_EDGE_BITS if src == "f32" else F64_EDGE_BITS
    xs = e + [rng.getrandbits(type_bits(src)) for _ in range(NT)]
    if src == "f64":
        # values near f32 subnormals / rounding ties
        xs += [f64_bits(math.ldexp(1 + k / 8, ex)) for k in range(8) for ex in (-150, -149, -127, -126, 0, 127, 128)]
        xs += [f64_bits(1 + 2.0 ** -24), f64_bits(1 + 3 * 2.0 ** -24), f64_bits(2.5), f64_bits(-3.5), f64_bits(0.5)]
    else:
        xs += [f32_bits(v) for v in (0.5, 1.5, 2.5, -0.5, -2.5, 8388607.5, -8388608.5)]
    mods = (f".{rnd}" if rnd else "") + (".ftz" if ftz else "") + (".sat" if sat_ else "")
    (d,), _ = run(f"cvt{mods}.{dst}.{src} %d, %a;", [("%a", src)], [("%d", dst)], [xs])
    for i, xb in enumerate(xs):
        exp = m_f2f(xb, src, dst, rnd, ftz, sat_)
        if dst == "f64" and math.isnan(fval(exp, dst)):
            assert math.isnan(fval(d[i], dst)), (mods, hex(xb), hex(d[i]))
            continue
        assert d[i] == exp, (src, dst, mods, hex(xb), hex(d[i]), hex(exp))


# f16 conversions (cvt.rn.f16.f32 and back are tier-1 in real PTX)

def f16_decode(h):
    s = -1.0 if h >> 15 else 1.0
    e, m = (h >> 10) & 0x1F, h & 0x3FF
    if e == 0x1F:
        return s * math.inf if m == 0 else math.nan
    if e == 0:
        return s * m * 2.0 ** -24
    return s * (1024 + m) * 2.0 ** (e - 25)


def f16_round(x, rnd):
    """f16 bits of real x (Python float, exact in double) under mode rnd."""
    if math.isnan(x):
        return None
    sign = 0x8000 if math.copysign(1, x) < 0 else 0
    if math.isinf(x):
        return sign | 0x7C00
    if x == 0:
        return sign
    q = Fraction(abs(x))
    e = max(math.frexp(abs(x))[1] - 1, -14)
    step = Fraction(2) ** (e - 10)
    n, rem = divmod(q, step)
    n = int(n)
    if rnd == "rn":
        if rem > step / 2 or (rem == step / 2 and n % 2):
            n += 1
    elif rnd == "rp" and not sign and rem or rnd == "rm" and sign and rem:
        n += 1
    val = n * step
    if val >= 65536:
        big = rnd == "rn" or (rnd == "rp" and not sign) or (rnd == "rm" and sign)
        return sign | (0x7C00 if big else 0x7BFF)
    # re-encode
    if val < Fraction(2) ** -14:
        return sign | int(val / Fraction(2) ** -24)
    ee = math.frexp(float(val))[1] - 1
    mant = int(val / Fraction(2) ** (ee - 10)) - 1024
    return sign | ((ee + 15) << 10) | mant


@pytest.mark.parametrize("rnd", ["rn", "rz", "rm", "rp"])
def test_cvt_f32_to_f16(rnd):
    rng = random.Random(rnd)
    xs = F32_EDGE_BITS + [rng.getrandbits(32) for _ in range(NT)] + \
        [f32_bits(v) for v in (65504.0, 65520.0, 65519.99, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 1 + 2.0 ** -11,
                               1 + 3 * 2.0 ** -11, -(1 + 2.0 ** -11), 6.1e-5)] + \
        [f32_bits(rng.uniform(-70000, 70000)) & ~0xFFF for _ in range(NT)]
    (h,), _ = run(f"cvt.{rnd}.f16.f32 %h, %a;", [("%a", "f32")], [("%h", "b16")], [xs])
    for i, xb in enumerate(xs):
        exp = f16_round(f32v(xb), rnd)
        if exp is None:
            assert (h[i] >> 10) & 0x1F == 0x1F and h[i] & 0x3FF, (hex(xb), hex(h[i]))
        else:
            assert h[i] == exp, (rnd, hex(xb), f32v(xb), hex(h[i]), hex(exp))


HALF_BITS = list(range(0, 1 << 16, 97)) + [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x03FF, 0x0400, 0x7BFF,
                                           0x3C00, 0xBC00]


def bf16_decode(h):
    return f32v(h << 16)


@pytest.mark.parametrize("src,dst", [("f16", "f32"), ("f16", "f64"), ("bf16", "f32")])
def test_cvt_half_to_wider(src, dst):
    (f,), _ = run(f"cvt.{dst}.{src} %f, %h;", [("%h", "b16")], [("%f", dst)], [HALF_BITS])
    for i, hb in enumerate(HALF_BITS):
        v = f16_decode(hb) if src == "f16" else bf16_decode(hb)
        got = fval(f[i], dst)
        if math.isnan(v):
            assert math.isnan(got), (src, dst, hex(hb), hex(f[i]))
        else:
            assert f[i] == fbits_result(v, dst), (src, dst, hex(hb), hex(f[i]))


# ============================================================================ special registers

@pytest.mark.parametrize("grid,block", [((1, 1, 1), (64, 1, 1)), ((2, 3, 1), (8, 4, 1)), ((2, 1, 2), (4, 3, 5)),
                                        ((3, 2, 2), (33, 1, 1)), ((1, 1, 1), (7, 9, 2))])
def test_special_registers(grid, block):
    names = ["%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z",
             "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid", "%lanemask_eq", "%lanemask_lt",
             "%lanemask_le", "%lanemask_gt", "%lanemask_ge", "%nwarpid"]
    nthreads = block[0] * block[1] * block[2]
    total = nthreads * grid[0] * grid[1] * grid[2]
    params = ", ".join(f".param .u64 p{i}" for i in range(len(names)))
    lines = [HEADER, f".visible .entry k({params})", "{", "  .reg .b32 %v, %lin, %cta, %t; .reg .b64 %a, %o;",
             # linear thread id and linear cta id (x fastest)
             "  mov.u32 %lin, %tid.z; mov.u32 %t, %ntid.y; mul.lo.u32 %lin, %lin, %t;",
             "  mov.u32 %t, %tid.y; add.u32 %lin, %lin, %t; mov.u32 %t, %ntid.x; mul.lo.u32 %lin, %lin, %t;",
             "  mov.u32 %t, %tid.x; add.u32 %lin, %lin, %t;",
             "  mov.u32 %cta, %ctaid.z; mov.u32 %t, %nctaid.y; mul.lo.u32 %cta, %cta, %t;",
             "  mov.u32 %t, %ctaid.y; add.u32 %cta, %cta, %t; mov.u32 %t, %nctaid.x; mul.lo.u32 %cta, %cta, %t;",
             "  mov.u32 %t, %ctaid.x; add.u32 %cta, %cta, %t;",
             "  mov.u32 %t, %ntid.x; mov.u32 %v, %ntid.y; mul.lo.u32 %t, %t, %v; mov.u32 %v, %ntid.z;",
             "  mul.lo.u32 %t, %t, %v; mad.lo.u32 %lin, %cta, %t, %lin;",
             "  mul.wide.u32 %o, %lin, 4;"]
    for i, nm in enumerate(names):
        lines += [f"  mov.u32 %v, {nm};", f"  ld.param.u64 %a, [p{i}];", "  add.s64 %a, %a, %o;",
                  "  st.global.u32 [%a], %v;"]
    lines += ["  ret;", "}"]
    outs = [np.full(total, 0xDEADBEEF, np.uint32) for _ in names]
    cached_module("\n".join(lines))["k"](grid, block, tuple(outs))
    got = {nm: o.tolist() for nm, o in zip(names, outs)}
    i = 0
    for cz in range(grid[2]):
        for cy in range(grid[1]):
            for cx in range(grid[0]):
                for tz in range(block[2]):
                    for ty in range(block[1]):
                        for tx in range(block[0]):
                            lin = tx + block[0] * (ty + block[1] * tz)
                            lane = lin % 32
                            exp = {"%tid.x": tx, "%tid.y": ty, "%tid.z": tz, "%ntid.x": block[0],
                                   "%ntid.y": block[1], "%ntid.z": block[2], "%ctaid.x": cx, "%ctaid.y": cy,
                                   "%ctaid.z": cz, "%nctaid.x": grid[0], "%nctaid.y": grid[1],
                                   "%nctaid.z": grid[2], "%laneid": lane, "%warpid": lin // 32,
                                   "%lanemask_eq": 1 << lane, "%lanemask_lt": (1 << lane) - 1,
                                   "%lanemask_le": (2 << lane) - 1, "%lanemask_gt": mask(32) & ~((2 << lane) - 1),
                                   "%lanemask_ge": mask(32) & ~((1 << lane) - 1),
                                   "%nwarpid": -(-nthreads // 32)}
                            for nm in names:
                                if nm == "%nwarpid":
                                    # an upper bound on %warpid (ISA 10.x), at least the warps of the CTA
                                    assert got[nm][i] >= exp[nm]
                                    continue
                                assert got[nm][i] == exp[nm], (grid, block, (cx, cy, cz), (tx, ty, tz), nm,
                                                                got[nm][i], exp[nm])
                            i += 1


def test_special_register_widths():
    """%tid.x read as u16 (`mov.u16 %rs, %tid.x` form) and into u64 via cvt."""
    (d, e), _ = run("mov.u32 %t, %tid.x;\ncvt.u64.u32 %e, %t;\nmov.u16 %d, %tid.x;", [],
                    [("%d", "u16"), ("%e", "u64")], [], decls="  .reg .u32 %t;")
    assert d == list(range(NT)) and e == list(range(NT))


# ============================================================================ warp instructions

def m_shfl(mode, lane, val, b, c, active):
    """(value, pred) for one lane of shfl.sync (PTX ISA 9.7.9.6); value None = undefined."""
    b &= 31
    clamp = c & 0x1F
    segmask = (c >> 8) & 0x1F
    max_lane = (lane & segmask) | (clamp & ~segmask)
    min_lane = lane & segmask
    if mode == "up":
        j = lane - b
        p = j >= max_lane
    elif mode == "down":
        j = lane + b
        p = j <= max_lane
    elif mode == "bfly":
        j = lane ^ b
        p = j <= max_lane
    else:
        j = min_lane | (b & ~segmask)
        p = j <= max_lane
    if not p:
        j = lane
    if not active[j]:
        return None, p
    return val[j], p


@pytest.mark.parametrize("mode", ["up", "down", "bfly", "idx"])
@pytest.mark.parametrize("branch", [False, True])
@SOME
@given(data=st.data())
def test_shfl_sync(mode, branch, data):
    """shfl.sync with per-lane b and c operands (clamp and segment mask), the |p output, and
    (branch=True) some lanes branching away: they keep their destination; a lane that reads an
    inactive lane gets an undefined value (not checked), its predicate is still checked."""
    vals = data.draw(seeded(lambda r: r.getrandbits(32)))
    bv = data.draw(st.one_of(seeded(lambda r: r.randrange(41)), seeded(lambda r: r.getrandbits(32)),
                             st.integers(0, 33).map(lambda k: [k] * NT)))
    seg = data.draw(st.sampled_from([0x1F, 0x1E, 0x1C, 0x18, 0x10, 0x00, 0x0F]))
    clamp = data.draw(st.one_of(st.sampled_from([0, 31, 15, 7]).map(lambda k: [k] * NT),
                                seeded(lambda r: r.randrange(32))))
    # the usual c: ((32 - width) << 8) | clamp (31 for down/bfly/idx, 0 for up); per-lane c is allowed too
    cv = [((~seg & 0x1F) << 8) | k for k in clamp]
    skip = data.draw(seeded(lambda r: int(r.random() < 0.3))) if branch else [0] * NT
    body = """
        @%skip bra DONE;
        activemask.b32 %m;
        shfl.sync.MODE.b32 %d|%p, %a, %b, %c, %m;
    DONE:
        bar.warp.sync 0xffffffff;""".replace("MODE", mode)
    init_d = [0xC0FFEE00 + i for i in range(NT)]
    (d, p), _ = run(body, [("%a", "b32"), ("%b", "u32"), ("%c", "u32"), ("%skip", "pred")],
                    [("%d", "b32"), ("%p", "pred")], [vals, bv, cv, skip], init=[init_d, [0] * NT],
                    decls="  .reg .b32 %m;")
    for w0 in range(0, NT, 32):
        active = [not skip[w0 + k] for k in range(32)]
        for k in range(32):
            i = w0 + k
            if not active[k]:
                assert (d[i], p[i]) == (init_d[i], 0), (mode, "branched-away lane written", i)
                continue
            v, pp = m_shfl(mode, k, vals[w0:w0 + 32], bv[i], cv[i], active)
            assert p[i] == int(pp), (mode, k, bv[i], hex(cv[i]), p[i])
            if v is not None:
                assert d[i] == v, (mode, k, bv[i], hex(cv[i]), hex(d[i]), hex(v))


@pytest.mark.parametrize("mode", ["up", "down", "bfly", "idx"])
def test_shfl_sync_immediates_full_warp(mode):
    """The common nvcc form: immediate b, c and membermask; 64-bit values as two shuffles."""
    rng = random.Random(mode)
    xs = [rng.getrandbits(64) for _ in range(NT)]
    b = {"up": 1, "down": 4, "bfly": 16, "idx": 5}[mode]
    c = 0 if mode == "up" else 31
    body = f"""
        mov.b64 {{%lo, %hi}}, %a;
        shfl.sync.{mode}.b32 %lo, %lo, {b}, {c}, -1;
        shfl.sync.{mode}.b32 %hi, %hi, {b}, {c}, 0xffffffff;
        mov.b64 %d, {{%lo, %hi}};"""
    (d,), _ = run(body, [("%a", "b64")], [("%d", "b64")], [xs], decls="  .reg .b32 %lo, %hi;")
    for i in range(NT):
        k, w0 = i % 32, i - i % 32
        v, _ = m_shfl(mode, k, xs[w0:w0 + 32], b, c, [True] * 32)
        assert d[i] == v, (mode, i, hex(d[i]), hex(v))


@pytest.mark.parametrize("branch", [False, True])
@FAST
@given(data=st.data())
def test_vote_activemask(branch, data):
    pv = data.draw(st.one_of(seeded(lambda r: r.randrange(2)), st.sampled_from([[0] * NT, [1] * NT]),
                             st.integers(0, NT).map(lambda k: [1] * k + [0] * (NT - k))))
    skip = data.draw(seeded(lambda r: int(r.random() < 0.4))) if branch else [0] * NT
    body = """
        @%skip bra DONE;
        activemask.b32 %am;
        vote.sync.ballot.b32 %bal, %q, %am;
        vote.ballot.sync.b32 %bal2, !%q, %am;
        vote.sync.all.pred %all, %q, %am;
        vote.sync.any.pred %any, %q, %am;
        vote.sync.uni.pred %uni, %q, %am;
        vote.sync.all.pred %nall, !%q, %am;
    DONE:
        bar.warp.sync -1;"""
    dsts = [("%am", "b32"), ("%bal", "b32"), ("%bal2", "b32"), ("%all", "pred"), ("%any", "pred"),
            ("%uni", "pred"), ("%nall", "pred")]
    init = [[0xAAAA0000 + i for i in range(NT)]] * 3 + [[1] * NT] * 4
    outs, _ = run(body, [("%q", "pred"), ("%skip", "pred")], dsts, [pv, skip], init=init)
    am, bal, bal2, al, an, un, nall = outs
    for w0 in range(0, NT, 32):
        act = [k for k in range(32) if not skip[w0 + k]]
        amask = sum(1 << k for k in act)
        ball = sum(1 << k for k in act if pv[w0 + k])
        nball = sum(1 << k for k in act if not pv[w0 + k])
        for k in range(32):
            i = w0 + k
            if skip[i]:
                assert [o[i] for o in outs] == [x[i] for x in init], ("branched-away lane written", i)
                continue
            assert am[i] == amask, (i, hex(am[i]), hex(amask))
            assert bal[i] == ball and bal2[i] == nball, (i, hex(bal[i]), hex(ball))
            assert al[i] == int(ball == amask) and an[i] == int(ball != 0)
            assert un[i] == int(ball == amask or ball == 0)
            assert nall[i] == int(nball == amask)


@pytest.mark.parametrize("op,t", [(o, t) for o in ("add", "min", "max") for t in ("u32", "s32")] +
                         [(o, "b32") for o in ("and", "or", "xor")])
def test_redux_sync(op, t):
    """redux.sync over the active lanes (membermask = activemask), some lanes branched away."""
    rng = random.Random(op + t)
    vals = [rng.getrandbits(32) for _ in range(NT)]
    vals[:4] = [0x80000000, 0x7FFFFFFF, 0xFFFFFFFF, 0]
    skip = [int(rng.random() < 0.3) for _ in range(NT)]
    skip[32:] = [0] * 32                                   # the second warp is full
    body = f"""
        @%skip bra DONE;
        activemask.b32 %m;
        redux.sync.{op}.{t} %d, %a, %m;
    DONE:
        bar.warp.sync -1;"""
    init = [[0x12340000 + i for i in range(NT)]]
    (d,), _ = run(body, [("%a", t), ("%skip", "pred")], [("%d", t)], [vals, skip], init=init,
                  decls="  .reg .b32 %m;")
    for w0 in (0, 32):
        act = [vals[w0 + k] for k in range(32) if not skip[w0 + k]]
        xs = [tv(v, t) for v in act]
        if op == "add":
            r = sum(xs)
        elif op in ("min", "max"):
            r = min(xs) if op == "min" else max(xs)
        else:
            r = functools.reduce({"and": lambda x, y: x & y, "or": lambda x, y: x | y,
                                  "xor": lambda x, y: x ^ y}[op], xs)
        for k in range(32):
            i = w0 + k
            assert d[i] == (init[0][i] if skip[i] else r & mask(32)), (op, t, i, hex(d[i]), hex(r & mask(32)))


@pytest.mark.parametrize("mode", ["any", "all"])
@pytest.mark.parametrize("t", ["b32", "b64"])
def test_match_sync(mode, t):
    rng = random.Random(mode + t)
    w = type_bits(t)
    pool = [rng.getrandbits(w) for _ in range(3)]
    vals = [rng.choice(pool) for _ in range(32)] + [pool[0]] * 32        # second warp: all equal
    dst = "%d|%p" if mode == "all" else "%d"
    dsts = [("%d", "b32"), ("%p", "pred")]
    (d, p), _ = run(f"match.{mode}.sync.{t} {dst}, %a, 0xffffffff;", [("%a", t)], dsts, [vals],
                    init=[[7] * NT, [0] * NT])
    for w0 in (0, 32):
        for k in range(32):
            same = sum(1 << j for j in range(32) if vals[w0 + j] == vals[w0 + k])
            if mode == "any":
                assert d[w0 + k] == same, (t, k, hex(d[w0 + k]), hex(same))
            else:
                alleq = same == mask(32)
                assert (d[w0 + k], p[w0 + k]) == ((mask(32) if alleq else 0), int(alleq)), (t, k)


VABSDIFF4_A = [0x80808080, 0x7F7F7F7F, 0xFFFFFFFF, 0, 0x01FF7F80, 0x807F01FF]
VABSDIFF4_B = [0x7F7F7F7F, 0x80808080, 0, 0xFFFFFFFF, 0xFF017F80, 0x7F80FF01]
VABSDIFF4_C = [0x7FFFFF00, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x12345678, 0]


def _vabsdiff4_lanes(seed: str):
    rng = random.Random(seed)
    av = [rng.getrandbits(32) for _ in range(NT)] + VABSDIFF4_A
    bv = [rng.getrandbits(32) for _ in range(NT)] + VABSDIFF4_B
    cv = [rng.getrandbits(32) for _ in range(NT)] + VABSDIFF4_C
    return av, bv, cv


def _bytes_of(x, t):
    """The four bytes of x, sign-extended for .s32 operands (PTX ISA 9.7.18.2.3: extractAndSignExt_4)."""
    return [tv((x >> (8 * k)) & 0xFF, t[0] + "8") for k in range(4)]


@pytest.mark.parametrize("t", ["u32", "s32"])
def test_vabsdiff4_add(t):
    """vabsdiff4 with the secondary accumulate (.add) operation: d = c + sum of |a_i - b_i| over the
    four byte lanes, wrapped to 32 bits (.sat is not allowed with .add, see below)."""
    av, bv, cv = _vabsdiff4_lanes(t)
    (d,), _ = run(f"vabsdiff4.{t}.{t}.{t}.add %d, %a, %b, %c;", [("%a", "b32"), ("%b", "b32"), ("%c", "b32")],
                  [("%d", "b32")], [av, bv, cv], skip_unsupported=False)
    for i in range(len(av)):
        r = sum(abs(x - y) for x, y in zip(_bytes_of(av[i], t), _bytes_of(bv[i], t))) + cv[i]
        assert d[i] == r & mask(32), (t, hex(av[i]), hex(bv[i]), hex(cv[i]), hex(d[i]), hex(r & mask(32)))


@pytest.mark.parametrize("t", ["u32", "s32"])
def test_vabsdiff4_sat_merge(t):
    """The SIMD merge form with .sat: each byte lane |a_i - b_i| clamped to the 8-bit dtype range
    (0..255 for .u32, -128..127 for .s32; |.| is never negative), all four lanes written (default
    mask .b3210, so c contributes nothing)."""
    av, bv, cv = _vabsdiff4_lanes("sat" + t)
    (d,), _ = run(f"vabsdiff4.{t}.{t}.{t}.sat %d, %a, %b, %c;", [("%a", "b32"), ("%b", "b32"), ("%c", "b32")],
                  [("%d", "b32")], [av, bv, cv], skip_unsupported=False)
    hi = 255 if t == "u32" else 127
    for i in range(len(av)):
        lanes = [min(abs(x - y), hi) for x, y in zip(_bytes_of(av[i], t), _bytes_of(bv[i], t))]
        want = sum(v << (8 * k) for k, v in enumerate(lanes))
        assert d[i] == want, (t, hex(av[i]), hex(bv[i]), hex(d[i]), hex(want))


def test_vabsdiff4_add_sat_is_rejected_as_the_isa_says():
    """PTX ISA 9.7.18.2.3: "Saturation cannot be used with the secondary accumulate operation".
    The instruction table rejects the pair (`.sat`/`.add` share one exclusive group) and the
    integer model refuses it rather than inventing a clamp."""
    from ptxvm.interp.numerics import intops
    with pytest.raises(ptxvm.PtxSemanticError, match=r"conflicting modifiers `\.add` and `\.sat`"):
        run("vabsdiff4.u32.u32.u32.add.sat %d, %a, %b, %c;", [("%a", "b32"), ("%b", "b32"), ("%c", "b32")],
            [("%d", "b32")], [[1], [2], [3]], skip_unsupported=False)
    with pytest.raises(ValueError, match="cannot be used with the .add accumulate"):
        intops.vabsdiff4(np.uint32(1), np.uint32(2), np.uint32(3), sat=True, add=True)


def test_cvt_rna_tf32():
    """cvt.rna.tf32.f32: round to 10 explicit mantissa bits, ties away from zero (low 13 bits zero)."""
    rng = random.Random(5)
    xs = F32_EDGE_BITS + [rng.getrandbits(32) for _ in range(NT)] + [0x3F801000, 0x3F803000, 0x3F800FFF, 0xBF801000,
                                                                     0x7F7FF000, 0x00001000]
    (d,), _ = run("cvt.rna.tf32.f32 %d, %a;", [("%a", "f32")], [("%d", "b32")], [xs])
    for i, xb in enumerate(xs):
        if (xb >> 23) & 0xFF == 0xFF:
            if xb & mask(23):
                assert (d[i] >> 23) & 0xFF == 0xFF and d[i] & mask(23), (hex(xb), hex(d[i]))
            else:
                assert d[i] == xb, (hex(xb), hex(d[i]))
            continue
        r = ((xb & mask(31)) + 0x1000) & ~0x1FFF           # ties away on the magnitude; may carry into inf
        assert d[i] == (xb & (1 << 31)) | r, (hex(xb), hex(d[i]), hex((xb & (1 << 31)) | r))


# ============================================================================ slow campaign

@pytest.mark.slow
@pytest.mark.parametrize("op,t", BIN_OPS)
@SLOW
@given(data=st.data())
def test_slow_int_binary(op, t, data):
    w = type_bits(t)
    _int_binary_case(op, t, data.draw(lane_lists(ints(w))), data.draw(lane_lists(ints(w))))


@pytest.mark.slow
@pytest.mark.parametrize("op,t,rnd,ftz,sat_", FLOAT_CASES)
@SLOW
@given(data=st.data())
def test_slow_float(op, t, rnd, ftz, sat_, data):
    n = FLOAT_OPS[op]
    cols = [data.draw(lane_lists(fbits_strat(t))) for _ in range(n)]
    _float_case(op, t, rnd, ftz, sat_, cols)
