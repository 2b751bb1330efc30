"""cvt.pack.sat (PTX ISA 9.0 §9.7.9.22), lop3.BoolOp d|p (§9.7.8.6) and setp/set on f16x2/bf16x2
(§9.7.6.1-2, §9.7.4) on every CPU executor, against models written from the ISA text."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ptxvm

from models import half as H
from models.lanes import run_lanes
from models.narrowfloat import PACK_RANGE, cvt_pack

EDGES = [0, 1, 2, 3, 4, 7, 8, 15, 16, 127, 128, 255, 256, 32767, 32768, 65535, 65536, 0x7FFFFFFF]
EDGES = EDGES + [(-v) & 0xFFFFFFFF for v in EDGES] + [0x80000000]


def _ints(n: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    small = rng.integers(-300, 300, n // 2)
    wide = rng.integers(-(1 << 31), 1 << 31, n - n // 2)
    return EDGES + [int(v) & 0xFFFFFFFF for v in np.concatenate([small, wide])]


@pytest.mark.parametrize("conv", sorted(PACK_RANGE))
def test_cvt_pack_sat(conv, executor) -> None:
    a = _ints(400, 1)
    b = _ints(400, 2)[::-1]
    c = _ints(400, 3)
    size = int(conv[1:])
    if size == 16:
        body, srcs, vals = f"cvt.pack.sat.{conv}.s32 %d, %a, %b;", [("%a", "b32"), ("%b", "b32")], [a, b]
    else:
        body, srcs, vals = (f"cvt.pack.sat.{conv}.s32.b32 %d, %a, %b, %c;",
                            [("%a", "b32"), ("%b", "b32"), ("%c", "b32")], [a, b, c])
    (got,) = run_lanes(body, srcs, [("%d", "b32")], vals, executor)
    want = [cvt_pack(conv, x, y, z if size < 16 else 0) for x, y, z in zip(a, b, c)]
    bad = [(hex(x), hex(y), hex(int(g)), hex(w)) for x, y, g, w in zip(a, b, got, want) if int(g) != w]
    assert not bad, bad[:8]


def test_cvt_pack_worked_examples(executor) -> None:
    """By hand: s16 clamps 70000 -> 0x7fff (upper half) and keeps -5 -> 0xfffb; u8 clamps 300 ->
    0xff, -5 -> 0, c's low 16 bits above; s4 of 3 and -50 -> 0x3, 0x8 under c << 8."""
    (got,) = run_lanes("cvt.pack.sat.s16.s32 %d, %a, %b;", [("%a", "b32"), ("%b", "b32")], [("%d", "b32")],
                       [[70000], [(-5) & 0xFFFFFFFF]], executor)
    assert int(got[0]) == 0x7FFFFFFB
    (got,) = run_lanes("cvt.pack.sat.u8.s32.b32 %d, %a, %b, %c;", [("%a", "b32"), ("%b", "b32"), ("%c", "b32")],
                       [("%d", "b32")], [[300], [(-5) & 0xFFFFFFFF], [0x12345678]], executor)
    assert int(got[0]) == 0x5678FF00
    (got,) = run_lanes("cvt.pack.sat.s4.s32.b32 %d, %a, %b, %c;", [("%a", "b32"), ("%b", "b32"), ("%c", "b32")],
                       [("%d", "b32")], [[3], [(-50) & 0xFFFFFFFF], [0x12345678]], executor)
    assert int(got[0]) == 0x34567838


@pytest.mark.parametrize("text", ["cvt.pack.sat.u8.s32 %d, %a, %b;", "cvt.pack.sat.s16.s32.b32 %d, %a, %b, %c;",
                                  "cvt.pack.u16.s32 %d, %a, %b;"])
def test_cvt_pack_forms_ptxas_rejects_are_rejected(text) -> None:
    """ptxas 13.0: 'Unexpected instruction types' / '.sat modifier required' for these."""
    ptx = (".version 8.7\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
           ".reg .b32 %d, %a, %b, %c;\n" + text + "\nret;\n}\n")
    with pytest.raises(ptxvm.PtxError):
        ptxvm.Module(ptx)


def _lut(a: int, b: int, c: int, table: int) -> int:
    """Bit i of the result is bit (a_i << 2 | b_i << 1 | c_i) of the table: F(0xF0, 0xCC, 0xAA) = table."""
    return sum(((table >> (((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1))) & 1) << i for i in range(32))


@pytest.mark.parametrize("op", ["and", "or"])
def test_lop3_boolop_pair(op, executor) -> None:
    rng = np.random.default_rng(5)
    n = 300
    a, b, c = ([int(x) for x in rng.integers(0, 1 << 32, n, dtype=np.uint64)] for _ in range(3))
    a[:40] = [0] * 40                                    # d == 0 often for the AND-like tables
    q = [int(x) for x in rng.integers(0, 2, n)]
    for table in (0x80, 0xFE, 0x00, 0x1A, 0x3F, 0x96):
        for neg in ("", "!"):
            d, p = run_lanes(f"lop3.{op}.b32 %d|%p, %a, %b, %c, {table:#x}, {neg}%q;",
                             [("%a", "b32"), ("%b", "b32"), ("%c", "b32"), ("%q", "pred")],
                             [("%d", "b32"), ("%p", "pred")], [a, b, c, q], executor)
            want_d = [_lut(x, y, z, table) for x, y, z in zip(a, b, c)]
            qq = [v ^ (neg == "!") for v in q]
            want_p = [int((w != 0) and bool(v)) if op == "and" else int((w != 0) or bool(v))
                      for w, v in zip(want_d, qq)]
            assert [int(x) for x in d] == want_d, table
            assert [int(x) for x in p] == want_p, (table, neg)


# --- setp / set on packed halves ---------------------------------------------------------------

CMP = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


def _cmp(op: str, x, y) -> bool:
    """§9.7.4 comparisons: the ordered ones are false with a NaN operand, the `u` ones true."""
    if x[0] == "nan" or y[0] == "nan":
        return op in ("equ", "neu", "ltu", "leu", "gtu", "geu", "nan")
    if op in ("num", "nan"):
        return op == "num"
    v = lambda d: d[1] if d[0] == "num" else (-math.inf if d[1] else math.inf)
    a, b = v(x), v(y)
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op.rstrip("u")]


def _half_values(fmt: str) -> list[int]:
    p, eb = H.FMT[fmt]
    inf = ((1 << eb) - 1) << (p - 1)
    base = [0, 1, 2, inf - 1, inf, inf + 1, 0x7FFF, 1 << (p - 1), (1 << (p - 1)) - 1, 0x3C00 if fmt == "f16" else 0x3F80]
    rng = np.random.default_rng(9)
    base += [int(x) for x in rng.integers(0, 1 << 16, 20)]
    return base + [v | 0x8000 for v in base]


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_setp_and_set_packed_halves(fmt, executor) -> None:
    vals = _half_values(fmt)
    pairs = [(x, y) for x in vals for y in vals[::3]]
    a = [(x << 16) | y for x, y in pairs]
    b = [(y << 16) | x for x, y in pairs]
    ftzs = ("", ".ftz") if fmt == "f16" else ("",)
    one = 0x3C00 if fmt == "f16" else 0x3F80
    for op in CMP:
        for ftz in ftzs:
            fl = (lambda h: H.ftz_in(h, fmt)) if ftz else (lambda h: h)
            res = [[_cmp(op, H.decode(fl(x >> k & 0xFFFF), fmt), H.decode(fl(y >> k & 0xFFFF), fmt))
                    for x, y in zip(a, b)] for k in (0, 16)]
            p, q, s, u = run_lanes(f"setp.{op}{ftz}.{fmt}x2 %p|%q, %a, %b; set.{op}{ftz}.{fmt}x2.{fmt}x2 %s, %a, %b;"
                                   f" set.{op}{ftz}.u32.{fmt}x2 %u, %a, %b;",
                                   [("%a", "b32"), ("%b", "b32")],
                                   [("%p", "pred"), ("%q", "pred"), ("%s", "b32"), ("%u", "b32")], [a, b], executor)
            assert [bool(v) for v in p] == res[0], (op, ftz, "p: lower halves")
            assert [bool(v) for v in q] == res[1], (op, ftz, "q: upper halves")
            assert [int(v) for v in s] == [(one if h else 0) << 16 | (one if lo else 0) for lo, h in zip(*res)], op
            assert [int(v) for v in u] == [(0xFFFF if h else 0) << 16 | (0xFFFF if lo else 0) for lo, h in zip(*res)]


def test_setp_packed_half_with_boolop_reads_c_before_writing(executor) -> None:
    """`setp.lt.and.f16x2 p|q, a, b, !p`: both halves combine with the old p."""
    a, b = [0x3C004000], [0x40003C00]                  # upper: 1 < 2, lower: 2 < 1 false
    p, q = run_lanes("setp.lt.and.f16x2 %p|%q, %a, %b, !%p;", [("%a", "b32"), ("%b", "b32")],
                     [("%p", "pred"), ("%q", "pred")], [a, b], executor)
    # %p starts false (run_lanes loads the destinations' initial values from zeroed arrays): !p is true.
    assert (int(p[0]), int(q[0])) == (0, 1)
