"""Half precision instructions on the interpreter, one PTX instruction per lane (the harness of
test_interp_instructions): f16/bf16 scalar and packed x2 `add sub mul fma neg abs min max` with
every legal `.rn .ftz .sat .relu .NaN .xorsign.abs` combination (PTX ISA 9.0 §9.7.4), and the
comparisons `setp`/`set` on `.f16 .bf16 .f16x2 .bf16x2` (§9.7.7).

Expected bits come from test_half's independent models (Fractions rounded by a plain Python
IEEE 754 rounding); packed x2 values apply them to the low (element 0) and high halves.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.half import (
    BF16_EDGES,
    CMP,
    F16_EDGES,
    NAN,
    decode,
    ftz_in,
    model_arith,
    model_minmax,
)
from models.half import (
    fval as hval,
)
from models.instruction_harness import run

FEW = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
SLOW = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))

# Legal modifier sets per opcode and format (the ISA's syntax blocks of §9.7.4.1-9.7.4.8).
MODS = {
    ("add", "f16"): ["", ".rn", ".ftz", ".sat", ".rn.ftz.sat"],
    ("add", "bf16"): ["", ".rn"],
    ("fma", "f16"): [".rn", ".rn.ftz", ".rn.sat", ".rn.relu", ".rn.ftz.sat", ".rn.ftz.relu"],
    ("fma", "bf16"): [".rn", ".rn.relu"],
    ("neg", "f16"): ["", ".ftz"],
    ("neg", "bf16"): [""],
    ("min", "f16"): ["", ".ftz", ".NaN", ".ftz.NaN", ".xorsign.abs", ".ftz.NaN.xorsign.abs"],
    ("min", "bf16"): ["", ".NaN", ".xorsign.abs", ".NaN.xorsign.abs"],
}
for _f in ("f16", "bf16"):
    MODS[("sub", _f)] = MODS[("mul", _f)] = MODS[("add", _f)]
    MODS[("abs", _f)] = MODS[("neg", _f)]
    MODS[("max", _f)] = MODS[("min", _f)]
ARITY = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "neg": 1, "abs": 1, "min": 2, "max": 2}
OPS = list(ARITY)


def edges(fmt: str) -> list[int]:
    return F16_EDGES if fmt == "f16" else BF16_EDGES


def is_nan(h: int, fmt: str) -> bool:
    return decode(h, fmt)[0] == "nan"


def model_scalar(op: str, mods: str, xs: tuple[int, ...], fmt: str) -> int | None:
    """The result bits of ``op{mods}.fmt`` on 16-bit inputs; None: any NaN (the ISA leaves the NaN
    that neg/abs return for a NaN input unspecified)."""
    ftz = ".ftz" in mods
    if op in ("add", "sub", "mul", "fma"):
        return model_arith(op, xs, fmt, ftz=ftz, sat=".sat" in mods, relu=".relu" in mods)
    if op in ("neg", "abs"):
        x = ftz_in(xs[0], fmt) if ftz else xs[0]
        if is_nan(x, fmt):
            return None
        return x ^ 0x8000 if op == "neg" else x & 0x7FFF
    x, y = (ftz_in(v, fmt) for v in xs) if ftz else xs
    return model_minmax(x, y, fmt, op == "min", nan=".NaN" in mods, xorsign=".xorsign" in mods)


def check(op, mods, fmt, packed, lanes_in, got):
    for i, xs in enumerate(lanes_in):
        for half in ((0, 1) if packed else (0,)):
            h = tuple((x >> (16 * half)) & 0xFFFF for x in xs)
            g = (got[i] >> (16 * half)) & 0xFFFF
            want = model_scalar(op, mods, h, fmt)
            if want is None:
                assert is_nan(g, fmt), (op, mods, fmt, [hex(v) for v in h], hex(g))
            else:
                assert g == want, (op, mods, fmt, half, [hex(v) for v in h], hex(g), hex(want))


def run_op(op: str, fmt: str, packed: bool, lanes_in: list[tuple[int, ...]]) -> None:
    """One kernel with every legal modifier variant of ``op`` as its own destination."""
    t = fmt + ("x2" if packed else "")
    rt = "b32" if packed else "b16"
    n = ARITY[op]
    names = ["%a", "%b", "%c"][:n]
    variants = MODS[(op, fmt)]
    body = "\n".join(f"{op}{m}.{t} %d{k}, {', '.join(names)};" for k, m in enumerate(variants))
    outs, _ = run(body, [(nm, rt) for nm in names], [(f"%d{k}", rt) for k in range(len(variants))],
                  [[xs[j] for xs in lanes_in] for j in range(n)], skip_unsupported=False)
    for k, m in enumerate(variants):
        check(op, m, fmt, packed, lanes_in, outs[k][:len(lanes_in)])


def edge_grid(fmt: str, n: int, packed: bool) -> list[tuple[int, ...]]:
    e = edges(fmt)
    if n == 1:
        grid = [(x,) for x in e]
    elif n == 2:
        grid = [(x, y) for x in e for y in e]
    else:
        grid = [(x, y, z) for x in e for y in e[::3] for z in e[::4]]
    if packed:      # the high halves see the grid reversed, so both halves meet every case
        rev = grid[::-1]
        grid = [tuple(lo | (hi << 16) for lo, hi in zip(a, b)) for a, b in zip(grid, rev)]
    return grid


@pytest.mark.parametrize("packed", [False, True], ids=["scalar", "x2"])
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@pytest.mark.parametrize("op", OPS)
def test_half_arith_edges(op, fmt, packed):
    run_op(op, fmt, packed, edge_grid(fmt, ARITY[op], packed))


def lanes_strategy(fmt: str, n: int, packed: bool):
    h = st.one_of(st.sampled_from(edges(fmt)), st.integers(0, 0xFFFF))
    v = st.tuples(h, h).map(lambda p: p[0] | (p[1] << 16)) if packed else h
    return st.lists(st.tuples(*[v] * n), min_size=1, max_size=64)


@pytest.mark.parametrize("packed", [False, True], ids=["scalar", "x2"])
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@pytest.mark.parametrize("op", OPS)
@FEW
@given(data=st.data())
def test_half_arith_random(op, fmt, packed, data):
    run_op(op, fmt, packed, data.draw(lanes_strategy(fmt, ARITY[op], packed)))


@pytest.mark.slow
@pytest.mark.parametrize("packed", [False, True], ids=["scalar", "x2"])
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@pytest.mark.parametrize("op", OPS)
@SLOW
@given(data=st.data())
def test_slow_half_arith_random(op, fmt, packed, data):
    run_op(op, fmt, packed, data.draw(lanes_strategy(fmt, ARITY[op], packed)))


# ------------------------------------------------------------------------------------ comparisons

CMPS = list(CMP)
BOOL = {"and": lambda x, y: x and y, "or": lambda x, y: x or y, "xor": lambda x, y: x != y}


def model_cmp(cmp: str, x: int, y: int, fmt: str, ftz: bool) -> bool:
    if ftz:
        x, y = ftz_in(x, fmt), ftz_in(y, fmt)
    dx, dy = decode(x, fmt), decode(y, fmt)
    u = dx[0] == "nan" or dy[0] == "nan"
    return CMP[cmp](0, 0, u) if u else CMP[cmp](hval(dx), hval(dy), u)


def cmp_lanes(fmt: str) -> tuple[list[int], list[int], list[int]]:
    e = edges(fmt)
    pairs = [(x, y) for x in e for y in e]
    a = [p[0] | (pairs[-1 - i][0] << 16) for i, p in enumerate(pairs)]
    b = [p[1] | (pairs[-1 - i][1] << 16) for i, p in enumerate(pairs)]
    c = [(i * 7 // 3) & 1 for i in range(len(pairs))]
    return a, b, c


@pytest.mark.parametrize("fmt, ftz", [("f16", False), ("f16", True), ("bf16", False)])   # bf16x2: no .ftz
def test_setp_x2_every_comparison(fmt, ftz):
    """`setp.CmpOp{.ftz}.f16x2 p|q, a, b`: p compares the low halves, q the high halves."""
    f = ".ftz" if ftz else ""
    a, b, _ = cmp_lanes(fmt)
    body = "\n".join(f"setp.{cmp}{f}.{fmt}x2 %p{k}|%q{k}, %a, %b;" for k, cmp in enumerate(CMPS))
    dsts = [d for k in range(len(CMPS)) for d in ((f"%p{k}", "pred"), (f"%q{k}", "pred"))]
    outs, _ = run(body, [("%a", "b32"), ("%b", "b32")], dsts, [a, b], skip_unsupported=False)
    for k, cmp in enumerate(CMPS):
        for i in range(len(a)):
            lo = model_cmp(cmp, a[i] & 0xFFFF, b[i] & 0xFFFF, fmt, ftz)
            hi = model_cmp(cmp, a[i] >> 16, b[i] >> 16, fmt, ftz)
            assert (outs[2 * k][i], outs[2 * k + 1][i]) == (int(lo), int(hi)), (cmp, hex(a[i]), hex(b[i]))


@pytest.mark.parametrize("neg", [False, True])
@pytest.mark.parametrize("bop", ["and", "or", "xor"])
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_setp_x2_bool_combine(fmt, bop, neg):
    """`setp.CmpOp.BoolOp.f16x2 p|q, a, b, {!}c`: each half's result combined with c."""
    a, b, c = cmp_lanes(fmt)
    cc = "!%c" if neg else "%c"
    body = f"setp.ltu.{bop}.{fmt}x2 %p|%q, %a, %b, {cc};\nsetp.ge.{bop}.{fmt}x2 %r|%s, %a, %b, {cc};"
    outs, _ = run(body, [("%a", "b32"), ("%b", "b32"), ("%c", "pred")],
                  [("%p", "pred"), ("%q", "pred"), ("%r", "pred"), ("%s", "pred")], [a, b, c],
                  skip_unsupported=False)
    for i in range(len(a)):
        cv = bool(c[i]) != neg
        for k, cmp in enumerate(("ltu", "ge")):
            lo = BOOL[bop](model_cmp(cmp, a[i] & 0xFFFF, b[i] & 0xFFFF, fmt, False), cv)
            hi = BOOL[bop](model_cmp(cmp, a[i] >> 16, b[i] >> 16, fmt, False), cv)
            assert (outs[2 * k][i], outs[2 * k + 1][i]) == (int(lo), int(hi)), (cmp, bop, neg, hex(a[i]), hex(b[i]))


ONE = {"f16": 0x3C00, "bf16": 0x3F80}


@pytest.mark.parametrize("dtype", ["x2", "u32", "s32"])
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_set_x2_packs_one_result_per_half(fmt, dtype):
    """`set.CmpOp{.BoolOp}.dtype.f16x2 d, a, b{, c}`: each 16-bit half of d holds its half's
    result, 1.0 (packed dtype) or 0xffff (.u32/.s32), else 0."""
    dt = fmt + "x2" if dtype == "x2" else dtype
    a, b, c = cmp_lanes(fmt)
    cmps = ["eq", "lt", "geu", "nan", "ne"]
    body = "\n".join(f"set.{cmp}.{dt}.{fmt}x2 %d{k}, %a, %b;" for k, cmp in enumerate(cmps))
    body += f"\nset.le.or.{dt}.{fmt}x2 %e, %a, %b, !%c;"
    dsts = [(f"%d{k}", "b32") for k in range(len(cmps))] + [("%e", "b32")]
    outs, _ = run(body, [("%a", "b32"), ("%b", "b32"), ("%c", "pred")], dsts, [a, b, c], skip_unsupported=False)
    one = ONE[fmt] if dtype == "x2" else 0xFFFF
    for i in range(len(a)):
        for k, cmp in enumerate(cmps + ["le"]):
            r = []
            for sh in (0, 16):
                v = model_cmp(cmp, (a[i] >> sh) & 0xFFFF, (b[i] >> sh) & 0xFFFF, fmt, False)
                if k == len(cmps):
                    v = v or not c[i]
                r.append(one if v else 0)
            assert outs[k][i] == r[0] | (r[1] << 16), (cmp, dt, hex(a[i]), hex(b[i]), hex(outs[k][i]))


@pytest.mark.parametrize("dtype, true", [("u16", 0xFFFF), ("s16", 0xFFFF), ("u32", 0xFFFFFFFF),
                                         ("s32", 0xFFFFFFFF), ("f16", 0x3C00), ("bf16", 0x3F80)])
@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_set_half_scalar_results(fmt, dtype, true):
    """`set.CmpOp.dtype.f16 d, a, b` with 16- and 32-bit integer results and half results."""
    e = edges(fmt)
    pairs = [(x, y) for x in e for y in e]
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    rt = "b32" if dtype in ("u32", "s32") else "b16"
    (d,), _ = run(f"set.gtu.{dtype}.{fmt} %d, %a, %b;", [("%a", "b16"), ("%b", "b16")], [("%d", rt)], [a, b],
                  skip_unsupported=False)
    for i in range(len(a)):
        assert d[i] == (true if model_cmp("gtu", a[i], b[i], fmt, False) else 0), (hex(a[i]), hex(b[i]))


@pytest.mark.parametrize("ins, why", [
    ("setp.lt.f16x2 %p, %a, %b;", "needs two predicate destinations `p|q` (one per half)"),
    ("set.lt.f16x2.bf16x2 %d, %a, %b;", "(.f16x2 results of .bf16x2 comparisons) is not a form of `set`"),
])
def test_malformed_packed_comparisons_are_refused(ins, why):
    import ptxvm
    with pytest.raises(ptxvm.UnsupportedError) as e:
        run(ins, [("%a", "b32"), ("%b", "b32")], [("%p", "pred") if "setp" in ins else ("%d", "b32")],
            [[0], [0]], skip_unsupported=False)
    assert why in str(e.value)


def test_models_agree_on_known_values():
    """Anchors for the models themselves: 1 + 1 = 2, 65504 + 65504 overflows, NaN propagates."""
    assert model_arith("add", (0x3C00, 0x3C00), "f16") == 0x4000
    assert model_arith("add", (0x7BFF, 0x7BFF), "f16") == 0x7C00
    assert model_arith("mul", (0x7E00, 0x3C00), "f16") == NAN["f16"]
    assert model_cmp("lt", 0x3C00, 0x4000, "f16", False) and not model_cmp("lt", 0x7E00, 0x4000, "f16", False)
    assert math.isinf(hval(decode(0xFC00, "f16")))
