"""On the host JIT an mma is computed once per warp (lift/ops/matrix_warp.py: the first lane to
run after the exchange computes every lane's D), on AMD by every lane (the lanes run together).
The results are tested bit for bit against the interpreter in tests/interp/test_matrix_*.py
(the "cpu" executor); this pins which lowering each target takes."""

from __future__ import annotations

from pathlib import Path

import pytest

import ptxvm
from ptxvm.jit.host import HostHooks
from ptxvm.lift.module import lift_kernel
from ptxvm.machine.image import ModuleImage
from ptxvm.machine.symbols import layout

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize("path", ["nvcc/sm80/mma_gemm.ptx", "nvcc/sm80/wmma_gemm.ptx"])
def test_the_host_computes_each_warps_product_once(path):
    module = ptxvm.load(FIXTURES / path)
    for kernel in module.kernels.values():
        text = lift_kernel(module, kernel.name, HostHooks(), layout(module, kernel, ModuleImage(), 0)).llvm_ir
        assert "mma_warp_once" in text, kernel.name
        assert "mma_lanes" in text, kernel.name


def test_amd_lanes_compute_their_own_elements():
    pytest.importorskip("llvmlite")
    from ptxvm.amdgpu.lowering import lift_module
    from ptxvm.amdgpu.targets import load_target
    text = lift_module(ptxvm.load(FIXTURES / "nvcc/sm80/mma_gemm.ptx"), load_target("gfx906"))
    assert "mma_warp_once" not in text
