"""wgmma (PTX ISA 9.0 §9.7.15) translated by the generic lowering (lift/ops/wgmma.py) and run on
the AMD ISA emulator, against numpy matmul on small integers (exact in any summation order):
tests/cuda/wgmma_gemm.cu's 128-byte-swizzled f16 GEMM and Triton's sm_90 tl.dot. Skipped where
the emulator or clang is missing; slow.

Emulator gaps met here (not attributed to ptxvm):
* gfx90a: the lowering's local arrays live in MUBUF scratch, which the emulator does not model;
* the bf16 A-in-registers kernel: the warp's A is rebuilt through a lane-indexed table whose
  dynamic register indexing becomes `s_set_gpr_idx_on` (gfx942) / `v_movrels_b32` (gfx1100),
  which the emulator cannot compile.
"""

from __future__ import annotations

import warnings
from importlib.util import find_spec

import numpy as np
import pytest

import ptxvm
from ptxvm.driver.executors import emu

from models.fixture_kernels import kernel
from models.fixtures import FIXTURES

MISSING = emu.why_unavailable() or next(
    (f"{p} is not installed" for p in ("llvmlite", "ziglang") if find_spec(p) is None), None)
pytestmark = [pytest.mark.slow, pytest.mark.lld,
              pytest.mark.skipif(MISSING is not None, reason=f"emu executors unavailable: {MISSING}")]

TARGETS = ["gfx942", "gfx1100"]
RNG = np.random.default_rng(942)


def ints(shape):
    return RNG.integers(-3, 4, shape).astype(np.float16)


@pytest.mark.parametrize("target", TARGETS)
def test_wgmma_gemm_f16_on_the_emulator(target):
    m, n, k = 64, 64, 128
    a, b = ints((m, k)), ints((k, n))
    c = np.zeros((m, n), np.float32)
    kernel("wgmma_gemm", "wgmma_gemm_f16", "sm90a")((n // 64, m // 64), 128,
                                                    (a, b, c, np.int32(m), np.int32(n), np.int32(k)),
                                                    device=f"emu:{target}")
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("target", ["gfx942"])
def test_triton_sm90_matmul_on_the_emulator(target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k_ = ptxvm.Module.from_file(FIXTURES / "triton" / "matmul_kernel_64x64x32_sm90.ptx")["matmul_kernel"]
    m, n, k = 128, 64, 96
    a, b = ints((m, k)), ints((k, n))
    c = np.zeros((m, n), np.float32)
    scratch = np.zeros(16, np.uint8)
    k_((m // 64, n // 64), 128, (a, b, c, np.int32(m), np.int32(n), np.int32(k), np.int32(k), np.int32(n),
                                 np.int32(n), scratch, scratch), shared_mem=24576, device=f"emu:{target}")
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))
