"""Issue 14's operand forms on the interpreter: vector registers, address expressions as values,
kernel .param addresses in registers, 32-bit address wrap-around, wide/narrow loads and .v8.
The kernels and their hand-worked results are tests/models/operand_forms.py."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from ptxvm.errors import KernelFault, UnsupportedError

from models import operand_forms as F

DEVICE = "interp"


@pytest.mark.parametrize("case", F.CASES, ids=[c.name for c in F.CASES])
def test_operand_form(case: F.Case) -> None:
    np.testing.assert_array_equal(F.run(case, DEVICE), case.expected())


def test_b128_register_is_refused_with_its_location() -> None:
    want = r"vector_b128_pack\.ptx:10:3: error: `mov.b128` moves \.b128 values, which the interpreter"
    with pytest.raises(UnsupportedError, match=want):
        F.run(F.B128, DEVICE)


def test_wrapped_address_outside_the_window_faults_at_the_wrapped_offset() -> None:
    k = ptxvm.Module(F.WRAP_FAULT, "wrap_fault.ptx")["k"]
    with pytest.raises(KernelFault) as e:
        k(1, 1, (np.zeros(1, np.uint32),), device=DEVICE)
    assert (e.value.space, e.value.address) == ("shared", F.WRAP_FAULT_OFFSET)


def test_param_address_past_the_block_faults() -> None:
    k = ptxvm.Module(F.PARAM_FAULT, "param_fault.ptx")["k"]
    with pytest.raises(KernelFault) as e:
        k(1, 1, (np.zeros(1, np.uint32), np.uint32(1), np.uint32(2)), device=DEVICE)
    assert (e.value.space, e.value.address) == ("param", F.PARAM_FAULT_OFFSET)


def test_offset_of_a_float_register_is_refused_by_the_executor() -> None:
    # The verifier refuses `%f1+1` (an address expression is an integer); an unverified IR
    # reaching the interpreter is refused by name, not read as some number.
    from dataclasses import replace
    from ptxvm.interp.compile import compile_kernel
    from ptxvm.ir import nodes as ir
    from ptxvm.machine.symbols import Symbols

    src = F.kernel("  .reg .f32 %f<3>;\n  mov.f32 %f1, %f2;")
    m = ptxvm.parse(src, filename="f.ptx")
    k = m.kernels["k"]
    mov = next(k.body.instructions())
    bad = replace(mov, operands=(mov.operands[0], ir.Offset(ir.Register("%f2"), 1)))
    body = replace(k.body, statements=tuple(bad if s is mov else s for s in k.body.statements))
    k2 = replace(k, body=body)
    m2 = replace(m, items=tuple(k2 if i is k else i for i in m.items))
    with pytest.raises(UnsupportedError, match=r"adds an offset to `%f2` as a \.f32 value"):
        compile_kernel(m2, k2, Symbols())
