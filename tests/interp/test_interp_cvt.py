"""Interpreter ``cvt`` forms with f16/bf16 on one side, the saturation modifiers and
integral rounding, one PTX instruction per kernel, against exact models.

The models are written here from the PTX ISA 9.0 cvt section (9.7.9.21) on Python ints
and ``fractions.Fraction``, using the independent rounding models of ``test_half``
(``decode``/``encode_round``/``model_convert``) and ``test_numerics``:

* ``.sat`` on a float destination limits the result to [0.0, 1.0]; NaN gives +0.0
  (ptxvm also maps -0.0 to +0.0).
* ``.relu`` (f16/bf16 destinations): a negative result becomes 0 (ptxvm: -0.0 too);
  a NaN result is the canonical NaN.
* ``.satfinite`` (f16/bf16/tf32 destinations): NaN stays NaN; a value beyond the largest
  finite value of the destination becomes that value with its sign (infinities too).
* ``.ftz`` applies to f32 inputs and results only: ``cvt.ftz.f32.bf16`` flushes the
  subnormal f32 results that bf16 subnormals give.
* ``.rni .rzi .rmi .rpi`` round to an integral value kept in floating point.  The ISA
  defines this for same-size float conversions; ptxvm (interpreter and lifter alike)
  also accepts it between sizes, with the meaning "round the source value to an
  integral value, then convert that to nearest" (as for ``cvt.rni.f32.f64``).
* NaN results are ptxvm's canonical NaNs (0x7fff, 0x7fffffff, 0x7fffffffffffffff for an
  f64 converted from a half type); the ISA leaves the NaN of ``cvt.f32.bf16`` unspecified.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

import ptxvm

from models.half import BF16_EDGES, F16_EDGES, decode, encode_round, model_convert
from models.instruction_harness import run
from models.numerics import F32_EDGE_BITS, F64_EDGE_BITS, f32_bits, f64_bits, f64_from_bits, m_f2i, round_exact

HALF = ("f16", "bf16")
IRNDS = ("rni", "rzi", "rmi", "rpi")
ROUND_INT = {"rni": round, "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}   # round(): ties to even
NAN_WIDE = {"f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF}
WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
REG = {"f16": "b16", "bf16": "b16", "f32": "f32", "f64": "f64"}


# ---------------------------------------------------------------------------- models

def dec(bits: int, t: str):
    """-> ('nan',) | ('inf', neg) | ('num', Fraction, neg) for f16/bf16/f32/f64 bits."""
    if t != "f64":
        return decode(bits, t)
    x = f64_from_bits(bits)
    neg = bool(bits >> 63)
    if math.isnan(x):
        return ("nan",)
    if math.isinf(x):
        return ("inf", neg)
    return ("num", Fraction(x), neg)


def integral(d, irnd):
    """Round a decoded finite value to an integral value (the sign of a zero is the source's)."""
    if d[0] != "num" or irnd is None:
        return d
    return ("num", Fraction(ROUND_INT[irnd](d[1])), d[2])


def m_half_to_wide(bits: int, src: str, dst: str, irnd=None, ftz=False, sat=False) -> int:
    """``cvt{.irnd}{.ftz}{.sat}.{f32,f64}.{f16,bf16}``: the exact value (every half value and
    every integral value derived from one is an f32), then the modifiers."""
    d = integral(dec(bits, src), irnd)
    if d[0] == "nan":
        x = math.nan
    elif d[0] == "inf":
        x = -math.inf if d[1] else math.inf
    else:
        q, neg = d[1], d[2]
        if ftz and dst == "f32" and 0 < abs(q) < Fraction(2) ** -126:
            q = Fraction(0)                     # an f32 subnormal result, flushed (sign kept below)
        x = math.copysign(float(q), -1.0 if neg else 1.0)
        assert Fraction(x) == q                 # exact
    if sat:
        x = 0.0 if math.isnan(x) or x <= 0 else min(x, 1.0)
    if math.isnan(x):
        return NAN_WIDE[dst]
    return f32_bits(x) if dst == "f32" else f64_bits(x)


def m_to_half(bits: int, src: str, dst: str, rnd: str, *, relu=False, satfinite=False, sat=False, ftz=False) -> int:
    """``cvt.rnd{.relu}{.satfinite}{.ftz}{.sat}.{f16,bf16}.src`` for a float ``src``."""
    d = dec(bits, src)
    if ftz and src == "f32" and d[0] == "num" and d[1] != 0 and abs(d[1]) < Fraction(2) ** -126:
        d = ("num", Fraction(0), d[2])          # .ftz flushes an f32 subnormal input
    if rnd in IRNDS:
        d, rnd = integral(d, rnd), "rn"
    return model_convert(d, dst, rnd, satfinite=satfinite, relu=relu, sat=sat)


# ---------------------------------------------------------------------------- values

def _enc(v, t: str) -> int:
    if t == "f32":
        return f32_bits(float(v))
    if t == "f64":
        return f64_bits(float(v))
    return encode_round(Fraction(v), t, "rn")


def half_values(t: str) -> list[int]:
    """Edges, integral-rounding cases around small values, subnormals and a sample of every
    exponent: about 400 bit patterns."""
    edges = F16_EDGES if t == "f16" else BF16_EDGES
    special = [Fraction(n, 4) for n in range(-14, 15)] + [Fraction(1, 3), Fraction(-2, 3), Fraction(255, 2),
                                                          Fraction(-257, 2), Fraction(65504), Fraction(3, 1 << 20)]
    vals = set(edges) | {_enc(v, t) for v in special}
    vals |= {1, 2, 0x0080 if t == "bf16" else 0x0400, 0x807F, 0x83FF, 0x7E00, 0xFE00, 0x7D00, 0xFFC1}
    vals |= set(range(0, 0x10000, 211))
    return sorted(vals)


def half_ties(t: str, rng: random.Random, n: int) -> list[Fraction]:
    """Midpoints of adjacent finite values of the half type t (over its whole range)."""
    out = []
    inf = 0x7C00 if t == "f16" else 0x7F80
    for _ in range(n):
        h = rng.randrange(0, inf - 1)
        out.append((decode(h, t)[1] + decode(h + 1, t)[1]) / 2 * rng.choice((1, -1)))
    return out


def wide_values(src: str, seed: str) -> list[int]:
    """f32/f64 bit patterns: edges, integral-rounding ties, ties and overflow thresholds of
    f16 and bf16 (each also one source ulp either side), random patterns."""
    rng = random.Random(f"{src}{seed}")
    w = WIDTH[src]
    vals = set(F32_EDGE_BITS if src == "f32" else F64_EDGE_BITS)
    for v in (0.5, -0.5, 1.5, 2.5, -2.5, 3.5, 0.49999997, -0.99, 0.3, -0.3, 1e-40, -1e-45, 65519.5, 65504.0,
              65505.0, 65520.0, -65520.0, 2049.0, 2051.0, 1.0, 1.0 + 2 ** -20, 3.4e38, -3.4e38, 255.5, 256.5):
        vals.add(_enc(v, src))
    for t in HALF:
        for m in half_ties(t, rng, 12):
            c = _enc(m, src)
            vals |= {c, c + 1, c - 1}
        p, eb = (11, 5) if t == "f16" else (8, 8)
        big = Fraction(2) ** (1 << (eb - 1)) * (1 - Fraction(1, 2 ** (p + 1)))        # max + half an ulp
        tiny = Fraction(2) ** (2 - (1 << (eb - 1)) - p)                                 # half the min subnormal
        for v in (big, -big, tiny, 3 * tiny, -tiny):
            c = _enc(v, src)
            vals |= {c, c + 1, c - 1}
    vals |= {rng.getrandbits(w) for _ in range(120)}
    return sorted(v % (1 << w) for v in vals)


def run_cvt(instr: str, src: str, dst: str, xs: list[int]) -> list[int]:
    (d,), _ = run(f"{instr} %d, %a;", [("%a", REG[src])], [("%d", REG[dst])], [xs], skip_unsupported=False)
    return d[:len(xs)]


def check(instr: str, src: str, dst: str, xs: list[int], model) -> None:
    got = run_cvt(instr, src, dst, xs)
    bad = [(hex(x), hex(g), hex(model(x))) for x, g in zip(xs, got) if g != model(x)]
    assert not bad, (instr, len(bad), bad[:6])


def spell(*mods) -> str:
    return "".join(f".{m}" for m in mods if m)


# ---------------------------------------------------------------------------- f16/bf16 -> f32/f64

WIDE_MODS = [(None, False, False), (None, False, True)] + [(r, False, False) for r in IRNDS] + \
    [("rni", False, True), ("rpi", False, True), ("rmi", False, True)]
WIDE_MODS_FTZ = [(None, True, False), ("rpi", True, False), (None, True, True)]
WIDE_CASES = [(s, d, *m) for s in HALF for d in ("f32", "f64") for m in WIDE_MODS] + \
    [(s, "f32", *m) for s in HALF for m in WIDE_MODS_FTZ]


@pytest.mark.parametrize("src,dst,irnd,ftz,sat", WIDE_CASES)
def test_half_to_wide(src, dst, irnd, ftz, sat):
    instr = "cvt" + spell(irnd, "ftz" if ftz else None, "sat" if sat else None) + f".{dst}.{src}"
    check(instr, src, dst, half_values(src), lambda x: m_half_to_wide(x, src, dst, irnd, ftz, sat))


@pytest.mark.slow
@pytest.mark.parametrize("src", HALF)
@pytest.mark.parametrize("mods", [(None, False, True), ("rni", False, False), ("rpi", True, True), (None, True, False)])
def test_slow_half_to_f32_exhaustive(src, mods):
    irnd, ftz, sat = mods
    instr = "cvt" + spell(irnd, "ftz" if ftz else None, "sat" if sat else None) + f".f32.{src}"
    check(instr, src, "f32", list(range(0x10000)), lambda x: m_half_to_wide(x, src, "f32", irnd, ftz, sat))


# ---------------------------------------------------------------------------- float -> f16/bf16: .relu, .satfinite

SAT_MODS = [("relu",), ("satfinite",), ("relu", "satfinite")]
TO_HALF_CASES = [("f32", d, r, m) for d in HALF for r in ("rn", "rz", "rm", "rp") for m in [()] + SAT_MODS]
TO_HALF_CASES += [(s, d, r, m) for s in ("f64", "f16", "bf16") for d in HALF for r in ("rn", "rz")
                  for m in SAT_MODS if s != d or r == "rn"]


@pytest.mark.parametrize("src,dst,rnd,mods", TO_HALF_CASES)
def test_to_half_relu_satfinite(src, dst, rnd, mods):
    instr = "cvt" + spell(rnd, *mods) + f".{dst}.{src}"
    xs = half_values(src) if src in HALF else wide_values(src, "relu")
    check(instr, src, dst, xs,
          lambda x: m_to_half(x, src, dst, rnd, relu="relu" in mods, satfinite="satfinite" in mods))


@pytest.mark.parametrize("mods", [("ftz", "relu"), ("sat", "relu"), ("ftz", "satfinite")])
def test_to_half_relu_satfinite_with_ftz_sat(mods):
    # outside the ISA's .frnd2{.relu}{.satfinite} lines, accepted by the table: each applies
    instr = "cvt.rn" + spell(*mods) + ".f16.f32"
    check(instr, "f32", "f16", wide_values("f32", "mix"),
          lambda x: m_to_half(x, "f32", "f16", "rn", relu="relu" in mods, satfinite="satfinite" in mods,
                              sat="sat" in mods, ftz="ftz" in mods))


# ---------------------------------------------------------------------------- integral rounding into f16/bf16

IRND_HALF_CASES = [(s, d, r, ()) for s in ("f32", "f64", "f16", "bf16") for d in HALF for r in IRNDS]
IRND_HALF_CASES += [("f32", "f16", "rni", ("satfinite",)), ("f32", "bf16", "rpi", ("relu",)),
                    ("f64", "f16", "rmi", ("relu", "satfinite")), ("f32", "f16", "rzi", ("sat",)),
                    ("f16", "f16", "rni", ("relu",))]


@pytest.mark.parametrize("src,dst,irnd,mods", IRND_HALF_CASES)
def test_integral_rounding_to_half(src, dst, irnd, mods):
    instr = "cvt" + spell(irnd, *mods) + f".{dst}.{src}"
    xs = half_values(src) if src in HALF else wide_values(src, "irnd")
    check(instr, src, dst, xs, lambda x: m_to_half(x, src, dst, irnd, relu="relu" in mods,
                                                   satfinite="satfinite" in mods, sat="sat" in mods))


# ---------------------------------------------------------------------------- facts, written out

SPECIFIC = [
    # (instruction, src, dst, input bits, expected bits)
    ("cvt.rn.relu.f16.f32", "f32", "f16", 0xBF800000, 0x0000),        # -1.0 -> 0
    ("cvt.rn.relu.f16.f32", "f32", "f16", 0x3F800000, 0x3C00),        # 1.0 kept
    ("cvt.rn.relu.f16.f32", "f32", "f16", 0x80000000, 0x0000),        # -0.0 -> +0.0
    ("cvt.rn.relu.f16.f32", "f32", "f16", 0xFF800000, 0x0000),        # -inf -> 0
    ("cvt.rn.relu.f16.f32", "f32", "f16", 0xFFC00000, 0x7FFF),        # NaN -> canonical NaN
    ("cvt.rn.relu.f16.f32", "f32", "f16", 0xB3000001, 0x0000),        # rounds to -2^-24 -> 0
    ("cvt.rn.satfinite.f16.f32", "f32", "f16", 0x7F800000, 0x7BFF),   # +inf -> 65504
    ("cvt.rn.satfinite.f16.f32", "f32", "f16", 0xFF800000, 0xFBFF),   # -inf -> -65504
    ("cvt.rn.satfinite.f16.f32", "f32", "f16", 0x477FF000, 0x7BFF),   # 65520 would round to inf
    ("cvt.rn.satfinite.f16.f32", "f32", "f16", 0x7FC00000, 0x7FFF),   # NaN stays NaN
    ("cvt.rz.relu.satfinite.bf16.f32", "f32", "bf16", 0xC0400000, 0x0000),
    ("cvt.rz.relu.satfinite.bf16.f32", "f32", "bf16", 0x7F800000, 0x7F7F),
    ("cvt.rn.satfinite.bf16.f32", "f32", "bf16", 0x7F7F8000, 0x7F7F),  # tie above bf16 max
    ("cvt.rn.bf16.f32", "f32", "bf16", 0x7F7F8000, 0x7F80),            # ... inf without .satfinite
    ("cvt.sat.f32.f16", "f16", "f32", 0x3E00, 0x3F800000),            # 1.5 -> 1.0
    ("cvt.sat.f32.f16", "f16", "f32", 0xB800, 0x00000000),            # -0.5 -> 0
    ("cvt.sat.f32.f16", "f16", "f32", 0x8000, 0x00000000),            # -0.0 -> +0.0
    ("cvt.sat.f32.f16", "f16", "f32", 0x7E00, 0x00000000),            # NaN -> +0.0
    ("cvt.sat.f64.bf16", "bf16", "f64", 0x3F00, 0x3FE0000000000000),  # 0.5 kept
    ("cvt.rni.f32.f16", "f16", "f32", 0x4100, 0x40000000),            # 2.5 -> 2 (ties to even)
    ("cvt.rni.f32.f16", "f16", "f32", 0x4300, 0x40800000),            # 3.5 -> 4
    ("cvt.rni.f32.f16", "f16", "f32", 0xB800, 0x80000000),            # -0.5 -> -0.0
    ("cvt.rpi.f64.bf16", "bf16", "f64", 0x3F81, 0x4000000000000000),  # 1.0078125 -> 2
    ("cvt.rmi.f32.bf16", "bf16", "f32", 0x8001, 0xBF800000),          # -tiny -> -1
    ("cvt.ftz.f32.bf16", "bf16", "f32", 0x0001, 0x00000000),          # subnormal f32 result flushed
    ("cvt.ftz.f32.bf16", "bf16", "f32", 0x807F, 0x80000000),          # ... keeping the sign
    ("cvt.ftz.f32.bf16", "bf16", "f32", 0x0080, 0x00800000),          # the smallest normal stays
    ("cvt.f32.bf16", "bf16", "f32", 0x0001, 0x00010000),              # no .ftz: subnormal kept
    ("cvt.ftz.f32.f16", "f16", "f32", 0x0001, 0x33800000),            # f16 subnormals are f32 normals
    ("cvt.rni.f16.f32", "f32", "f16", 0x40200000, 0x4000),            # 2.5 -> 2
    ("cvt.rni.f16.f32", "f32", "f16", 0xBF000000, 0x8000),            # -0.5 -> -0.0
    ("cvt.rni.f16.f32", "f32", "f16", 0x477FEF80, 0x7C00),            # 65519.5 -> 65520 -> inf (tie, even)
    ("cvt.rzi.f16.f32", "f32", "f16", 0x477FEF80, 0x7BFF),            # 65519 -> 65504 (nearest)
    ("cvt.rni.satfinite.f16.f32", "f32", "f16", 0x477FEF80, 0x7BFF),
    ("cvt.rpi.bf16.bf16", "bf16", "bf16", 0x3FC0, 0x4000),            # the ISA's example form: 1.5 -> 2
    ("cvt.rzi.f16.f16", "f16", "f16", 0xBE00, 0xBC00),                # -1.5 -> -1
    ("cvt.rni.bf16.f16", "f16", "bf16", 0x6806, 0x4501),              # 2060 -> 2064 (bf16 has 8 bits)
]


@pytest.mark.parametrize("instr,src,dst,x,want", SPECIFIC, ids=[f"{s[0]}-{s[3]:#x}" for s in SPECIFIC])
def test_specific_values(instr, src, dst, x, want):
    assert run_cvt(instr, src, dst, [x]) == [want]
    # the models above agree with the hand-derived values
    mods = instr.split(".")[1:-2]
    irnd = next((m for m in mods if m in IRNDS), None)
    if dst in HALF:
        rnd = next((m for m in mods if m in ("rn", "rz", "rm", "rp") + IRNDS), "rn")
        assert m_to_half(x, src, dst, rnd, relu="relu" in mods, satfinite="satfinite" in mods) == want
    else:
        assert m_half_to_wide(x, src, dst, irnd, "ftz" in mods, "sat" in mods) == want


def test_tf32_rna_satfinite():
    # cvt.rna.satfinite.tf32.f32: NaN stays NaN; beyond the largest finite tf32 (0x7f7fe000) -> it
    xs = [0x7F800000, 0xFF800000, 0x7F7FF000, 0xFF7FF000, 0x7F7FEFFF, 0x7FC00001, 0x3F801000, 0x3F800FFF, 0]
    want = [0x7F7FE000, 0xFF7FE000, 0x7F7FE000, 0xFF7FE000, 0x7F7FE000, 0x7FFFFFFF, 0x3F802000, 0x3F800000, 0]
    (d,), _ = run("cvt.rna.satfinite.tf32.f32 %d, %a;", [("%a", "f32")], [("%d", "b32")], [xs],
                  skip_unsupported=False)
    assert d[:len(xs)] == want
    (d,), _ = run("cvt.rna.tf32.f32 %d, %a;", [("%a", "f32")], [("%d", "b32")], [xs[:4]], skip_unsupported=False)
    assert d[:4] == [0x7F800000, 0xFF800000, 0x7F800000, 0xFF800000]


# ---------------------------------------------------------------------------- .bN integer sides

@pytest.mark.parametrize("instr,src,dst", [("cvt.rzi.b32.f32", "f32", "u32"), ("cvt.rmi.b64.f64", "f64", "u64"),
                                           ("cvt.rni.b16.f32", "f32", "u16")])
def test_float_to_bits_type_reads_as_unsigned(instr, src, dst):
    xs = sorted(set(F32_EDGE_BITS if src == "f32" else F64_EDGE_BITS) |
                {_enc(v, src) for v in (-1.5, 2.5, 65535.5, 65536.0, 4294967295.0, 4294967296.0, -0.0)})
    reg = {"u32": "b32", "u64": "b64", "u16": "b16"}[dst]
    (d,), _ = run(f"{instr} %d, %a;", [("%a", src)], [("%d", reg)], [xs], skip_unsupported=False)
    irnd = instr.split(".")[1]
    assert d[:len(xs)] == [m_f2i(x, src, dst, irnd, False) for x in xs]


@pytest.mark.parametrize("src,dst,rnd", [("b32", "f32", "rn"), ("b64", "f64", "rz"), ("b64", "f32", "rm")])
def test_bits_type_to_float_reads_as_unsigned(src, dst, rnd):
    w = int(src[1:])
    xs = [x for x in (0, 1, (1 << w) - 1, 1 << (w - 1), (1 << 24) + 1, (1 << 53) + 1, 2 ** 62 + 2 ** 38, 0x89ABCDEF)
          if x < 1 << w]
    (d,), _ = run(f"cvt.{rnd}.{dst}.{src} %d, %a;", [("%a", src)], [("%d", dst)], [xs], skip_unsupported=False)
    want = [(f32_bits if dst == "f32" else f64_bits)(round_exact(Fraction(x), dst, rnd) if x else 0.0) for x in xs]
    assert d[:len(xs)] == want


# ---------------------------------------------------------------------------- refused, not ignored

@pytest.mark.parametrize("instr,src,dst", [
    ("cvt.rn.relu.f32.f64", "f64", "f32"),           # .relu: f16/bf16 (and tf32, fp8...) destinations only
    ("cvt.rn.satfinite.f32.f64", "f64", "f32"),
    ("cvt.relu.f64.f32", "f32", "f64"),
    ("cvt.rna.relu.tf32.f32", "f32", "b32"),         # tf32: .relu only with .rn/.rz (§9.7.9.21)
    ("cvt.rm.tf32.f32", "f32", "b32"),               # tf32: .rna/.rn/.rz only
])
def test_modifiers_not_applied_are_refused(instr, src, dst):
    with pytest.raises(ptxvm.UnsupportedError, match="cvt"):
        run(f"{instr} %d, %a;", [("%a", src)], [("%d", dst)], [[0x3F800000]], skip_unsupported=False)


def test_dispatch_raises_for_refused_forms():
    from ptxvm.interp.ops.convert import CvtRefused, scalar_cvt
    from ptxvm.ir.types import ScalarType as S
    with pytest.raises(CvtRefused):
        scalar_cvt(S("f32"), S("f64"), "rn", relu=True)
    with pytest.raises(CvtRefused):
        scalar_cvt(S("f16"), S("s32"), "rn", satfinite=True)
