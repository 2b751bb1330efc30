"""Tensor-core kernels of the fixture corpus on every executor of EXECUTORS, against numpy matmul:
tests/cuda/tensor_core.cu (nvcuda::wmma), tests/cuda/wmma_gemm.cu (the WMMA GEMM pattern in
f16, bf16, tf32, f64, u8 and s8), tests/cuda/mma_gemm.cu (mma.sync + ldmatrix + cp.async) and
the Triton tl.dot matmuls (mma.sync + ldmatrix + cp.async). Inputs are small integers, so every
product and partial sum is exact in the accumulator type and any summation order agrees."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ptxvm

from models.fixture_kernels import kernel
from models.fixtures import FIXTURES
from models.matrix_harness import EXECUTORS

RNG = np.random.default_rng(2026)
NVCC = ["sm80", "sm90"]


def ints(shape, lo=-3, hi=3, dtype=np.float16):
    return RNG.integers(lo, hi + 1, shape).astype(dtype)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("variant", NVCC)
def test_tensor_core_wmma_tile(executor, variant):
    a, b, c = ints((16, 16)), ints((16, 16)), ints((16, 16), dtype=np.float32)
    d = np.zeros((16, 16), np.float32)
    kernel("tensor_core", "wmma_16x16x16", variant)(1, 32, (a, b.T.copy(), c, d), device=executor)
    np.testing.assert_array_equal(d, a.astype(np.float64) @ b.astype(np.float64) + c)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("variant", NVCC)
def test_tensor_core_wmma_gemm(executor, variant):
    m, n, k = 64, 48, 32
    a, b = ints((m, k)), ints((k, n))
    c = np.zeros((m, n), np.float32)
    kernel("tensor_core", "wmma_gemm", variant)((n // 16, m // 64), (32, 4),
                                                (a, b, c, np.int32(m), np.int32(n), np.int32(k), np.float32(0.25)),
                                                device=executor)
    np.testing.assert_array_equal(c, 0.25 * (a.astype(np.float64) @ b.astype(np.float64)))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("variant", NVCC)
def test_tensor_core_half_accumulator_col_major_store(executor, variant):
    a, b = ints((16, 16)), ints((16, 16))
    d = np.zeros((16, 16), np.float16)
    kernel("tensor_core", "wmma_half_acc", variant)(1, 32, (a.T.copy(), b, d), device=executor)
    np.testing.assert_array_equal(d.T, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("variant", NVCC)
def test_tensor_core_tf32(executor, variant):
    # __float_to_tf32 rounds to tf32 (cvt.rna.tf32.f32): small integers are already tf32 values
    a, b = ints((16, 8), dtype=np.float32), ints((8, 16), dtype=np.float32)
    d = np.zeros((16, 16), np.float32)
    kernel("tensor_core", "wmma_tf32", variant)(1, 32, (a, b, d), device=executor)
    np.testing.assert_array_equal(d, a.astype(np.float64) @ b.astype(np.float64))


def _triton(stem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(FIXTURES / "triton" / f"{stem}.ptx")["matmul_kernel"]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_triton_matmul_64x64x32_cp_async_ldmatrix_mma(executor):
    m, n, k = 128, 64, 96
    a, b = ints((m, k)), ints((k, n))
    c = np.zeros((m, n), np.float32)
    scratch = np.zeros(16, np.uint8)
    _triton("matmul_kernel_64x64x32")((m // 64, n // 64), 128,
                                       (a, b, c, np.int32(m), np.int32(n), np.int32(k), np.int32(k),
                                        np.int32(n), np.int32(n), scratch, scratch),
                                       shared_mem=16384, device=executor)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_triton_matmul_32x32x32_masked_edges(executor):
    m, n, k = 40, 48, 40          # not multiples of the block: the masked loads and stores
    a, b = ints((m, k)), ints((k, n))
    c = np.full((m, n), -1.0, np.float32)
    scratch = np.zeros(16, np.uint8)
    _triton("matmul_kernel_32x32x32")((2, 2), 128,
                                       (a, b, c, np.int32(m), np.int32(n), np.int32(k), np.int32(k), np.int32(1),
                                        np.int32(n), np.int32(1), np.int32(n), np.int32(1), scratch, scratch),
                                       shared_mem=4096, device=executor)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))
