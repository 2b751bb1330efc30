"""Hex float literals given to an operand of the other float width (PTX ISA 9.0 §4.5.2).

§4.5.2: a `0d` literal is a 64-bit constant "converted to the appropriate floating-point size
based on the data or instruction type at its use"; a `0f` literal "retain[s] its exact 32-bit
single-precision value".

`0d` -> .f32: the expected bits were read off ptxas (CUDA 13, sm_80) SASS with nvdisasm:
ptxas rounds to nearest even, quiets a NaN to 0x7fc00000, overflows to inf and underflows to 0,
which is the conversion §4.5.2 names.

`0f` -> .f64: here ptxas (CUDA 13) does NOT do what §4.5.2 says: for `mov.f64 %fd1, 0f3F800001`
it emits `MOV R8, 0x3f800001; MOV R9, 0x0` (the bits zero-extended, a denormal), and for
`add.f64`/`fma.rn.f64` it puts 0x0000000040490fdb / 0x00000000bf800000 in the constant bank.
ptxvm follows the ISA (the exact single value, widened); the expectations below come from
widening the single with struct, not from ptxvm.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

import ptxvm


@pytest.fixture(autouse=True)
def device(executor, monkeypatch):
    monkeypatch.setenv("PTXVM_DEVICE", executor)
    return executor


def _kernel(body: str, name: str):
    text = f""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{{
  .reg .f32 %f<4>;
  .reg .f64 %fd<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
{body}
  ret;
}}
"""
    return ptxvm.Module(text, name)["k"]


@pytest.mark.parametrize("lit,bits", [
    ("0d3FF0000030000000", 0x3F800002),     # exactly half an ulp above 0x3f800001: ties to even
    ("0d3FF0000010000001", 0x3F800001),     # just over half an ulp above 1.0: rounds up
    ("0d7FF0000000000001", 0x7FC00000),     # signalling NaN: the quiet NaN
    ("0d47EFFFFFF0000000", 0x7F800000),     # half an ulp above FLT_MAX: overflows to inf
    ("0d3690000000000000", 0x00000000),     # 2^-150, half the smallest denormal: ties to +0
])
@pytest.mark.filterwarnings("error")           # the overflow is the conversion, not a numpy warning
def test_0d_literal_to_f32_operand_rounds_as_ptxas(lit: str, bits: int) -> None:
    k = _kernel(f"  mov.f32 %f1, {lit};\n  st.global.f32 [%rd1], %f1;", "lit_0d.ptx")
    out = np.full(1, 0xDEADBEEF, np.uint32)
    k((1,), (1,), (out,))
    assert int(out[0]) == bits, hex(int(out[0]))


def _widened(f32_bits: int) -> int:
    return struct.unpack("<Q", struct.pack("<d", struct.unpack("<f", struct.pack("<I", f32_bits))[0]))[0]


def _f64(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def test_0f_literal_to_f64_operand_keeps_the_single_value() -> None:
    k = _kernel("""  ld.global.f64 %fd2, [%rd1];
  mov.f64 %fd1, 0f3F800001;
  st.global.f64 [%rd1], %fd1;
  add.f64 %fd3, %fd2, 0f40490FDB;
  st.global.f64 [%rd1+8], %fd3;""", "lit_0f.ptx")
    out = np.zeros(2, np.float64)
    out[0] = 2.0
    k((1,), (1,), (out,))
    bits = out.view(np.uint64)
    assert int(bits[0]) == _widened(0x3F800001) == 0x3FF0000020000000
    assert float(out[1]) == 2.0 + _f64(_widened(0x40490FDB))
