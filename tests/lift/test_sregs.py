"""The warp special registers derived once in lift/sregs.py from the target's warp model
(PTX ISA §10.1-10.13: the 32-lane warp; lanes numbered by the thread's linear index in its CTA,
x fastest). Expected values are computed by hand from those definitions, and a few are spelled
out as literals; the interpreter (its own implementation) must agree."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

NX, NY = 8, 6                   # a 2-D block of 48 threads: warps 0 (32 lanes) and 1 (16 lanes)
FIELDS = ("%laneid", "%warpid", "%nwarpid", "%lanemask_eq", "%lanemask_lt", "%lanemask_le",
          "%lanemask_gt", "%lanemask_ge")

PTX = """.version 8.0
.target sm_80
.address_size 64
.visible .entry sregs(.param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;        // linear index: x + ntid.x * y
  mul.wide.u32 %rd2, %r4, 32;           // 8 words per thread
  add.u64 %rd3, %rd1, %rd2;
""" + "".join(f"  mov.u32 %r{5 + (k % 7)}, {f};\n  st.global.u32 [%rd3+{4 * k}], %r{5 + (k % 7)};\n"
              for k, f in enumerate(FIELDS)) + """  ret;
}
"""


def _by_hand() -> np.ndarray:
    rows = []
    for y in range(NY):
        for x in range(NX):
            linear = x + NX * y
            lane, warp = linear % 32, linear // 32
            eq = 1 << lane
            lt = eq - 1
            le = lt | eq
            rows.append([lane, warp, (NX * NY + 31) // 32, eq, lt, le, ~le & 0xFFFFFFFF, ~lt & 0xFFFFFFFF])
    return np.array(rows, np.uint32)


@pytest.mark.parametrize("device", ["interp", "cpu"])
def test_warp_registers_of_a_2d_block(device: str) -> None:
    out = np.zeros((NX * NY, 8), np.uint32)
    ptxvm.Module(PTX)["sregs"](1, (NX, NY), (out.reshape(-1),), device=device)
    want = _by_hand()
    assert np.array_equal(out, want)
    # Spelled out: thread (x=3, y=5) has linear index 43: lane 11 of warp 1.
    assert list(out[43]) == [11, 1, 2, 0x800, 0x7FF, 0xFFF, 0xFFFFF000, 0xFFFFF800]
    # Thread (0, 4): linear 32, the first lane of warp 1; thread (7, 3): linear 31, the last of warp 0.
    assert list(out[32][:2]) == [0, 1] and out[32][4] == 0 and out[32][7] == 0xFFFFFFFF
    assert list(out[31][:2]) == [31, 0] and out[31][5] == 0xFFFFFFFF and out[31][6] == 0
