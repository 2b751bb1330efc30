"""Issue 14's operand forms on the host JIT (the lifter's lowering): the same kernels and
hand-worked results as tests/interp/test_operand_forms.py (tests/models/operand_forms.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from ptxvm.errors import KernelFault

from models import operand_forms as F

pytest.importorskip("llvmlite")
DEVICE = "cpu"


@pytest.mark.parametrize("case", F.CASES, ids=[c.name for c in F.CASES])
def test_operand_form(case: F.Case) -> None:
    np.testing.assert_array_equal(F.run(case, DEVICE), case.expected())


def test_vector_through_a_b128_register() -> None:
    np.testing.assert_array_equal(F.run(F.B128, DEVICE), F.B128.expected())


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


def test_store_through_a_param_address_is_a_read_only_fault() -> None:
    src = F.kernel("  .reg .u64 %rd2; .reg .u32 %r1;\n  mov.b64 %rd2, a;\n  mov.u32 %r1, 5;\n"
                   "  st.param.u32 [%rd2], %r1;", scalars=True)
    for device in ("interp", DEVICE):
        k = ptxvm.Module(src, "param_store.ptx")["k"]
        with pytest.raises(KernelFault, match=r"store to a kernel parameter") as e:
            k(1, 1, (np.zeros(1, np.uint32), np.uint32(1), np.uint32(2)), device=device)
        assert e.value.space == "param", device
