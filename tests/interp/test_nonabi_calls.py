"""Non-ABI calls on the interpreter (issue 14): `.reg` formals and results of `.func`s, register
and immediate arguments, several results, `.param` arguments for `.reg` formals and registers
for `.param` ones, `_` results, recursion and indirect calls of register-passing functions.

The kernels and their numpy expectations are tests/models/nonabi_calls.py (each states its
reading of the ISA: arguments are passed by value, §9.7.12.5); ptxas accepts every one
(tests/data/nonabi_calls.json). tests/jit/test_jit_nonabi_calls.py runs the same kernels on the
host JIT.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from models.nonabi_calls import BY_NAME, CASES, THREADS, run

import ptxvm
from ptxvm.errors import UnsupportedError

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_kernel_equals_its_model(case):
    got, expected = run(case, "interp")
    np.testing.assert_array_equal(got, expected, err_msg=case.doc)


@pytest.mark.parametrize("name", ["reg_args", "mixed_spaces", "two_results", "recursion", "sink_and_guard"])
def test_edge_inputs(name):
    """0, 1, all ones and the sign bit: wrap-around of the 32-bit arguments and results."""
    inp = np.resize(np.array([0, 1, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF], dtype=np.uint32), THREADS)
    got, expected = run(BY_NAME[name], "interp", inp)
    np.testing.assert_array_equal(got, expected)


def test_register_for_a_param_formal_is_its_bytes_not_a_broadcast():
    """Regression: a register for a `.param .b32` formal once filled every byte of the formal
    with the value's low byte (6 read back as 0x06060607 after the callee's +1)."""
    got, _ = run(BY_NAME["mixed_spaces"], "interp", np.full(THREADS, 6, dtype=np.uint32))
    assert got[0, 1] == 6 - 7 + 2**32


HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _kernel(func: str, call: str) -> str:
    return HEAD + func + (".visible .entry k(.param .u64 out)\n{\n\t.reg .u32 %r<4>;\n\t.reg .u64 %rd<4>;\n"
                          "\tld.param.u64 %rd1, [out];\n" f"\t{call}\n" "\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n")


REFUSED = [
    # ptxas accepts these; ptxvm refuses them with the reason (ptxvm/ir/call_args.py: ptxas passes 0).
    ("float_for_b16", ".func (.reg .u32 o) f(.reg .b16 a)\n{\n\tmov.u32 o, 1;\n\tret;\n}\n", "call (%r2), f, (1.0);",
     "c.ptx:14:2: error: `call` passes `1.0` for `a`: a floating-point immediate for a .b16 parameter: ptxas "
     "accepts it but passes 0 whatever its value, so ptxvm does not run it"),
    # (vector register formals run: tests/models/operand_forms.py, the `vector_call_*` cases)
]


@pytest.mark.parametrize("name,func,call,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_is_not_run_is_refused_with_its_reason(name, func, call, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = ptxvm.Module(_kernel(func, call), "c.ptx")["k"]
    with pytest.raises(UnsupportedError) as e:
        k(1, 1, (np.zeros(1, np.uint32),), device="interp")
    assert str(e.value).split("\n")[0] == message
