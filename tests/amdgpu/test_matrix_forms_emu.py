"""The mma forms of the shared lowering only (m8n8k4 .f16's quad-pair products, mma.sp),
translated and executed on the AMD ISA emulator: equal to the independent models (exact small
values, so every summation order agrees). Two PTX warps per launch (a wave64 with an inactive
half crashes the emulator's ds_bpermute: tests/amdgpu/test_matrix_emu.py). Skipped where the
emulator or its toolchain is missing; slow.

Measured with the emulator of /work/shared/tools/amdgpu-emu: every case here skips today on an
emulator gap, each named: the shared lowering's per-lane matrix arrays become MUBUF scratch on
gfx90a (the emulator drops swizzled scratch stores), `s_set_gpr_idx_on` on gfx942 and
`v_movrels_b32` on gfx1100 (their pseudocode does not compile in the emulator). They run as
soon as the emulator does."""

from __future__ import annotations

from importlib.util import find_spec

import numpy as np
import pytest

import ptxvm
from ptxvm.driver.executors import emu

from interp.test_matrix_quadpair import _case as quad_case
from interp.test_matrix_quadpair import _result as quad_result
from interp.test_matrix_sparse import _case as sparse_case
from interp.test_matrix_sparse import _result as sparse_result

MISSING = emu.why_unavailable() or next(
    (f"{p} is not installed" for p in ("llvmlite", "ziglang") if find_spec(p) is None), None)
pytestmark = [pytest.mark.slow, pytest.mark.lld,
              pytest.mark.skipif(MISSING is not None, reason=f"emu executors unavailable: {MISSING}")]


def _run(text, arrays, target):
    try:
        ptxvm.Module(text)["k"](1, 64, tuple(arrays), device=f"emu:{target}")
    except emu.EmulatorLimit as e:
        pytest.skip(f"emulator limit: {e}")


# gfx1100: LLVM 22 aborts on the quad-pair kernel (tests/amdgpu/test_matrix_forms_amd.py)
@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("al,bl,dt,ct", [("row", "col", "f32", "f32"), ("col", "row", "f32", "f16"),
                                         ("row", "row", "f16", "f16")])
def test_quad_pair_products_on_the_emulator(target, al, bl, dt, ct):
    text, arrays, expect = quad_case(al, bl, dt, ct, np.random.default_rng(70))
    _run(text, arrays, target)
    np.testing.assert_array_equal(quad_result(arrays, dt), expect)


@pytest.mark.parametrize("target", ["gfx90a", "gfx942", "gfx1100"])
@pytest.mark.parametrize("form,sel,var", [
    (("m16n8k16", "f16", "f16", "f32", 80), 1, "sp::ordered_metadata"),
    (("m16n8k32", "bf16", "bf16", "f32", 80), 1, "sp"),
    (("m16n8k16", "tf32", "tf32", "f32", 80), 0, "sp"),
    (("m16n8k64", "s8", "u8", "s32", 80), 0, "sp::ordered_metadata"),
], ids=lambda v: str(v))
def test_mma_sp_on_the_emulator(target, form, sel, var):
    text, arrays, expect = sparse_case(form, sel, var, np.random.default_rng(89))
    _run(text, arrays, target)
    np.testing.assert_array_equal(sparse_result(arrays, form[3]), expect)
