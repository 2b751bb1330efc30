"""`.satfinite` conversions on both executors (PTX ISA 9.0 §9.7.9.21 cvt: with .satfinite a NaN
input gives NaN and an input whose magnitude exceeds the destination's MAX_NORM, infinities
included, gives MAX_NORM with the input's sign).

Expected bits are the formats' constants: f16 MAX_NORM 65504 = 0x7BFF, bf16 0x7F7F, tf32
0x7F7FE000 (f32's exponent with the top 10 fraction bits); canonical NaNs 0x7FFF / 0x7FFFFFFF.
The JIT once dropped `.satfinite` silently (the flag never reached the emitter).
"""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
VALUES = np.array([1e6, -1e6, np.inf, -np.inf, np.nan, 1.0, 65504.0, 65520.0], np.float32)

# form, instruction(s) leaving the result in %r1, expected result per VALUES entry
CASES = [
    ("f16", "cvt.rn.satfinite.f16.f32 %h0, %r0; cvt.u32.u16 %r1, %h0;",
     [0x7BFF, 0xFBFF, 0x7BFF, 0xFBFF, 0x7FFF, 0x3C00, 0x7BFF, 0x7BFF]),
    ("bf16", "cvt.rn.satfinite.bf16.f32 %h0, %r0; cvt.u32.u16 %r1, %h0;",
     # 1e6 = 0x49742400 -> 0x4974 (rn); 65520 = 0x477FF000 rounds up to 0x4780
     [0x4974, 0xC974, 0x7F7F, 0xFF7F, 0x7FFF, 0x3F80, 0x4780, 0x4780]),
    ("tf32", "cvt.rna.satfinite.tf32.f32 %r1, %r0;",
     [0x49742000, 0xC9742000, 0x7F7FE000, 0xFF7FE000, 0x7FFFFFFF, 0x3F800000, 0x477FE000, 0x47800000]),
]


def _kernel(body: str) -> str:
    return HEAD + f"""
.visible .entry k(.param .u64 pi, .param .u64 po)
{{
  .reg .b64 %a<4>;
  .reg .b32 %r<2>;
  .reg .b16 %h<2>;
  .reg .b32 %t;
  ld.param.u64 %a0, [pi];
  ld.param.u64 %a1, [po];
  mov.u32 %t, %tid.x;
  mul.wide.u32 %a2, %t, 4;
  add.s64 %a3, %a0, %a2;
  ld.global.b32 %r0, [%a3];
  {body}
  add.s64 %a3, %a1, %a2;
  st.global.b32 [%a3], %r1;
  ret;
}}"""


@pytest.mark.parametrize("fmt,body,expected", CASES, ids=[c[0] for c in CASES])
def test_satfinite_clamps_to_max_norm(executor, fmt, body, expected) -> None:
    out = np.zeros(len(VALUES), np.uint32)
    fn = ptxvm.Module(_kernel(body))["k"]
    fn(1, len(VALUES), [VALUES.copy(), out], device=executor)
    assert [hex(x) for x in out] == [hex(x) for x in expected]
