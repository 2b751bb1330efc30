"""The mma forms without a matrix-core mapping (m8n8k4 .f16's four quad-pair products, mma.sp)
translate for all six AMD targets through the shared lowering (lift/ops/matrix.py: one
exchange, then an fma per element and k step, bit for bit the interpreter's rule). Their
results are tested on interp and cpu (tests/interp/test_matrix_quadpair.py, test_matrix_sparse.py)."""

from __future__ import annotations

import re
import warnings
from importlib.util import find_spec
from pathlib import Path

import pytest

import ptxvm

HANDWRITTEN = Path(__file__).resolve().parents[1] / "ptx" / "handwritten"
FIXTURES = ["mma_m8n8k4_f16.ptx", "mma_sp_f16.ptx"]
TARGETS = ["gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"]
needs_llvm = pytest.mark.skipif(find_spec("llvmlite") is None, reason="llvmlite is not installed")


def _params():
    out = []
    for name in FIXTURES:
        for target in TARGETS:
            out.append(pytest.param(name, target, id=f"{name}-{target}"))
    return out


@needs_llvm
@pytest.mark.parametrize("name,target", _params())
def test_translates_through_the_shared_lowering(name, target):
    from ptxvm.amdgpu.codegen import compile_unlinked
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        asm = compile_unlinked(HANDWRITTEN / name, target).asm()
    assert re.search(r"^\s*s_endpgm", asm, re.M)
    assert not re.search(r"^\s*v_(mfma|wmma)", asm, re.M)       # no matrix unit takes these forms
