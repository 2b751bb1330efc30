"""The issue-14 forms (narrow-float cvt, cvt.rs.bf16x2, cvt.pack, lop3 d|p, packed-half setp/set)
translate for every AMD target; on the ISA emulator (slow, skipped without it) the translated
kernels give the model's bits for every 8-bit code."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import ptxvm
from ptxvm.amdgpu import available
from ptxvm.driver.executors import emu

from models import narrowfloat as M
from models.lanes import run_lanes

BODY = """
.version 8.7
.target sm_100a
.address_size 64
.visible .entry issue14(.param .u64 p)
{
  .reg .b8 %c<2>; .reg .b16 %h<8>; .reg .b32 %r<12>; .reg .f32 %f<4>; .reg .pred %p<4>; .reg .b64 %a;
  ld.param.u64 %a, [p];
  ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%a];
  ld.global.v4.b32 {%r0, %r1, %r2, %r3}, [%a+16];
  cvt.rn.satfinite.e4m3x2.f32 %h0, %f0, %f1;
  cvt.rn.satfinite.relu.e5m2x2.f32 %h1, %f2, %f3;
  cvt.rn.satfinite.e2m3x2.f32 %h2, %f0, %f2;
  cvt.rn.satfinite.e3m2x2.f32 %h3, %f1, %f3;
  cvt.rn.satfinite.e2m1x2.f32 %c0, %f0, %f3;
  cvt.rn.satfinite.e4m3x2.f16x2 %h4, %r0;
  cvt.rz.satfinite.ue8m0x2.f32 %h5, %f0, %f1;
  cvt.rp.ue8m0x2.bf16x2 %h6, %r1;
  cvt.rn.relu.f16x2.e4m3x2 %r4, %h0;
  cvt.rn.f16x2.e5m2x2 %r5, %h1;
  cvt.rn.f16x2.e2m3x2 %r6, %h2;
  cvt.rn.f16x2.e2m1x2 %r7, %c0;
  cvt.rn.bf16x2.ue8m0x2 %r8, %h5;
  cvt.rs.satfinite.bf16x2.f32 %r9, %f0, %f1, %r2;
  cvt.pack.sat.s16.s32 %r10, %r0, %r1;
  cvt.pack.sat.u4.s32.b32 %r10, %r2, %r3, %r10;
  lop3.or.b32 %r11|%p0, %r0, %r1, %r2, 0x96, %p1;
  setp.lt.f16x2 %p1|%p2, %r0, %r1;
  set.geu.bf16x2.bf16x2 %r3, %r2, %r3;
  @%p2 add.u32 %r11, %r11, 1;
  st.global.v4.b32 [%a], {%r4, %r5, %r6, %r7};
  st.global.v4.b32 [%a+16], {%r8, %r9, %r10, %r11};
  st.global.b32 [%a+32], %r3;
  st.global.v4.b16 [%a+36], {%h3, %h4, %h5, %h6};
  ret;
}
"""


@pytest.mark.lld
@pytest.mark.parametrize("target", available())
def test_issue14_forms_translate(target) -> None:
    obj = ptxvm.compile(BODY, target=target)
    assert obj.kernels == ["issue14"]


MISSING = emu.why_unavailable()


@pytest.mark.slow
@pytest.mark.lld
@pytest.mark.skipif(MISSING is not None, reason=f"emu executors unavailable: {MISSING}")
@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
def test_every_fp8_code_decodes_and_reencodes_on_the_emulator(target) -> None:
    """cvt.rn.f16x2.e4m3x2 / .e5m2x2 on every code in both positions, and the f32 values of the
    codes (with their midpoints) back through cvt.rn.satfinite.e4m3x2.f32, on emu:<target>."""
    src = (np.arange(256) << 8) | ((np.arange(256) * 167 + 89) % 256)
    for fmt in ("e4m3", "e5m2"):
        (got,) = run_lanes(f"cvt.rn.f16x2.{fmt}x2 %d, %a;", [("%a", "b16")], [("%d", "b32")], [src], f"emu:{target}")
        want = [(M.to_half(fmt, int(s) >> 8) << 16) | M.to_half(fmt, int(s) & 255) for s in src]
        assert [int(g) for g in got] == want, fmt
    mags = [v for v, _ in M.finite_magnitudes("e4m3")]
    vals = mags + [(x + y) / 2 for x, y in zip(mags, mags[1:])]
    bits = [int(np.float32(float(v)).view(np.uint32)) for v in vals]
    bits += [b | 0x80000000 for b in bits] + [0x7F800000, 0x7FC00000, 0x43E80000]
    (got,) = run_lanes("cvt.rn.satfinite.e4m3x2.f32 %d, %a, %b;", [("%a", "b32"), ("%b", "b32")], [("%d", "b16")],
                       [bits, bits[::-1]], f"emu:{target}")
    enc = lambda x: M.encode("e4m3", M.f32_value(x))
    assert [int(g) for g in got] == [(enc(x) << 8) | enc(y) for x, y in zip(bits, bits[::-1])]


@pytest.mark.slow
@pytest.mark.lld
@pytest.mark.skipif(MISSING is not None, reason=f"emu executors unavailable: {MISSING}")
@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
def test_fp4_fp6_ue8m0_rs_and_pack_on_the_emulator(target) -> None:
    """Every e2m1 value and midpoint through cvt.rn.satfinite.e2m1x2.f32, every e3m2 code back to
    f16x2, ue8m0 rz/rp of powers of two and their neighbours, cvt.rs.bf16x2 and cvt.pack.sat.s8."""
    dev = f"emu:{target}"
    mags = [v for v, _ in M.finite_magnitudes("e2m1")]
    vals = mags + [(x + y) / 2 for x, y in zip(mags, mags[1:])] + [Fraction(13, 2), Fraction(100)]
    bits = [int(np.float32(float(v)).view(np.uint32)) for v in vals]
    bits += [b | 0x80000000 for b in bits] + [0x7FC00000, 0xFF800000]
    (got,) = run_lanes("cvt.rn.satfinite.relu.e2m1x2.f32 %d, %a, %b;", [("%a", "b32"), ("%b", "b32")],
                       [("%d", "b8")], [bits, bits[::-1]], dev)
    enc = lambda x: M.encode("e2m1", M.f32_value(x), relu=True)
    assert [int(g) for g in got] == [(enc(x) << 4) | enc(y) for x, y in zip(bits, bits[::-1])]
    src = (np.arange(64) << 8) | (63 - np.arange(64))
    (got,) = run_lanes("cvt.rn.f16x2.e3m2x2 %d, %a;", [("%a", "b16")], [("%d", "b32")], [src], dev)
    assert [int(g) for g in got] == [(M.to_half("e3m2", int(s) >> 8) << 16) | M.to_half("e3m2", int(s) & 255)
                                     for s in src]
    p2 = [int(np.float32(2.0 ** e).view(np.uint32)) + d for e in range(-130, 128, 7) for d in (-1, 0, 1)]
    for rnd in ("rz", "rp"):
        (got,) = run_lanes(f"cvt.{rnd}.satfinite.ue8m0x2.f32 %d, %a, %b;", [("%a", "b32"), ("%b", "b32")],
                           [("%d", "b16")], [p2, p2[::-1]], dev)
        e8 = lambda x: M.encode("ue8m0", M.f32_value(x), rnd, satfinite=True)
        assert [int(g) for g in got] == [(e8(x) << 8) | e8(y) for x, y in zip(p2, p2[::-1])], rnd
    rng = np.random.default_rng(3)
    a, b, r = ([int(x) for x in rng.integers(0, 1 << 32, 64, dtype=np.uint64)] for _ in range(3))
    d, pk = run_lanes("cvt.rs.bf16x2.f32 %d, %a, %b, %r; cvt.pack.sat.s8.s32.b32 %k, %a, %b, %r;",
                      [("%a", "b32"), ("%b", "b32"), ("%r", "b32")], [("%d", "b32"), ("%k", "b32")], [a, b, r], dev)
    assert [int(g) for g in d] == [(M.bf16_rs(M.f32_value(x), z >> 16) << 16) | M.bf16_rs(M.f32_value(y), z & 0xFFFF)
                                   for x, y, z in zip(a, b, r)]
    assert [int(g) for g in pk] == [M.cvt_pack("s8", x, y, z) for x, y, z in zip(a, b, r)]
