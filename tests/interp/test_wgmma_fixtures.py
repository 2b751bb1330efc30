"""wgmma GEMMs of the fixture corpus on the interpreter and the host JIT, against numpy matmul:
tests/cuda/wgmma_gemm.cu (nvcc 13 -arch=sm_90a: 128-byte swizzled K-major A and N-major B with
the descriptors advanced along K; bf16 A in registers, unswizzled K-major B, scale-d = 0 over a
NaN accumulator) and Triton's tl.dot for sm_90 (64-byte swizzled A, 128-byte swizzled N-major
B, cp.async pipelining). Inputs are small integers: every product and partial sum is exact, so
any summation order agrees. Also: the .cu translates for every AMD target (-m slow)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ptxvm

from models.fixture_kernels import kernel
from models.fixtures import FIXTURES

EXECUTORS = ("interp", "cpu")
RNG = np.random.default_rng(90)


def ints(shape, dtype=np.float16):
    return RNG.integers(-3, 4, shape).astype(dtype)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """Small integers as bf16 bit patterns (exact: the high half of their f32)."""
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


# The host JIT compiles these in 10-15 s (four and two wgmma sites of N = 64): -m slow there.
ON_CPU_SLOW = ["interp", pytest.param("cpu", marks=pytest.mark.slow)]


@pytest.mark.parametrize("executor", ON_CPU_SLOW)
def test_wgmma_gemm_f16_swizzled_descriptors(executor):
    m, n, k = 128, 128, 128
    a, b = ints((m, k)), ints((k, n))
    c = np.zeros((m, n), np.float32)
    kernel("wgmma_gemm", "wgmma_gemm_f16", "sm90a")((n // 64, m // 64), 128,
                                                    (a, b, c, np.int32(m), np.int32(n), np.int32(k)), device=executor)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_wgmma_gemm_bf16_a_in_registers(executor):
    m, n, k = 64, 64, 48
    a, b = ints((m, k), np.float32), ints((k, n), np.float32)
    c = np.zeros((m, n), np.float32)
    kernel("wgmma_gemm", "wgmma_gemm_bf16_regs", "sm90a")(
        (n // 32, m // 64), 128, (bf16_bits(a), bf16_bits(b.T.copy()), c, np.int32(m), np.int32(n), np.int32(k)),
        device=executor)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("executor", ON_CPU_SLOW)
def test_triton_sm90_matmul_wgmma(executor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k_ = ptxvm.Module.from_file(FIXTURES / "triton" / "matmul_kernel_64x64x32_sm90.ptx")["matmul_kernel"]
    m, n, k = 128, 64, 96
    a, b = ints((m, k)), ints((k, n))
    c = np.zeros((m, n), np.float32)
    scratch = np.zeros(16, np.uint8)
    k_((m // 64, n // 64), 128, (a, b, c, np.int32(m), np.int32(n), np.int32(k), np.int32(k), np.int32(n),
                                 np.int32(n), scratch, scratch), shared_mem=24576, device=executor)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


def test_a_warpgroup_short_of_threads_is_a_located_fault():
    a, b = ints((64, 64)), ints((64, 64))
    c = np.zeros((64, 64), np.float32)
    with pytest.raises(ptxvm.KernelFault, match="warpgroup") as e:
        kernel("wgmma_gemm", "wgmma_gemm_f16", "sm90a")(1, 96, (a, b, c, np.int32(64), np.int32(64), np.int32(64)),
                                                        device="interp")
    assert "wgmma_gemm.cu" in str(e.value) or e.value.line


def test_the_gemm_built_for_plain_sm_90_is_refused_where_wgmma_stands():
    """ptxas refuses wgmma outside sm_90a; so does the verifier, at each wgmma line."""
    text = (FIXTURES / "nvcc" / "sm90a" / "wgmma_gemm.ptx").read_text().replace(".target sm_90a", ".target sm_90")
    with pytest.raises(ptxvm.PtxSemanticError, match=r"wgmma\.fence\.sync\.aligned` needs `\.target sm_90a`") as e:
        ptxvm.Module(text)
    line = text.splitlines()[e.value.line - 1]
    assert "wgmma" in line


@pytest.mark.lld
@pytest.mark.slow
def test_wgmma_gemm_translates_for_every_amd_target():
    from ptxvm.amdgpu import available
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = ptxvm.load(FIXTURES / "nvcc" / "sm90a" / "wgmma_gemm.ptx")
    targets = available()
    assert set(targets) >= {"gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"}
    for target in targets:
        obj = ptxvm.compile(module, target=target)
        assert obj.kernels == list(module.kernels), target
