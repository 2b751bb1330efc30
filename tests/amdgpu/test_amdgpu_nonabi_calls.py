"""Non-ABI calls translate for the AMD targets (issue 14): the kernels of
tests/models/nonabi_calls.py (register and immediate arguments, `.reg` formals and results,
several results, recursion, indirect calls, warp-exchanging callees) for gfx90a (wave64 CDNA),
gfx1030 (wave32 RDNA2) and gfx1100 (RDNA3).

Without a GPU: compiled without linking (no ld.lld needed), linked where the `lld` marker's
tools are installed, and run on the AMD ISA emulator (emu:gfx90a, emu:gfx1100; skipped when
../shared/tools/amdgpu-emu or clang is missing) against the same numpy models the CPU
executors are tested with.
"""

from __future__ import annotations

import re
from importlib.util import find_spec

import numpy as np
import pytest
from models.nonabi_calls import BY_NAME, CASES, run

import ptxvm
from ptxvm.amdgpu.codegen import compile_unlinked
from ptxvm.driver.executors import emu
from ptxvm.driver.executors.emu import EmulatorLimit

pytestmark = pytest.mark.filterwarnings("ignore")

TARGETS = ("gfx90a", "gfx1030", "gfx1100")
MISSING = emu.why_unavailable() or next(
    (f"{p} is not installed" for p in ("llvmlite", "ziglang") if find_spec(p) is None), None)
needs_emulator = pytest.mark.skipif(MISSING is not None, reason=f"emu executors unavailable: {MISSING}")


def _functions(ptx: str) -> set[str]:
    return set(re.findall(r"^\.func\s+(?:\([^)]*\)\s*)?(\w+)", ptx, re.M))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_translates_with_each_function_lowered(case, target):
    u = compile_unlinked(case.ptx, target, filename=f"{case.name}.ptx")
    defined = set(re.findall(r'^define [^@]*@"?ptx_func_(\w+)"?\(', u.llvm_ir, re.M))
    assert defined == _functions(case.ptx)
    assert u.obj


@pytest.mark.parametrize("target", TARGETS)
def test_recursion_is_a_real_call(target):
    """fib calls itself twice and twice calls dbl: three call sites stay calls (s_swappc_b64),
    each activation with its own stack frame for the by-value buffers."""
    asm = compile_unlinked(BY_NAME["recursion"].ptx, target, filename="recursion.ptx").asm()
    assert asm.count("s_swappc_b64") == 3


@pytest.mark.lld
@pytest.mark.parametrize("target", TARGETS)
def test_links_into_a_code_object(target):
    for case in CASES:
        obj = ptxvm.compile(case.ptx, target=target, filename=f"{case.name}.ptx")
        assert obj.kernels == ["k"], case.name


@needs_emulator
def test_one_kernel_on_the_emulator():
    got, expected = run(BY_NAME["mixed_spaces"], "emu:gfx90a")
    np.testing.assert_array_equal(got, expected)


@pytest.mark.slow
@needs_emulator
@pytest.mark.parametrize("target", ["gfx90a", "gfx1100"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_kernel_on_the_emulator(case, target):
    if case.name == "recursion":
        # The recursive functions' frames live in private memory addressed through flat
        # pointers, which the emulator has no apertures for (its documented limit).
        with pytest.raises(EmulatorLimit) as e:
            run(case, f"emu:{target}")
        assert e.value.reason == "aperture"
        return
    got, expected = run(case, f"emu:{target}")
    np.testing.assert_array_equal(got, expected, err_msg=case.doc)
