"""LLVM ``cvt`` emitters (ptxvm.lift.semantics.cvt) against an independent exact model.

The model works on Python ints and ``fractions.Fraction``: it decodes the source bits,
computes the exact value, rounds it by hand (IEEE 754 rounding-direction attributes,
gradual underflow, overflow per mode) and applies the PTX rules written out below
(saturation of float -> int, NaN -> 0, ``.sat``/``.relu``/``.satfinite``/``.ftz``, and the
interpreter's NaN results).  Every (dst, src) pair is run with every rounding modifier and
modifier combination on edge values (signed zeros, NaN payloads, infinities, subnormals of
every format, ties of every destination format, integer range bounds, INT_MIN) plus random
bit patterns.  The emitters are JIT-compiled through tests/models/lift_harness.py; one compile
holds many variants (a switch on a variant index) so the matrix stays fast.
"""

from __future__ import annotations

import functools
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from models.cvt import FM, dec, enc, m_sat, width
from models.lift_harness import multi
from llvmlite import ir

from ptxvm import UnsupportedError
from ptxvm.lift.semantics import cvt as C

# ---------------------------------------------------------------------------
# exact model

INTS = ["u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32", "b32", "u64", "s64", "b64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
RNDS = ["rn", "rz", "rm", "rp"]
IRNDS = ["rni", "rzi", "rmi", "rpi"]


def int_range(t: str) -> tuple[int, int]:
    w = int(t[1:])
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, (1 << w) - 1)


def is_sub(bits: int, t: str) -> bool:
    p, eb = FM[t]
    return (bits >> (p - 1)) & ((1 << eb) - 1) == 0


ROUND_INT = {"rni": round, "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}   # round(): ties even


def nan_result(dst: str, src: str) -> int:
    """The interpreter's NaN results (canonical NaNs; f64 differs by source family)."""
    if dst == "f32":
        return 0x7FFFFFFF
    if dst == "f64":
        return 0xFFF8000000000000 if src in ("f32", "f64") else 0x7FFFFFFFFFFFFFFF
    return 0x7FFF


def model_cvt(x: int, *, dst: str, src: str, rnd=None, ftz=False, sat=False, relu=False, satfinite=False) -> int:
    """PTX cvt on raw bits, from the ISA rules (§9.7.9.21) with the interpreter's choices."""
    if dst in INTS and src in INTS:                      # integer <-> integer
        w = int(src[1:])
        v = x - (1 << w) if src[0] == "s" and x >> (w - 1) else x
        if sat and dst[0] != "b":
            lo, hi = int_range(dst)
            v = min(max(v, lo), hi)
        return v % (1 << int(dst[1:]))
    if dst == "tf32":
        d = dec(x, "f32")
        if d[0] == "nan":
            return 0x7FFFFFFF
        if d[0] == "inf":
            return x
        return enc(d[1], "tf32", "rna", neg_zero=d[2]) << 13
    if src in INTS:                                      # integer -> float
        w = int(src[1:])
        v = x - (1 << w) if src[0] == "s" and x >> (w - 1) else x
        r = enc(Fraction(v), dst, rnd or "rn")
        return m_sat(r, dst) if sat else r
    # .ftz flushes a subnormal f32 source; half sources only on the way to an integer
    # (the interpreter's reading: .ftz is an f32 modifier; half -> int honours it too)
    if ftz and (src == "f32" or (src in ("f16", "bf16") and dst in INTS)) and is_sub(x, src):
        x &= 1 << (width(src) - 1)
    d = dec(x, src)
    if dst in INTS:                                      # float -> integer: always saturating
        irnd = {"rn": "rni", "rz": "rzi", "rm": "rmi", "rp": "rpi"}.get(rnd, rnd)
        irnd = irnd or ("rni" if src in ("f16", "bf16") else "rzi")
        lo, hi = int_range("u" + dst[1:] if dst[0] == "b" else dst)
        if d[0] == "nan":
            return 0
        v = (lo if d[1] else hi) if d[0] == "inf" else min(max(ROUND_INT[irnd](d[1]), lo), hi)
        return v % (1 << int(dst[1:]))
    # float -> float
    if d[0] == "nan":
        r = nan_result(dst, src)
    elif d[0] == "inf":
        p, eb = FM[dst]
        r = (((1 << eb) - 1) << (p - 1)) - (1 if satfinite else 0) | (d[1] << (width(dst) - 1))
    else:
        v, neg = d[1], d[2]
        mode = rnd or "rn"
        if rnd in IRNDS:
            v, mode = Fraction(ROUND_INT[rnd](v)), "rn"
        r = enc(v, dst, mode, neg_zero=neg, satfinite=satfinite)
        if ftz and dst == "f32" and is_sub(r, dst):
            r &= 1 << 31
    if sat:
        r = m_sat(r, dst)
    if relu and dec(r, dst)[0] != "nan" and r >> (width(dst) - 1):
        r = 0
    return r


# ---------------------------------------------------------------------------
# one compiled function for many variants


# ---------------------------------------------------------------------------
# values

def f32b(v: float) -> int:
    return int(np.float32(v).view(np.uint32))


def f64b(v: float) -> int:
    return int(np.float64(v).view(np.uint64))


def _half_mids(t: str, rng: random.Random, n: int) -> list[Fraction]:
    """Midpoints of adjacent values of t (ties), over the whole range incl. subnormals."""
    p, eb = FM[t]
    out = []
    for _ in range(n):
        h = rng.randrange(0, ((1 << eb) - 1) << (p - 1) - 1)
        a, c = dec(h, t), dec(h + 1, t)
        if c[0] == "num":
            out.append((a[1] + c[1]) / 2 * rng.choice([1, -1]))
    return out


INT_EDGE_F = [0.5, -0.5, 1.5, 2.5, -2.5, -0.99, 0.49999997, 127.5, -128.5, 255.5, 256.0, 32767.5, -32768.5,
              65535.5, 2.0 ** 31 - 128, 2.0 ** 31, -(2.0 ** 31), -(2.0 ** 31) - 256, 2.0 ** 32 - 256, 2.0 ** 32,
              2.0 ** 63, -(2.0 ** 63), 2.0 ** 64, 1e30, -1e30, 2.0 ** 53 + 2, 4503599627370497.5, -0.0]


def values(src: str, n_random: int = 24, seed: int = 1) -> list[int]:
    """Edge values for a source type (raw bits) plus random bit patterns."""
    rng = random.Random(f"{src}{seed}")
    if src in INTS:
        w = int(src[1:])
        lo, hi = int_range("s" + src[1:] if src[0] == "s" else "u" + src[1:])
        edge = [0, 1, 2, 3, lo, hi, lo + 1, hi - 1, (1 << (w - 1)), (1 << (w - 1)) - 1, 2049, 2051, 65504, 65505,
                65519, 65520, (1 << 24) + 1, (1 << 24) + 3, (1 << 53) + 1, 2 ** 62 + 2 ** 38, 2 ** 62 + 2 ** 38 + 1,
                2 ** 63 - 2 ** 39 - 1, 2 ** 64 - 2 ** 39, 2 ** 64 - 2 ** 40 + 1, -1, -2, -255, -(1 << 24) - 1,
                -(2 ** 62 + 2 ** 38)]
        vals = [v % (1 << w) for v in edge] + [rng.getrandbits(w) for _ in range(n_random)]
        vals += [rng.getrandbits(rng.randrange(1, w + 1)) for _ in range(n_random // 2)]
        return sorted(set(vals))
    w = width(src)
    p, eb = FM[src]
    inf = ((1 << eb) - 1) << (p - 1)
    sign = 1 << (w - 1)
    vals = [0, sign, 1, sign | 1, (1 << (p - 1)) - 1, 1 << (p - 1), inf - 1, sign | (inf - 1), inf, sign | inf,
            inf | 1, inf | (1 << (p - 2)), sign | inf | 5, (1 << w) - 1, 3 << (p - 2) | ((1 << (eb - 1)) - 2) << (p - 1)]
    vals += [rng.getrandbits(w) for _ in range(n_random)]
    if src in ("f32", "f64"):
        enc_ = f32b if src == "f32" else f64b
        vals += [enc_(v) for v in INT_EDGE_F]
        vals += [enc(Fraction(v), src, "rn") for v in (1 / 3, -2 / 3, 1e-40, -1e-45)]
        for t in ("f16", "bf16", "f32", "tf32"):                # ties of narrower formats, +-1 ulp
            if FM[t][0] >= p:
                continue
            for m in _half_mids(t, rng, 3):
                c = enc(m, src, "rn")
                vals += [c, c + 1, c - 1]
        # just around the overflow threshold / underflow of narrower formats
        for t in ("f16", "bf16", "f32"):
            if FM[t][0] >= p:
                continue
            pt, ebt = FM[t]
            big = Fraction(2) ** (1 << (ebt - 1)) * (1 - Fraction(1, 2 ** (pt + 1)))   # max + half ulp
            tiny = Fraction(2) ** (2 - (1 << (ebt - 1)) - pt)                          # half the min subnormal
            for v in (big, tiny, 3 * tiny):
                c = enc(v, src, "rn")
                vals += [c, c - 1, c + 1, c | sign]
    else:
        for m in _half_mids(src, rng, 2):
            vals.append(enc(m, src, "rn"))
        vals += [enc(Fraction(v), src, "rn") for v in (0.5, 1.5, 2.5, -2.5, 255.5, 3.0, 65504, -0.75)]
    return sorted({v % (1 << w) for v in vals})


def np_bits(vals: list[int], t: str) -> np.ndarray:
    return np.array(vals, dtype={8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[max(8, width(t))])


# ---------------------------------------------------------------------------
# the variant matrix


def variant_list(src: str, full: bool = False) -> list[dict]:
    """The (dst, modifiers) combinations tried for this source type.  ``full``: every one
    the emitters take (slow run); otherwise a covering subset: every destination with every
    rounding modifier, and each other modifier with the modes where it interacts."""
    out = []
    if src in INTS:
        for dst in INTS:
            for sat in (False, True):
                out.append({"dst": dst, "sat": sat})
        for dst in FLOATS:
            for rnd in [None] + RNDS:
                out.append({"dst": dst, "rnd": rnd})
            for rnd in (RNDS if full else ("rn", "rz")):
                out.append({"dst": dst, "rnd": rnd, "sat": True})
        return out
    ftz_src = src != "f64"
    for dst in INTS if full else [t for t in INTS if t[0] != "b" or t == "b32"]:
        for rnd in [None] + IRNDS:
            out.append({"dst": dst, "rnd": rnd})
            if ftz_src and (full or rnd in ("rmi", "rpi")):
                out.append({"dst": dst, "rnd": rnd, "ftz": True})
        # float -> int always clamps: .sat changes nothing
        out.append({"dst": dst, "rnd": "rzi", "sat": True})
    for dst in FLOATS:
        half = dst in ("f16", "bf16")
        modes = [None] + RNDS + (["rna"] if half else []) + IRNDS
        for rnd in modes:
            out.append({"dst": dst, "rnd": rnd})
            if full or rnd in (None, "rn", "rm", "rp", "rni"):
                out.append({"dst": dst, "rnd": rnd, "sat": True})
            if "f32" in (src, dst) and (full or rnd not in ("rz", "rna", "rzi")):
                out.append({"dst": dst, "rnd": rnd, "ftz": True})
            if half and (full or rnd in ("rn", "rz", "rm", "rp", "rna")):
                out.append({"dst": dst, "rnd": rnd, "satfinite": True})
            if half and (full or rnd in ("rn", "rm")):
                out.append({"dst": dst, "rnd": rnd, "relu": True})
                out.append({"dst": dst, "rnd": rnd, "relu": True, "satfinite": True})
    if src == "f32":
        out.append({"dst": "tf32", "rnd": "rna"})
    return out


@functools.cache
def compiled(src: str, opt: int, key: tuple, full: bool = False):
    vs = variant_list(src, full)
    sel = [vs[i] for i in key]
    return multi([functools.partial(lambda b, x, kw: C.cvt(b, x, src=src, **kw), kw=kw) for kw in sel], [src], opt=opt)


def check_matrix(src: str, opt: int, pick=None, n_random: int = 24, seed: int = 1, full: bool = False):
    vs = variant_list(src, full)
    key = tuple(range(len(vs))) if pick is None else tuple(pick(vs))
    run = compiled(src, opt, key, full)
    xs = values(src, n_random, seed)
    arr = np_bits(xs, src)
    for k, i in enumerate(key):
        kw = vs[i]
        got = run(k, arr)
        want = [model_cvt(x, src=src, **kw) for x in xs]
        bad = [(hex(x), hex(g), hex(w)) for x, g, w in zip(xs, got, want) if g != w]
        assert not bad, (src, kw, bad[:6], len(bad))


@pytest.mark.parametrize("src", FLOATS)
def test_cvt_matrix_float_sources(src):
    check_matrix(src, 0)


@pytest.mark.parametrize("src", INTS)
def test_cvt_matrix_int_sources(src):
    check_matrix(src, 0, n_random=16)


@pytest.mark.parametrize("src", ["f32", "f64", "bf16", "s64", "u32"])
def test_cvt_optimized_subset(src):
    # The O0 matrix above cannot see poison that only the optimizer exploits (out-of-range
    # shifts, wrapped flags); a sample of every family again at O2 (all of it: slow run).
    check_matrix(src, 2, pick=lambda vs: range(len(vs) % 11, len(vs), 11), n_random=16, seed=2)


@pytest.mark.slow
@pytest.mark.parametrize("src", FLOATS + INTS)
def test_slow_cvt_matrix_o2(src):
    check_matrix(src, 2, n_random=300, seed=3, full=True)


@pytest.mark.slow
@pytest.mark.parametrize("src", ["f16", "bf16"])
def test_slow_half_sources_exhaustive(src):
    # every half value: to the other half type and to f32 to nearest and in both directed
    # modes, rounded to an integral value, and to s32/u16 (the model is the slow part)
    vs = variant_list(src, True)
    other = "bf16" if src == "f16" else "f16"
    key = tuple(i for i, kw in enumerate(vs) if len(kw) <= 2 and (
        (kw["dst"] in (other, "f32") and kw.get("rnd") in (None, "rm", "rp", "rni"))
        or (kw["dst"] in ("s32", "u16") and kw.get("rnd") in ("rni", "rmi"))))
    run = compiled(src, 2, key, True)
    xs = list(range(0x10000))
    arr = np_bits(xs, src)
    for k, i in enumerate(key):
        got = run(k, arr)
        assert got == [model_cvt(x, src=src, **vs[i]) for x in xs], vs[i]


# ---------------------------------------------------------------------------
# specific facts, written out


def one(dst, src, x, **kw):
    run = multi([lambda b, v: C.cvt(b, v, dst=dst, src=src, **kw)], [src])
    return run(0, np_bits([x], src))[0]


def test_specific_values():
    # 2^62 + 2^38 is the midpoint of two f32 neighbours: ties to even; 1 more goes up
    assert one("f32", "u64", 2 ** 62 + 2 ** 38, rnd="rn") == f32b(2.0 ** 62)
    assert one("f32", "u64", 2 ** 62 + 2 ** 38 + 1, rnd="rn") == f32b(2.0 ** 62 + 2 ** 39)
    assert one("f32", "s64", 1 << 63, rnd="rz") == f32b(-(2.0 ** 63))               # INT64_MIN exact
    assert one("f32", "s32", 0xFFFFFFFF, rnd="rm") == f32b(-1.0)
    assert one("s32", "f32", f32b(-2.5), rnd="rni") == (-2) % 2 ** 32
    assert one("s32", "f32", f32b(3e9), rnd="rzi") == 2 ** 31 - 1
    assert one("u32", "f32", f32b(-0.5), rnd="rmi") == 0                            # -1 clamps to 0
    assert one("s64", "f64", f64b(float("nan")), rnd="rzi") == 0
    assert one("s64", "f64", f64b(-(2.0 ** 63)), rnd="rzi") == 1 << 63
    assert one("s32", "f32", 1, rnd="rpi") == 1                                     # subnormal up
    assert one("s32", "f32", 1, rnd="rpi", ftz=True) == 0                           # ... flushed first
    assert one("f32", "f64", f64b(2.0 ** -150), rnd="rn") == 0                      # tie to even 0
    assert one("f32", "f64", f64b(2.0 ** -150 * 1.5), rnd="rn") == 1
    assert one("f32", "f64", f64b(2.0 ** -130), rnd="rn", ftz=True) == 0            # subnormal result flushed
    assert one("f32", "f64", f64b(1e300), rnd="rz") == 0x7F7FFFFF
    assert one("f32", "f64", f64b(-1e300), rnd="rp") == 0xFF7FFFFF
    assert one("f32", "f64", f64b(-1e300), rnd="rm") == 0xFF800000
    assert one("f64", "f32", 0x7FA00001) == 0xFFF8000000000000
    assert one("f64", "f16", 0x7E01) == 0x7FFFFFFFFFFFFFFF
    assert one("f32", "f32", f32b(-0.3), rnd="rpi") == 0x80000000                   # ceil keeps -0
    assert one("f32", "f32", f32b(2.5), rnd="rni") == f32b(2.0)
    assert one("f32", "f32", f32b(2.5), rnd="rni", sat=True) == f32b(1.0)
    assert one("f16", "f32", f32b(65520.0)) == 0x7C00                               # rounds up to inf
    assert one("f16", "f32", f32b(65520.0), satfinite=True) == 0x7BFF
    assert one("f16", "f32", f32b(-1.0), relu=True) == 0
    assert one("f16", "f32", 0x7F800000, rnd="rz") == 0x7C00                        # inf stays inf
    assert one("bf16", "f32", 0x3F808000, rnd="rn") == 0x3F80                       # tie: even
    assert one("bf16", "f32", 0x3F818000, rnd="rn") == 0x3F82
    assert one("bf16", "f32", 0x3F808000, rnd="rna") == 0x3F81
    assert one("tf32", "f32", 0x3F801000, rnd="rna") == 0x3F802000                  # tie: away
    assert one("tf32", "f32", 0x7F7FF000, rnd="rna") == 0x7F800000
    assert one("u8", "s32", 0xFFFFFFFF, sat=True) == 0
    assert one("s8", "u64", 2 ** 64 - 1, sat=True) == 127
    assert one("s32", "s64", 1 << 63, sat=True) == 1 << 31
    assert one("u64", "s64", (1 << 64) - 5, sat=True) == 0
    assert one("s64", "s8", 0x80) == (1 << 64) - 128                                # sign extension
    assert one("u64", "s8", 0x80) == (1 << 64) - 128                                # ... by the source
    assert one("s64", "u8", 0x80) == 0x80


def test_pack_x2_operand_order_and_modes():
    def pack(dst, a, c, **kw):
        run = multi([lambda b, x, y: C.cvt_pack_x2(b, x, y, dst=dst, **kw)], ["f32", "f32"])
        return run(0, np.array([f32b(a)], np.uint32), np.array([f32b(c)], np.uint32))[0]
    # cvt.rn.f16x2.f32 d, a, b: a -> d[31:16], b -> d[15:0]
    assert pack("f16x2", 1.0, 2.0) == 0x3C004000
    assert pack("bf16x2", 1.0, 2.0) == 0x3F804000
    assert pack("f16x2", -1.0, 1e6, relu=True) == 0x00007C00
    assert pack("f16x2", -1.0, 1e6, relu=True, satfinite=True) == 0x00007BFF
    rng = random.Random(5)
    xs = values("f32", 40) + [rng.getrandbits(32) for _ in range(40)]
    ys = list(reversed(xs))
    for dst in ("f16x2", "bf16x2"):
        for kw in ({}, {"rnd": "rz"}, {"relu": True}, {"satfinite": True}, {"rnd": "rz", "relu": True, "satfinite": True}):
            run = multi([lambda b, x, y, kw=kw, dst=dst: C.cvt_pack_x2(b, x, y, dst=dst, **kw)], ["f32", "f32"])
            got = run(0, np_bits(xs, "f32"), np_bits(ys, "f32"))
            d = dst[:-2]
            want = [(model_cvt(x, dst=d, src="f32", **kw) << 16) | model_cvt(y, dst=d, src="f32", **kw)
                    for x, y in zip(xs, ys)]
            assert got == want, (dst, kw)


@pytest.mark.parametrize("kw", [
    {"dst": "e4m3x2", "src": "f32", "rnd": "rn", "satfinite": True},
    {"dst": "tf32", "src": "f32", "rnd": "rm"},
    {"dst": "s32", "src": "f32", "rnd": "rn", "relu": True},
    {"dst": "f32", "src": "f64", "rnd": "rn", "relu": True},
    {"dst": "f32", "src": "f64", "rnd": "rna"},
    {"dst": "f32", "src": "s32", "rnd": "rni"},
    {"dst": "s32", "src": "u32", "rnd": "rn"},
    {"dst": "f16x2", "src": "f32"},
])
def test_unsupported_forms_raise(kw):
    src_ty = ir.IntType(32) if kw["src"] != "f64" else ir.DoubleType()
    if kw["src"] == "f32":
        src_ty = ir.FloatType()
    b = ir.IRBuilder(ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [src_ty]), "f").append_basic_block())
    with pytest.raises(UnsupportedError, match="cvt"):
        C.cvt(b, b.function.args[0], **kw)
    with pytest.raises(UnsupportedError):
        C.cvt_pack_x2(b, b.function.args[0], b.function.args[0], dst="e4m3x2")


# ---------------------------------------------------------------------------
# differential: the interpreter's cvt numerics on the same inputs

def _interp_cvt(xs: list[int], src: str, dst: str, rnd=None, ftz=False, sat=False, relu=False,
                satfinite=False) -> list[int]:
    """The interpreter's scalar cvt (ptxvm/interp/ops/move.py's own dispatch) on raw bits."""
    from ptxvm.interp.ops.convert import scalar_cvt
    from ptxvm.ir.types import ScalarType
    fn = scalar_cvt(ScalarType(dst), ScalarType(src), rnd, ftz=ftz, sat=sat, relu=relu, satfinite=satfinite)
    with np.errstate(all="ignore"):
        r = np.asarray(fn(np_bits(xs, src)))
    return [int(v) for v in r]


def interp_gap(src: str, kw: dict) -> bool:
    """Forms of the matrix the interpreter (ptxvm/interp/ops/move.py) does not execute yet;
    the exact-model tests above still cover them there.  None at present: f16/bf16 -> f32/f64
    with .sat/.rni-style/.ftz, float -> f16/bf16 with .relu/.satfinite/.rni-style and
    cvt.rna.tf32.f32 all run on both sides."""
    return False


@pytest.mark.parametrize("src", FLOATS + ["s8", "u16", "s32", "u64", "s64", "b32"])
def test_agrees_with_interpreter(src):
    vs = variant_list(src)
    run = compiled(src, 0, tuple(range(len(vs))), False)
    xs = values(src, 24, 1)
    arr = np_bits(xs, src)
    checked = 0
    for k, kw in enumerate(vs):
        if interp_gap(src, kw):
            continue
        got = run(k, arr)
        want = _interp_cvt(xs, src, **kw)
        bad = [(hex(x), hex(g), hex(w)) for x, g, w in zip(xs, got, want) if g != w]
        assert not bad, (src, kw, bad[:5], len(bad))
        checked += 1
    assert checked >= len(vs) // 2
