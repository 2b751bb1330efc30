"""LLVM emitters for PTX integer and bit instructions (``ptxvm.lift.semantics.intops``), JIT-compiled on
the host and checked bit for bit against Python-integer models written from the PTX ISA text
(shared with the interpreter's tests where they exist: ``test_intops``,
``test_interp_instructions``).

Each (emitter, type, modifiers) is compiled once (``jit`` is cached) and run over a whole
column of inputs: the cartesian product of edge values (0, 1, -1, INT_MIN, INT_MAX, all ones,
shift amounts 0, w-1, w, w+1, 2**32-1 ...) plus seeded random values.  Larger random
campaigns and every lop3 table are ``@pytest.mark.slow``.
"""

from __future__ import annotations

import functools
import itertools
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llvmlite import ir

from ptxvm import UnsupportedError
from ptxvm.lift.semantics import intops as I

from models.intops import (
    m_int_binary,
    m_lop3,
    m_mad,
    m_shf,
    m_shift,
    m_unary,
    model_bfe,
    model_bfi,
    model_bmsk,
    model_div,
    model_fns,
    model_prmt,
    model_szext,
)
from models.lift_harness import elementwise, storage_bits

UDT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
# PTX integer arithmetic exists for 16/32/64-bit types; the emitters are width-generic and the
# slow campaigns also run them on 8-bit operands.
INT_TYPES = [f"{k}{w}" for w in (16, 32, 64) for k in "us"]
ALL_INT_TYPES = [f"{k}{w}" for w in (8, 16, 32, 64) for k in "us"]
N_RANDOM = 200            # random rows per column in the default run
SLOW_RANDOM = 20000


# ============================================================================ helpers

@functools.cache
def bits(t: str) -> int:
    return 1 if t == "pred" else int("".join(c for c in t if c.isdigit()))


def mask(w: int) -> int:
    return (1 << w) - 1


def sx(v: int, w: int) -> int:
    v &= mask(w)
    return v - (1 << w) if v >> (w - 1) else v


def tv(v: int, t: str) -> int:
    """Raw bits as the value of integer type ``t``."""
    return sx(v, bits(t)) if t[0] == "s" else v & mask(bits(t))


def edges(w: int) -> list[int]:
    m, h = mask(w), 1 << (w - 1)
    base = {0, 1, 2, 3, m, m - 1, h, h - 1, h + 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF,
            0x12345678ABCDEF01, w - 1, w, w + 1}
    return sorted({x & m for x in base})


SHIFTS = [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 2**31, 2**32 - 1]


def rand_vals(rng: random.Random, w: int, n: int) -> list[int]:
    """Random w-bit patterns: full width, small magnitudes of either sign, near the extremes."""
    out = []
    for _ in range(n):
        k = rng.randrange(4)
        if k == 0:
            out.append(rng.getrandbits(w))
        elif k == 1:
            out.append(rng.randint(-300, 300) & mask(w))
        elif k == 2:
            out.append(((1 << (w - 1)) + rng.randint(-300, 300)) & mask(w))
        else:
            out.append(rng.getrandbits(rng.randint(1, w)))
    return out


def columns(spaces: list[list[int]], widths: list[int], seed, n_random: int = N_RANDOM,
            max_edge_rows: int = 4096) -> list[list[int]]:
    """Input columns: the product of the edge lists (capped, evenly thinned), then random rows."""
    rows = list(itertools.product(*spaces))
    if len(rows) > max_edge_rows:
        rows = rows[::-(-len(rows) // max_edge_rows)]
    rng = random.Random(repr(seed))
    rand = [rand_vals(rng, w, n_random) for w in widths]
    cols = [list(c) for c in zip(*rows)] if rows else [[] for _ in spaces]
    return [c + r for c, r in zip(cols, rand)]


@functools.cache
def jit(fn_name: str, in_types: tuple[str, ...], out_type: str, mods: tuple = (), part: int | None = None):
    """The emitter ``I.<fn_name>(b, *args, **mods)`` compiled over arrays; ``part`` selects one
    element of a tuple result (carry-producing emitters)."""
    fn = getattr(I, fn_name)
    kw = dict(mods)

    def emit(b, *args):
        r = fn(b, *args, **kw)
        if part == "pack":            # (carry << N) | result, one compile for both outputs
            wide = ir.IntType(2 * r[0].type.width)
            return b.or_(b.zext(r[0], wide), b.shl(b.zext(r[1], wide), ir.Constant(wide, r[0].type.width)))
        return r[part] if part is not None else r
    return elementwise(emit, list(in_types), out_type)


def check_carry(fn_name, in_types, t, cols, model, mods=None):
    """Check both outputs ``(d, carry)`` of a carry emitter; ``model`` returns both.  Up to
    32 bits they travel packed in one 2N-bit output, 64-bit ones take two compiles."""
    w = bits(t)
    if w <= 32:
        check(fn_name, in_types, f"u{2 * w}", cols, lambda *r: (lambda d, c: d | (c << w))(*model(*r)),
              mods, part="pack")
        return
    for part in (0, 1):
        check(fn_name, in_types, t if part == 0 else "pred", cols, lambda *r: model(*r)[part], mods, part=part)


def run(fn_name, in_types, out_type, cols, mods=(), part=None) -> list[int]:
    f = jit(fn_name, tuple(in_types), out_type, tuple(sorted(mods.items())) if isinstance(mods, dict)
            else tuple(mods), part)
    arrays = []
    for c, t in zip(cols, in_types):
        sb = storage_bits(t)
        m = mask(sb)
        arrays.append(np.array([v & m for v in c], dtype=UDT[sb]))
    return [int(v) for v in f(*arrays)]


def check(fn_name, in_types, out_type, cols, model, mods=None, part=None):
    """Run the emitter over ``cols`` and compare every row with ``model(*row)`` (masked to the
    output width); the failure message lists the first mismatching rows in hex."""
    mods = mods or {}
    got = run(fn_name, in_types, out_type, cols, mods, part)
    m = mask(bits(out_type))
    bad = []
    for i, row in enumerate(zip(*cols)):
        want = model(*row) & m
        if got[i] != want:
            bad.append(f"{fn_name}{mods} {[hex(v) for v in row]}: got {got[i]:#x}, want {want:#x}")
            if len(bad) >= 5:
                break
    assert not bad, "\n".join(bad)
    return got


# ============================================================================ add / sub / carries

@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_sub_wrap(op, t):
    w = bits(t)
    cols = columns([edges(w), edges(w)], [w, w], (op, t))
    check("iadd" if op == "add" else "isub", [t, t], t, cols, lambda a, b: m_int_binary(op, t, a, b),
          {"signed": t[0] == "s"})


@pytest.mark.parametrize("t", ["s32", "s8", "s16", "s64"])   # the ISA has .sat on .s32 only
@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_sub_sat(op, t):
    w = bits(t)
    cols = columns([edges(w), edges(w)], [w, w], (op, t, "sat"))
    check("iadd" if op == "add" else "isub", [t, t], t, cols,
          lambda a, b: m_int_binary(op + ".sat", t, a, b), {"sat": True, "signed": True})


def m_packed(op, signed, relu, a, b):
    """One 16-bit lane at a time (element 0 in the low half), from the ISA's per-element text."""
    out = 0
    for sh in (0, 16):
        x, y = (a >> sh) & 0xFFFF, (b >> sh) & 0xFFFF
        vx, vy = (sx(x, 16), sx(y, 16)) if signed else (x, y)
        r = {"add": vx + vy, "sub": vx - vy, "min": min(vx, vy), "max": max(vx, vy)}[op]
        if relu:
            r = max(r, 0)
        out |= (r & 0xFFFF) << sh
    return out


@pytest.mark.parametrize("op,signed,relu", [("add", False, False), ("sub", False, False),
                                            ("min", False, False), ("max", False, False),
                                            ("min", True, False), ("max", True, False),
                                            ("min", True, True), ("max", True, True)])
def test_packed_16x2(op, signed, relu):
    halves = [0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0xFFFE, 0x00FF]
    e = [(h << 16) | l for h in halves for l in halves[::3]]
    cols = columns([e, e], [32, 32], ("x2", op, signed, relu))
    fn = {"add": "iadd", "sub": "isub", "min": "imin", "max": "imax"}[op]
    mods = {"x2": True} if op in ("add", "sub") else {"x2": True, "signed": signed, "relu": relu}
    check(fn, ["b32", "b32"], "b32", cols, lambda a, b: m_packed(op, signed, relu, a, b), mods)


def m_add_cc(w, a, b, c=None):
    s = a + b + (c or 0)                           # 9.7.2.1/2: carry out of the unsigned sum
    return s & mask(w), s >> w


def m_sub_cc(w, a, b, c=None):
    # The hardware's subtraction (issue 14, measured): a + ~b + CF, CF = 1 for sub.cc; CC.CF is
    # the carry out of that sum, so a borrow leaves 0.
    s = a + (~b & mask(w)) + (1 if c is None else c)
    return s & mask(w), s >> w


@pytest.mark.parametrize("w", [16, 32, 64])
@pytest.mark.parametrize("op", ["add_cc", "sub_cc"])
@pytest.mark.parametrize("with_cin", [False, True])
def test_carry_ops(op, w, with_cin):
    t = f"u{w}"
    model = m_add_cc if op == "add_cc" else m_sub_cc
    if with_cin:
        cols = columns([edges(w), edges(w), [0, 1]], [w, w, 1], (op, w))
        cols[2] = [c & 1 for c in cols[2]]
        types = [t, t, "pred"]
    else:
        cols = columns([edges(w), edges(w)], [w, w], (op, w))
        types = [t, t]
    check_carry(op, types, t, cols, lambda a, b, c=None: model(w, a, b, c))


def _chain(op):
    """A 64-bit add/sub built from two 32-bit words through add.cc+addc (sub.cc+subc)."""
    cc = getattr(I, op)

    def emit(b, a0, a1, b0, b1):
        lo, cf = cc(b, a0, b0)
        hi, _ = cc(b, a1, b1, cf)
        i64 = ir.IntType(64)
        return b.or_(b.zext(lo, i64), b.shl(b.zext(hi, i64), ir.Constant(i64, 32)))
    return elementwise(emit, ["u32"] * 4, "u64")


@pytest.mark.parametrize("op", ["add_cc", "sub_cc"])
def test_multiword_chain(op):
    f = _chain(op)
    vals = [0, 1, 2**64 - 1, 2**63, 2**32 - 1, 2**32, 0xFFFFFFFF00000000, 0x00000001FFFFFFFF]
    rng = random.Random(op)
    pairs = [(x, y) for x in vals for y in vals] + [(rng.getrandbits(64), rng.getrandbits(64)) for _ in range(200)]
    a = np.array([x for x, _ in pairs], np.uint64)
    b = np.array([y for _, y in pairs], np.uint64)
    got = f(a & 0xFFFFFFFF, a >> np.uint64(32), b & 0xFFFFFFFF, b >> np.uint64(32))
    want = [((x + y) if op == "add_cc" else (x - y)) & mask(64) for x, y in pairs]
    assert [int(v) for v in got] == want


# ============================================================================ multiply / mad

@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("mode", ["lo", "hi"])
def test_mul(mode, t):
    w = bits(t)
    cols = columns([edges(w), edges(w)], [w, w], ("mul", mode, t))
    check("mul", [t, t], t, cols, lambda a, b: m_int_binary(f"mul.{mode}", t, a, b),
          {"mode": mode, "signed": t[0] == "s"})


@pytest.mark.parametrize("t", [t for t in INT_TYPES if bits(t) <= 32])
def test_mul_wide(t):
    w = bits(t)
    wt = t[0] + str(2 * w)
    cols = columns([edges(w), edges(w)], [w, w], ("mulwide", t))
    check("mul", [t, t], wt, cols, lambda a, b: tv(a, t) * tv(b, t), {"mode": "wide", "signed": t[0] == "s"})


MAD_CASES = [(m, t) for m in ("lo", "hi") for t in INT_TYPES] + \
    [("wide", t) for t in INT_TYPES if bits(t) <= 32] + [("hi.sat", "s32")]


@pytest.mark.parametrize("mode,t", MAD_CASES)
def test_mad(mode, t):
    w = bits(t)
    ct = t[0] + str(2 * w) if mode == "wide" else t
    small = edges(w)[::2]
    cols = columns([small, small, edges(bits(ct))[::2]], [w, w, bits(ct)], ("mad", mode, t))
    base, sat = mode.split(".")[0], mode.endswith("sat")
    check("mad", [t, t, ct], ct, cols, lambda a, b, c: m_mad(base, t, a, b, c, sat=sat),
          {"mode": base, "signed": t[0] == "s", "sat": sat})


def m_mad_cc(mode, t, a, b, c, cin):
    """9.7.2.5/6: d = part(a*b) + c + CC.CF; CF = carry out of that unsigned addition."""
    w = bits(t)
    p = tv(a, t) * tv(b, t)
    part = (p >> w if mode == "hi" else p) & mask(w)
    s = part + c + cin
    return s & mask(w), s >> w


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
@pytest.mark.parametrize("mode", ["lo", "hi"])
@pytest.mark.parametrize("with_cin", [False, True])
def test_mad_cc(mode, t, with_cin):
    w = bits(t)
    small = edges(w)[::2]
    spaces, widths, types = [small, small, small], [w, w, w], [t, t, t]
    if with_cin:
        spaces, widths, types = spaces + [[0, 1]], widths + [1], types + ["pred"]
    cols = columns(spaces, widths, ("madcc", mode, t, with_cin))
    if with_cin:
        cols[3] = [c & 1 for c in cols[3]]
    check_carry("mad_cc", types, t, cols, lambda a, b, c, cin=0: m_mad_cc(mode, t, a, b, c, cin),
                {"mode": mode, "signed": t[0] == "s"})


def m_mul24(mode, t, a, b):
    """9.7.1.5: product of the low 24 bits (signed: as 24-bit two's complement); .hi = t<47..16>."""
    x, y = a & 0xFFFFFF, b & 0xFFFFFF
    if t == "s32":
        x, y = sx(x, 24), sx(y, 24)
    p = x * y
    return (p >> 16 if mode == "hi" else p) & mask(32)


MUL24_EDGES = [0, 1, 0x7FFFFF, 0x800000, 0xFFFFFF, 0x1000000, 0xFF800000, 0xFFFFFFFF, 0x80000000, 0x12345678]


@pytest.mark.parametrize("t", ["u32", "s32"])
@pytest.mark.parametrize("mode", ["lo", "hi"])
def test_mul24_mad24(mode, t):
    cols = columns([MUL24_EDGES, MUL24_EDGES, edges(32)[::3]], [32, 32, 32], ("mul24", mode, t))
    signed = t == "s32"
    check("mul24", [t, t], t, cols[:2], lambda a, b: m_mul24(mode, t, a, b), {"mode": mode, "signed": signed})
    check("mad24", [t, t, t], t, cols, lambda a, b, c: m_mul24(mode, t, a, b) + c,
          {"mode": mode, "signed": signed})
    if mode == "hi" and signed:          # mad24.hi.sat.s32: exact sum clamped to s32
        check("mad24", [t, t, t], t, cols,
              lambda a, b, c: max(-2**31, min(2**31 - 1, sx(m_mul24(mode, t, a, b), 32) + sx(c, 32))),
              {"mode": mode, "signed": True, "sat": True})


@pytest.mark.parametrize("t", INT_TYPES)
def test_sad(t):
    w = bits(t)
    small = edges(w)[::2]
    cols = columns([small, small, small], [w, w, w], ("sad", t))
    check("sad", [t, t, t], t, cols, lambda a, b, c: c + abs(tv(a, t) - tv(b, t)), {"signed": t[0] == "s"})


# ============================================================================ div / rem

@pytest.mark.parametrize("t", INT_TYPES)
def test_div_rem(t):
    w = bits(t)
    cols = columns([edges(w), edges(w)], [w, w], ("div", t))
    signed = t[0] == "s"
    check("div", [t, t], t, cols, lambda a, b: model_div(a, b, t)[0], {"signed": signed})
    check("rem", [t, t], t, cols, lambda a, b: model_div(a, b, t)[1], {"signed": signed})


@pytest.mark.parametrize("w", [16, 32, 64])
def test_div_rem_special_values(w):
    """The cases x86 div/idiv trap on (and LLVM calls undefined) run and give PTX's answers."""
    m, h = mask(w), 1 << (w - 1)
    a, b = [7, h, 0, m, h, h], [0, m, 0, 0, m, 1]
    s, u = f"s{w}", f"u{w}"
    assert run("div", [s, s], s, [a, b], {"signed": True}) == [m, h, m, m, h, h]
    assert run("rem", [s, s], s, [a, b], {"signed": True}) == [m, 0, m, m, 0, 0]
    assert run("div", [u, u], u, [a, b], {"signed": False}) == [m, 0, m, m, 0, h]
    assert run("rem", [u, u], u, [a, b], {"signed": False}) == [m, h, m, m, h, 0]


# ============================================================================ abs / neg / min / max

@pytest.mark.parametrize("t", [t for t in INT_TYPES if t[0] == "s"])
@pytest.mark.parametrize("op", ["abs", "neg"])
def test_abs_neg(op, t):
    w = bits(t)
    cols = columns([edges(w)], [w], (op, t))
    check("iabs" if op == "abs" else "ineg", [t], t, cols, lambda a: m_unary(op, t, a))


MINMAX = [(op, t, False) for op in ("min", "max") for t in INT_TYPES] + \
    [(op, "s32", True) for op in ("min", "max")]


@pytest.mark.parametrize("op,t,relu", MINMAX)
def test_min_max(op, t, relu):
    w = bits(t)
    cols = columns([edges(w), edges(w)], [w, w], (op, t, relu))

    def model(a, b):
        r = m_int_binary(op, t, a, b)
        return 0 if relu and sx(r, w) < 0 else r
    check("imin" if op == "min" else "imax", [t, t], t, cols, model, {"signed": t[0] == "s", "relu": relu})


# ============================================================================ bit counting

UNARY = [(op, t) for op in ("popc", "clz", "brev") for t in ("b32", "b64")] + \
    [(op, t) for op in ("bfind", "bfind.shiftamt") for t in ("u32", "s32", "u64", "s64")]


@pytest.mark.parametrize("op,t", UNARY)
def test_bit_unary(op, t):
    w = bits(t)
    vals = edges(w) + [1 << k for k in range(w)] + [mask(w) ^ (1 << k) for k in range(w)] + \
        [mask(w) >> k for k in range(w)]
    cols = columns([vals], [w], (op, t))
    name, _, mod = op.partition(".")
    mods = {"signed": t[0] == "s", "shiftamt": bool(mod)} if name == "bfind" else {}
    out = t if name == "brev" else "u32"
    check(name, [t], out, cols, lambda a: m_unary(op, t, a), mods)


def test_fns():
    masks = [0, 1, 0x80000000, 0xFFFFFFFF, 0xAAAAAAAA, 0x55555555, 0x00010001, 0x80000001]
    bases = [0, 1, 15, 16, 30, 31, 32, 33, 255, 2**32 - 1]
    offs = [x & mask(32) for x in (0, 1, 2, 3, 16, 17, 31, 32, 33, -1, -2, -16, -17, -32, -33,
                                   2**31 - 1, -2**31)]
    cols = columns([masks, bases, offs], [32, 5, 32], "fns")
    rng = random.Random("fns-offsets")         # random rows: offsets small enough to hit bits
    cols[2][-N_RANDOM:] = [rng.randint(-34, 34) & mask(32) for _ in range(N_RANDOM)]
    check("fns", ["b32", "u32", "s32"], "u32", cols, lambda m, b, o: model_fns(m, b, o))


# ============================================================================ bit fields

POSLEN = [0, 1, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 200, 255, 256, 257, 0x1FF, 2**32 - 1]


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
def test_bfe(t):
    w = bits(t)
    vals = [0, 1, mask(w), 1 << (w - 1), (1 << (w - 1)) - 1, 0x12345678ABCDEF01 & mask(w), 0x0F0F0F0F0F0F0F0F & mask(w)]
    cols = columns([vals, POSLEN, POSLEN], [w, 8, 8], ("bfe", t))
    check("bfe", [t, "u32", "u32"], t, cols, lambda a, p, n: model_bfe(a, p, n, t), {"signed": t[0] == "s"})


@pytest.mark.parametrize("t", ["b32", "b64"])
def test_bfi(t):
    w = bits(t)
    vals = [0, mask(w), 0x12345678ABCDEF01 & mask(w)]
    cols = columns([vals, vals[:2], POSLEN, POSLEN], [w, w, 8, 8], ("bfi", t))
    check("bfi", [t, t, "u32", "u32"], t, cols, lambda a, b, p, n: model_bfi(a, b, p, n, w))


@pytest.mark.parametrize("mode", ["clamp", "wrap"])
@pytest.mark.parametrize("t", ["u32", "s32"])
def test_szext(t, mode):
    vals = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x12345678, 0xF0F0F0F0, 0x00008000]
    cols = columns([vals, POSLEN + list(range(1, 31, 3))], [32, 6], ("szext", t, mode))
    check("szext", [t, "u32"], t, cols, lambda a, n: model_szext(a, n, t, mode),
          {"signed": t == "s32", "mode": mode})


@pytest.mark.parametrize("mode", ["clamp", "wrap"])
def test_bmsk(mode):
    cols = columns([POSLEN + [5, 20, 30], POSLEN + [5, 20, 30]], [6, 6], ("bmsk", mode))
    check("bmsk", ["u32", "u32"], "b32", cols, lambda a, b: model_bmsk(a, b, mode), {"mode": mode})


# ============================================================================ logic and shifts

@pytest.mark.parametrize("t", ["b16", "b32", "b64"])
def test_logic(t):
    w = bits(t)
    cols = columns([edges(w), edges(w)], [w, w], ("logic", t))
    for op, fn in (("and", "and_"), ("or", "or_"), ("xor", "xor")):
        check(fn, [t, t], t, cols, lambda a, b: m_int_binary(op, t, a, b))
    check("not_", [t], t, cols[:1], lambda a: m_unary("not", t, a))
    check("cnot", [t], t, cols[:1], lambda a: m_unary("cnot", t, a))


def test_logic_pred():
    cols = [[0, 0, 1, 1], [0, 1, 0, 1]]
    assert run("and_", ["pred", "pred"], "pred", cols) == [0, 0, 0, 1]
    assert run("or_", ["pred", "pred"], "pred", cols) == [0, 1, 1, 1]
    assert run("xor", ["pred", "pred"], "pred", cols) == [0, 1, 1, 0]
    assert run("not_", ["pred"], "pred", cols[:1]) == [1, 1, 0, 0]


LUTS = [0x00, 0xFF, 0xF0, 0xCC, 0xAA, 0x80, 0xFE, 0x96, 0xE8, 0x1E, 0x6A, 0x5B, 0x01, 0x7F, 0xCA, 0x3C]


def _lop3_case(lut, t):
    w = bits(t)
    cols = columns([[0, mask(w), 0xF0F0F0F0F0F0F0F0 & mask(w)]] * 3, [w, w, w], ("lop3", lut, t),
                   n_random=64)
    check("lop3", [t, t, t], t, cols, lambda a, b, c: m_lop3(a, b, c, lut, w), {"lut": lut})


@pytest.mark.parametrize("lut", LUTS)
def test_lop3(lut):
    _lop3_case(lut, "b32")


def test_lop3_canonical_operands():
    a, b, c = 0xF0F0F0F0, 0xCCCCCCCC, 0xAAAAAAAA       # lut = F(0xF0, 0xCC, 0xAA)
    for lut in (0x00, 0xFF, 0x96, 0xE8, 0x80, 0xFE, 0x5B):
        assert run("lop3", ["b32"] * 3, "b32", [[a], [b], [c]], {"lut": lut}) == [lut * 0x01010101]


@pytest.mark.slow
@pytest.mark.parametrize("lut", range(256))
def test_slow_lop3_all_tables(lut):
    _lop3_case(lut, "b32")
    _lop3_case(lut, "b64")


# shl exists for .b types only (signedness is irrelevant to it); shr for .b .u .s
SHIFT_CASES = [("shl", f"b{w}") for w in (16, 32, 64)] + \
    [("shr", f"{k}{w}") for w in (16, 32, 64) for k in "bus"]


@pytest.mark.parametrize("op,t", SHIFT_CASES)
def test_shift(op, t):
    w = bits(t)
    amounts = sorted(set(SHIFTS + [w - 1, w, w + 1]))
    cols = columns([edges(w), amounts], [w, 7], (op, t))
    mods = {"signed": t[0] == "s"} if op == "shr" else {}
    check(op, [t, "u32"], t, cols, lambda a, s: m_shift(op, t, a, s), mods)


@pytest.mark.parametrize("direction", ["l", "r"])
@pytest.mark.parametrize("mode", ["clamp", "wrap"])
def test_shf(direction, mode):
    vals = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x12345678, 0x9ABCDEF0]
    cols = columns([vals, vals, SHIFTS], [32, 32, 7], ("shf", direction, mode))
    check("shf", ["b32", "b32", "u32"], "b32", cols,
          lambda a, b, n: m_shf(a, b, n, direction == "l", mode == "clamp"),
          {"direction": direction, "mode": mode})


PRMT_SELS = [0x3210, 0x7654, 0x0123, 0x4567, 0x8888, 0xFFFF, 0xBA98, 0x7531, 0, 1, 2, 3, 0xFFFFFFFF,
             0x12345678, 0x0000C0DE, 0x99999999]


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
def test_prmt(mode):
    vals = [0x03020100, 0x07060504, 0x80FF7F01, 0xFFFFFFFF, 0, 0x8000807F]
    cols = columns([vals, vals, PRMT_SELS], [32, 32, 16], ("prmt", mode))
    check("prmt", ["b32", "b32", "b32"], "b32", cols, lambda a, b, c: model_prmt(a, b, c, mode), {"mode": mode})


def test_prmt_isa_examples():
    assert run("prmt", ["b32"] * 3, "b32", [[0x03020100], [0x07060504], [0x7531]]) == [0x07050301]
    assert run("prmt", ["b32"] * 3, "b32", [[0x83000000], [0], [0xBBBB]]) == [0xFFFFFFFF]
    assert run("prmt", ["b32"] * 3, "b32", [[0x03020100], [0x07060504], [1]], {"mode": "f4e"}) == [0x04030201]
    assert run("prmt", ["b32"] * 3, "b32", [[0x03020100], [0x07060504], [0]], {"mode": "b4e"}) == [0x05060700]


# ============================================================================ dp4a / dp2a / vabsdiff4

def byte_lanes(x, n, w, signed):
    return [sx((x >> (i * w)) & mask(w), w) if signed else (x >> (i * w)) & mask(w) for i in range(n)]


SIMD_VALS = [0, 0xFFFFFFFF, 0x80808080, 0x7F7F7F7F, 0x01FF807F, 0x12345678, 0x80007FFF]
SIGNS = [(False, False), (False, True), (True, False), (True, True)]


@pytest.mark.parametrize("sa,sb", SIGNS)
def test_dp4a_dp2a(sa, sb):
    cols = columns([SIMD_VALS, SIMD_VALS, [0, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 5]], [32, 32, 32],
                   ("dp", sa, sb))
    mods = {"a_signed": sa, "b_signed": sb}
    check("dp4a", ["b32"] * 3, "b32", cols,
          lambda a, b, c: c + sum(p * q for p, q in zip(byte_lanes(a, 4, 8, sa), byte_lanes(b, 4, 8, sb))), mods)
    for mode, first in (("lo", 0), ("hi", 2)):
        check("dp2a", ["b32"] * 3, "b32", cols,
              lambda a, b, c: c + sum(p * q for p, q in zip(byte_lanes(a, 2, 16, sa),
                                                            byte_lanes(b, 4, 8, sb)[first:first + 2])),
              {**mods, "mode": mode})


def m_vabsdiff4(a, b, c, sa, sb, sd, sat, add, lane_mask=0xF, asel=0x3210, bsel=0x7654):
    """9.7.18.2.3: per byte lane |a_i - b_i| (lane bytes picked from {b, a} by the selectors);
    the result lane saturates to the 8-bit dtype range with .sat; .add sums the lanes into c."""
    src = [(((b << 32) | a) >> (8 * k)) & 0xFF for k in range(8)]
    diffs = {}
    for i in range(4):
        if (lane_mask >> i) & 1:
            x, y = src[(asel >> (4 * i)) & 7], src[(bsel >> (4 * i)) & 7]
            x, y = (sx(x, 8) if sa else x), (sx(y, 8) if sb else y)
            diffs[i] = abs(x - y)
    if add:
        r = (sx(c, 32) if sd else c) + sum(diffs.values())
        if sat:
            r = max(-2**31, min(2**31 - 1, r)) if sd else min(r, mask(32))
        return r
    out = 0
    for i in range(4):
        v = (diffs[i] if not sat else min(diffs[i], 127 if sd else 255)) if i in diffs else (c >> (8 * i))
        out |= (v & 0xFF) << (8 * i)
    return out


# the dtype's signedness only matters with .sat
VABS = [(sa, sb, sd, sat, add) for sa, sb in SIGNS for sat, sd in ((False, False), (True, False), (True, True))
        for add in (False, True)]


@pytest.mark.parametrize("sa,sb,sd,sat,add", VABS)
def test_vabsdiff4(sa, sb, sd, sat, add):
    cs = [0, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x7FFFFF00, 0xA5A5A5A5]
    cols = columns([SIMD_VALS, SIMD_VALS, cs], [32, 32, 32], ("vabs", sa, sb, sd, sat, add))
    check("vabsdiff4", ["b32"] * 3, "b32", cols,
          lambda a, b, c: m_vabsdiff4(a, b, c, sa, sb, sd, sat, add),
          {"a_signed": sa, "b_signed": sb, "d_signed": sd, "sat": sat, "secondary": "add" if add else None})


@pytest.mark.parametrize("lane_mask,asel,bsel", [(0b0101, 0x3210, 0x7654), (0xF, 0x0000, 0x4567),
                                                 (0b1010, 0x7654, 0x3210), (0x0, 0x3210, 0x7654)])
@pytest.mark.parametrize("add", [False, True])
def test_vabsdiff4_mask_selectors(lane_mask, asel, bsel, add):
    cols = columns([SIMD_VALS, SIMD_VALS, [0, 0xA5A5A5A5, 0xFFFFFFFF]], [32, 32, 32],
                   ("vabs-sel", lane_mask, asel, bsel, add))
    check("vabsdiff4", ["b32"] * 3, "b32", cols,
          lambda a, b, c: m_vabsdiff4(a, b, c, False, False, False, False, add, lane_mask, asel, bsel),
          {"mask": lane_mask, "asel": asel, "bsel": bsel, "secondary": "add" if add else None})


# ============================================================================ refusals

@pytest.mark.parametrize("call", [
    lambda b, x: I.iadd(b, x, x, sat=True),                       # add.sat.u32
    lambda b, x: I.isub(b, x, x, sat=True, signed=False),
    lambda b, x: I.iadd(b, x, x, sat=True, signed=True, x2=True),
    lambda b, x: I.mad(b, x, x, x, mode="lo", signed=True, sat=True),
    lambda b, x: I.mad(b, x, x, x, mode="hi", signed=False, sat=True),
    lambda b, x: I.mad24(b, x, x, x, mode="lo", signed=True, sat=True),
    lambda b, x: I.mul(b, x, x, mode="middle"),
    lambda b, x: I.mad_cc(b, x, x, x, mode="wide"),
    lambda b, x: I.imin(b, x, x, relu=True),                      # .relu on an unsigned type
    lambda b, x: I.szext(b, x, x, mode="saturate"),
    lambda b, x: I.bmsk(b, x, x, mode="other"),
    lambda b, x: I.shf(b, x, x, x, direction="up", mode="wrap"),
    lambda b, x: I.shf(b, x, x, x, direction="l", mode="none"),
    lambda b, x: I.prmt(b, x, x, x, mode="xyz"),
    lambda b, x: I.lop3(b, x, x, x, x),                           # LUT not an immediate
    lambda b, x: I.dp2a(b, x, x, x, mode="mid"),
    lambda b, x: I.vabsdiff4(b, x, x, x, secondary="min"),
    lambda b, x: I.vabsdiff4(b, x, x, x, secondary="max"),
])
def test_unsupported_forms_raise(call):
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(ir.IntType(32), [ir.IntType(32)]), "f")
    b = ir.IRBuilder(fn.append_basic_block())
    with pytest.raises(UnsupportedError):
        call(b, fn.args[0])


def test_unsupported_widths_raise():
    mod = ir.Module()
    i64 = ir.IntType(64)
    fn = ir.Function(mod, ir.FunctionType(i64, [i64]), "f")
    b = ir.IRBuilder(fn.append_basic_block())
    x = fn.args[0]
    for call in (lambda: I.mul(b, x, x, mode="wide"), lambda: I.mul24(b, x, x), lambda: I.szext(b, x, x),
                 lambda: I.dp4a(b, x, x, x), lambda: I.iadd(b, x, x, x2=True)):
        with pytest.raises(UnsupportedError):
            call()


# ============================================================================ random property test

FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

BINARY_PROPS = [
    ("iadd", "add", {}), ("isub", "sub", {}), ("div", "div", {"signed": None}), ("rem", "rem", {"signed": None}),
    ("imin", "min", {"signed": None}), ("imax", "max", {"signed": None}),
    ("mul", "mul.hi", {"mode": "hi", "signed": None}),
]


@FAST
@given(data=st.data())
def test_random_binary_property(data):
    """Hypothesis-drawn operand lists through the already-compiled binary emitters."""
    fn, op, mods = data.draw(st.sampled_from(BINARY_PROPS))
    t = data.draw(st.sampled_from(INT_TYPES))
    w = bits(t)
    vals = st.one_of(st.integers(0, mask(w)), st.sampled_from(edges(w)))
    rows = data.draw(st.lists(st.tuples(vals, vals), min_size=1, max_size=32))
    mods = {k: (t[0] == "s" if v is None else v) for k, v in mods.items()}
    cols = [[r[0] for r in rows], [r[1] for r in rows]]
    check(fn, [t, t], t, cols, lambda a, b: m_int_binary(op, t, a, b), mods)


# ============================================================================ slow campaigns

@pytest.mark.slow
@pytest.mark.parametrize("t", ALL_INT_TYPES)
def test_slow_random_arith(t):
    w = bits(t)
    s = t[0] == "s"
    cols = columns([[0], [0]], [w, w], ("slow", t), n_random=SLOW_RANDOM)
    for fn, op, mods in [("iadd", "add", {}), ("isub", "sub", {}), ("div", "div", {"signed": s}),
                         ("rem", "rem", {"signed": s}), ("mul", "mul.hi", {"mode": "hi", "signed": s}),
                         ("mul", "mul.lo", {"mode": "lo", "signed": s}), ("imin", "min", {"signed": s}),
                         ("imax", "max", {"signed": s})]:
        check(fn, [t, t], t, cols, lambda a, b: m_int_binary(op, t, a, b), mods)
    cols3 = columns([[0]] * 3, [w, w, w], ("slow3", t), n_random=SLOW_RANDOM)
    for mode in ("lo", "hi"):
        check("mad", [t, t, t], t, cols3, lambda a, b, c: m_mad(mode, t, a, b, c), {"mode": mode, "signed": s})
    check("sad", [t, t, t], t, cols3, lambda a, b, c: c + abs(tv(a, t) - tv(b, t)), {"signed": s})
    cols3[2] = [c & 1 for c in cols3[2]]
    u = f"u{w}"
    check_carry("add_cc", [u, u, "pred"], u, cols3, lambda a, b, c: m_add_cc(w, a, b, c))
    check_carry("sub_cc", [u, u, "pred"], u, cols3, lambda a, b, c: m_sub_cc(w, a, b, c))
    amounts = [v % (2 * w + 3) if i % 2 else v for i, v in enumerate(cols[1])]
    check("shr", [t, "u32"], t, [cols[0], amounts], lambda a, n: m_shift("shr", t, a, n), {"signed": s})
    check("shl", [t, "u32"], t, [cols[0], amounts], lambda a, n: m_shift("shl", t, a, n))


@pytest.mark.slow
@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
def test_slow_random_bitfields(t):
    w = bits(t)
    cols = columns([[0], [0], [0]], [w, 9, 9], ("slowbf", t), n_random=SLOW_RANDOM)
    check("bfe", [t, "u32", "u32"], t, cols, lambda a, p, n: model_bfe(a, p, n, t), {"signed": t[0] == "s"})
    cols4 = columns([[0]] * 4, [w, w, 9, 9], ("slowbfi", t), n_random=SLOW_RANDOM)
    check("bfi", [t, t, "u32", "u32"], t, cols4, lambda a, b, p, n: model_bfi(a, b, p, n, w))


@pytest.mark.slow
def test_slow_random_fns_prmt_shf():
    rng = random.Random("slow-fns")
    n = SLOW_RANDOM
    cols = [[rng.getrandbits(32) for _ in range(n)], [rng.randrange(40) for _ in range(n)],
            [rng.randint(-40, 40) & mask(32) for _ in range(n)]]
    check("fns", ["b32", "u32", "s32"], "u32", cols, model_fns)
    cols = columns([[0]] * 3, [32, 32, 32], "slow-prmt", n_random=n)
    for mode in (None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"):
        check("prmt", ["b32"] * 3, "b32", cols, lambda a, b, c: model_prmt(a, b, c, mode), {"mode": mode})
    cols = columns([[0]] * 3, [32, 32, 6], "slow-shf", n_random=n)
    for d in "lr":
        for mode in ("clamp", "wrap"):
            check("shf", ["b32", "b32", "u32"], "b32", cols, lambda a, b, k: m_shf(a, b, k, d == "l", mode == "clamp"),
                  {"direction": d, "mode": mode})
