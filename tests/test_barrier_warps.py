"""A counted barrier counts a warp once all its non-exited threads wait there (PTX ISA 9.0
§9.7.13.1: `bar.sync` makes the executing thread wait for the rest of its warp, then marks the
warp's arrival; counts are in whole warps).

Found by the fuzzer (partial-mask warp operations): lane 0 of each warp is held at a warp
operation of its own while lanes 1..31 reach `bar.sync 0, 64`; the JIT counted both warps as
arrived and released the barrier before lane 0 of the next warp had stored its value. Expected
values come from the kernel's definition: every thread reads its neighbour's slot after the
barrier, out[t] = 3 * ((t + 1) % 64) + 1.
"""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b32 sh[64];
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mad.lo.u32 %r2, %r1, 3, 1;
  mov.u32 %r3, %laneid;
  setp.ne.u32 %p1, %r3, 0;
  @%p1 bra STORE;
  vote.sync.ballot.b32 %r4, %p1, 1;
  add.u32 %r2, %r2, %r4;
STORE:
  mov.u32 %r5, sh;
  shl.b32 %r6, %r1, 2;
  add.u32 %r5, %r5, %r6;
  st.shared.u32 [%r5], %r2;
  bar.sync 0, 64;
  add.u32 %r6, %r1, 1;
  and.b32 %r6, %r6, 63;
  shl.b32 %r6, %r6, 2;
  mov.u32 %r5, sh;
  add.u32 %r5, %r5, %r6;
  ld.shared.u32 %r7, [%r5];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
"""


@pytest.mark.parametrize("device", ["interp", "cpu"])
def test_counted_barrier_waits_for_the_whole_warp(device) -> None:
    out = np.zeros(64, np.uint32)
    ptxvm.Module(PTX)["k"](1, 64, [out], device=device)
    t = np.arange(64)
    np.testing.assert_array_equal(out, (3 * ((t + 1) % 64) + 1).astype(np.uint32))
