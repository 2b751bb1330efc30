"""cvt to and from the narrow float formats (PTX ISA 9.0 §9.7.9.21; formats §5.2.5) on every CPU
executor, bit-exact against tests/models/narrowfloat.py (decoded from the formats' fields, encoded
by exact rational rounding): every 8-bit (and 4-bit) code in both element positions, every f16
and bf16 bit pattern for the packed-half sources (slow), a dense f32 sample around every value,
midpoint and range edge of each format."""

from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np
import pytest

import ptxvm

from models import narrowfloat as M
from models.lanes import run_lanes

E_FORMATS = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")
SLOT = {"e2m1": 4}          # bits per element in the packed register (the others: 8)


def _f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def _perm(n: int) -> np.ndarray:
    """A fixed permutation of 0..n-1 (the second element's codes: every code in both positions)."""
    return (np.arange(n) * 167 + 89) % n


def f32_sample(fmt: str) -> list[int]:
    """f32 bits: every finite value of ``fmt``, every midpoint between neighbours and the f32 values
    either side of it, the region above MAX_NORM and below the smallest subnormal, f32
    subnormals, zeros, infinities, NaNs, both signs; plus random values of the format's range."""
    mags = [v for v, _ in M.finite_magnitudes(fmt)]
    pts: set[int] = set()
    for lo, hi in zip(mags, mags[1:] + [mags[-1] * 2]):
        for v in (lo, (lo + hi) / 2):
            f = np.float32(float(v))
            assert Fraction(float(f)) == v
            for g in (f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(0))):
                pts.add(int(np.float32(g).view(np.uint32)))
    for v in (1e-30, 1e-45, 3e38, 1e6, 2.0 ** -20, float(mags[1]) / 4, float(mags[1]) / 2 * 1.0000001):
        pts.add(_f32(v))
    pts |= {0, 1, 0x007FFFFF, 0x00400000, 0x7F7FFFFF, 0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF}
    rng = np.random.default_rng(len(fmt) + mags[-1].numerator)
    top = int(np.ceil(np.log2(float(mags[-1])))) + 2
    exps = rng.integers(-top - 8, top, 1500)
    pts |= {int(x) for x in (rng.random(1500) * 2.0 ** exps).astype(np.float32).view(np.uint32)}
    both = sorted(pts) + sorted(p | 0x80000000 for p in pts)
    return both


def _enc(fmt: str, bits32: int, relu: bool) -> int:
    return M.encode(fmt, M.f32_value(bits32), "rn", relu=relu)


@pytest.mark.parametrize("relu", [False, True], ids=["", "relu"])
@pytest.mark.parametrize("fmt", E_FORMATS)
def test_cvt_f32_pair_to_narrow(fmt, relu, executor) -> None:
    a = f32_sample(fmt)
    b = a[::-1]
    slot = SLOT.get(fmt, 8)
    reg = "b8" if slot == 4 else "b16"
    mod = ".relu" if relu else ""
    (got,) = run_lanes(f"cvt.rn.satfinite{mod}.{fmt}x2.f32 %d, %a, %b;",
                       [("%a", "b32"), ("%b", "b32")], [("%d", reg)], [a, b], executor)
    want = [(_enc(fmt, x, relu) << slot) | _enc(fmt, y, relu) for x, y in zip(a, b)]
    bad = [(hex(x), hex(y), hex(int(g)), hex(w)) for x, y, g, w in zip(a, b, got, want) if int(g) != w]
    assert not bad, (len(bad), bad[:8])


def _all_pairs16() -> tuple[np.ndarray, np.ndarray]:
    hi = np.arange(1 << 16)
    return hi, _perm(1 << 16)


@pytest.mark.slow
@pytest.mark.parametrize("relu", [False, True], ids=["", "relu"])
@pytest.mark.parametrize("fmt", ("e4m3", "e5m2"))
def test_cvt_every_f16_pattern_to_fp8(fmt, relu, executor) -> None:
    """cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 on all 65536 f16 patterns in each half."""
    hi, lo = _all_pairs16()
    (got,) = run_lanes(f"cvt.rn.satfinite{'.relu' if relu else ''}.{fmt}x2.f16x2 %d, %a;",
                       [("%a", "b32")], [("%d", "b16")], [(hi << 16) | lo], executor)
    enc = [M.encode(fmt, M.f16_value(h), "rn", relu=relu) for h in range(1 << 16)]
    want = (np.array(enc)[hi] << 8) | np.array(enc)[lo]
    assert np.array_equal(got.astype(np.int64), want), np.flatnonzero(got != want)[:8]


def test_cvt_f16_sample_to_fp8(executor) -> None:
    """The same forms on every 61st f16 pattern (the default run's share of the slow sweep)."""
    hi = np.arange(0, 1 << 16, 61)
    lo = (hi * 7919 + 1) % (1 << 16)
    for fmt in ("e4m3", "e5m2"):
        for relu in (False, True):
            (got,) = run_lanes(f"cvt.rn.satfinite{'.relu' if relu else ''}.{fmt}x2.f16x2 %d, %a;",
                               [("%a", "b32")], [("%d", "b16")], [(hi << 16) | lo], executor)
            want = [(M.encode(fmt, M.f16_value(int(h)), relu=relu) << 8) | M.encode(fmt, M.f16_value(int(v)), relu=relu)
                    for h, v in zip(hi, lo)]
            assert [int(g) for g in got] == want, (fmt, relu)


@pytest.mark.parametrize("relu", [False, True], ids=["", "relu"])
@pytest.mark.parametrize("fmt", E_FORMATS)
def test_cvt_narrow_to_f16x2_every_code(fmt, relu, executor) -> None:
    """cvt.rn{.relu}.f16x2.<fmt>x2: every code in the upper and in the lower element (e2m3/e3m2:
    every byte, the two padding bits the ISA requires zero set too)."""
    slot = SLOT.get(fmt, 8)
    n = 1 << slot
    if slot == 4:
        src, reg = np.arange(256), "b8"
    else:
        src, reg = (np.arange(256) << 8) | _perm(256), "b16"
    (got,) = run_lanes(f"cvt.rn{'.relu' if relu else ''}.f16x2.{fmt}x2 %d, %a;",
                       [("%a", reg)], [("%d", "b32")], [src], executor)
    want = [(M.to_half(fmt, int(s) >> slot, relu) << 16) | M.to_half(fmt, int(s) & (n - 1), relu) for s in src]
    assert [int(g) for g in got] == want


def test_cvt_ue8m0_to_bf16x2_every_code(executor) -> None:
    src = (np.arange(256) << 8) | _perm(256)
    (got,) = run_lanes("cvt.rn.bf16x2.ue8m0x2 %d, %a;", [("%a", "b16")], [("%d", "b32")], [src], executor)
    want = [(M.ue8m0_to_bf16(int(s) >> 8) << 16) | M.ue8m0_to_bf16(int(s) & 255) for s in src]
    assert [int(g) for g in got] == want


def _ue8m0_f32_sample() -> list[int]:
    pts = set()
    for e in range(-149, 128):
        v = np.float32(2.0 ** e)
        for g in (v, np.nextafter(v, np.float32(np.inf)), np.nextafter(v, np.float32(0)), v * np.float32(1.5)):
            pts.add(int(np.float32(g).view(np.uint32)))
    pts |= {0, 0x00400000, 0x00400001, 0x003FFFFF, 0x7F7FFFFF, 0x7F000000, 0x7F000001, 0x7F800000, 0x7FC00000,
            0x7F800001}
    return sorted(pts) + sorted(p | 0x80000000 for p in pts)


@pytest.mark.parametrize("satf", [False, True], ids=["", "satfinite"])
@pytest.mark.parametrize("rnd", ["rz", "rp"])
def test_cvt_f32_pair_to_ue8m0(rnd, satf, executor) -> None:
    a = _ue8m0_f32_sample()
    b = a[::-1]
    (got,) = run_lanes(f"cvt.{rnd}{'.satfinite' if satf else ''}.ue8m0x2.f32 %d, %a, %b;",
                       [("%a", "b32"), ("%b", "b32")], [("%d", "b16")], [a, b], executor)
    enc = lambda x: M.encode("ue8m0", M.f32_value(x), rnd, satfinite=satf)
    want = [(enc(x) << 8) | enc(y) for x, y in zip(a, b)]
    bad = [(hex(x), hex(y), hex(int(g)), hex(w)) for x, y, g, w in zip(a, b, got, want) if int(g) != w]
    assert not bad, bad[:8]


@pytest.mark.parametrize("satf", [False, True], ids=["", "satfinite"])
@pytest.mark.parametrize("rnd", ["rz", "rp"])
def test_cvt_every_bf16_pattern_to_ue8m0(rnd, satf, executor) -> None:
    hi, lo = _all_pairs16()
    (got,) = run_lanes(f"cvt.{rnd}{'.satfinite' if satf else ''}.ue8m0x2.bf16x2 %d, %a;",
                       [("%a", "b32")], [("%d", "b16")], [(hi << 16) | lo], executor)
    enc = np.array([M.encode("ue8m0", M.bf16_value(h), rnd, satfinite=satf) for h in range(1 << 16)])
    want = (enc[hi] << 8) | enc[lo]
    assert np.array_equal(got.astype(np.int64), want), np.flatnonzero(got != want)[:8]


@pytest.mark.parametrize("mods", ["", ".relu", ".satfinite", ".relu.satfinite"])
def test_cvt_rs_bf16x2(mods, executor) -> None:
    """cvt.rs.bf16x2.f32 d, a, b, rbits: rbits[31:16] round a, rbits[15:0] round b."""
    rng = np.random.default_rng(7)
    a = [int(x) for x in rng.integers(0, 1 << 32, 600, dtype=np.uint64)]
    a += [0x7F7FFFFF, 0x7F7F8000, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00001, 0x00000001, 0x8000FFFF, 0, 0x80000000,
          0x3F808000, 0x3F807FFF, 0x007FFFFF, 0x3F80FFFF]
    b = a[::-1]
    r = [int(x) for x in rng.integers(0, 1 << 32, len(a), dtype=np.uint64)]
    r[-4:] = [0xFFFFFFFF, 0x00010001, 0x80008000, 0x7FFF7FFF]
    (got,) = run_lanes(f"cvt.rs{mods}.bf16x2.f32 %d, %a, %b, %r;", [("%a", "b32"), ("%b", "b32"), ("%r", "b32")],
                       [("%d", "b32")], [a, b, r], executor)
    kw = dict(relu="relu" in mods, satfinite="satfinite" in mods)
    want = [(M.bf16_rs(M.f32_value(x), rr >> 16, **kw) << 16) | M.bf16_rs(M.f32_value(y), rr & 0xFFFF, **kw)
            for x, y, rr in zip(a, b, r)]
    bad = [(hex(x), hex(y), hex(rr), hex(int(g)), hex(w)) for x, y, rr, g, w in zip(a, b, r, got, want) if int(g) != w]
    assert not bad, bad[:8]


REFUSED = [
    ("cvt.rs.f16x2.f32 %d, %a, %b, %r;", "b32"),
    ("cvt.rs.satfinite.e4m3x4.f32 %d, {%a, %b, %a, %b}, %r;", "b32"),
    ("cvt.rs.relu.satfinite.e2m1x4.f32 %d, {%a, %b, %a, %b}, %r;", "b16"),
]


@pytest.mark.parametrize("body,reg", REFUSED, ids=[r[0].split()[0] for r in REFUSED])
def test_stochastic_forms_left_open_are_refused_with_a_location(body, reg, executor) -> None:
    with pytest.raises(ptxvm.UnsupportedError) as e:
        run_lanes(body, [("%a", "b32"), ("%b", "b32"), ("%r", "b32")], [("%d", reg)], [[0], [0], [0]], executor)
    text = str(e.value)
    assert body.split()[0] in text and "random bits" in text and ":" in text.split("error")[0], text
