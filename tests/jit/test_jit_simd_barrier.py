"""The warp-as-SIMD path keeps registers in SSA values and writes to the warp's state buffer only
the registers some lane reads after a barrier (``live_across_barriers``): values made before a
barrier, a guarded write's old lanes and a loop's counter survive the warp's return and resume,
bit for bit as the interpreter runs them and as a numpy model of the program says."""

from __future__ import annotations

import numpy as np

import ptxvm
from ptxvm.jit.simd import MODE
from ptxvm.jit.simd.lower import live_across_barriers

BARRIERS = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 buf[128];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.lo.u32 %r2, %r1, 7;
  add.u32 %r9, %r1, 100;
  mov.u32 %r4, buf;
  shl.b32 %r3, %r1, 2;
  add.u32 %r5, %r4, %r3;
  xor.b32 %r10, %r1, 1;
  shl.b32 %r10, %r10, 2;
  add.u32 %r11, %r4, %r10;
  st.shared.u32 [%r5], %r9;
  setp.lt.u32 %p1, %r1, 16;
  mov.u32 %r6, 5;
  @%p1 mov.u32 %r6, 9;
  mov.u32 %r7, 0;
LOOP:
  bar.sync 0;
  ld.shared.u32 %r8, [%r11];
  add.u32 %r8, %r8, %r2;
  add.u32 %r8, %r8, %r6;
  bar.sync 0;
  st.shared.u32 [%r5], %r8;
  add.u32 %r7, %r7, 1;
  setp.lt.u32 %p2, %r7, 3;
  @%p2 bra LOOP;
  bar.sync 0;
  ld.shared.u32 %r12, [%r5];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r12;
  ret;
}
"""


def _model(n: int) -> np.ndarray:
    t = np.arange(n, dtype=np.uint32)
    s = t + 100
    for _ in range(3):
        s = s[t ^ 1] + 7 * t + np.where(t < 16, 9, 5).astype(np.uint32)
    return s


def test_registers_live_across_barriers_are_those_read_after_one():
    k = ptxvm.Module(BARRIERS, "barriers.ptx")["k"]
    live = live_across_barriers(k.ir)
    # read after a barrier: the pointer, tid, the loop's values, the guarded write's register
    assert {"%rd1", "%r1", "%r2", "%r5", "%r6", "%r7", "%r11"} <= live
    # made and used before the first barrier, or only after the last read of it
    assert not live & {"%r3", "%r4", "%r9", "%r10", "%p1", "%r12", "%rd2", "%rd3"}


def test_values_survive_barriers_bit_for_bit():
    k = ptxvm.Module(BARRIERS, "barriers.ptx")["k"]
    want, got = np.zeros(64, np.uint32), np.zeros(64, np.uint32)
    k((1,), (64,), (want,), device="interp")
    k((1,), (64,), (got,), device="cpu")
    assert k.stats.host_driver == MODE
    assert np.array_equal(got, want)
    assert np.array_equal(got, _model(64))
