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


# ---------------------------------------------------------------- tests/cuda/wmma_gemm.cu
# kernel: (tile m, n, k), layouts of A, B, C, D, memory type, accumulator type, alpha, beta
WMMA_GEMMS = {
    "wmma_gemm_f16": ((16, 16, 16), ("row", "col", "row", "col"), np.float16, np.float32, 2.0, -1.0),
    "wmma_gemm_f16_m32n8k16": ((32, 8, 16), ("col", "row", "row", "row"), np.float16, np.float16, 2.0, -1.0),
    "wmma_gemm_bf16": ((8, 32, 16), ("row", "row", "col", "row"), "bf16", np.float32, 0.5, 3.0),
    "wmma_gemm_tf32": ((16, 16, 8), ("row", "col", "row", "row"), np.float32, np.float32, -2.0, 1.0),
    "wmma_gemm_f64": ((8, 8, 4), ("row", "row", "row", "row"), np.float64, np.float64, 0.5, 2.0),
    "wmma_gemm_u8": ((16, 16, 16), ("row", "col", "row", "row"), np.uint8, np.int32, 3, -2),
    "wmma_gemm_s8": ((32, 8, 16), ("row", "row", "row", "col"), np.int8, np.int32, -1, 4),
}


def _stored(mat, layout, ld, fill):
    """``mat`` in a flat buffer with ``layout`` and leading dimension ``ld``; the rest ``fill``."""
    rows, cols = mat.shape
    flat = np.full((rows if layout == "row" else cols) * ld, fill, dtype=mat.dtype)
    view = flat.reshape(-1, ld)
    if layout == "row":
        view[:, :cols] = mat
    else:
        view[:, :rows] = mat.T
    return flat


def _values(shape, mem):
    if mem in (np.uint8,):
        return RNG.integers(0, 16, shape).astype(np.float64)
    return RNG.integers(-3, 4, shape).astype(np.float64)


def _as_mem(values, mem):
    if mem == "bf16":
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return values.astype(mem)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("variant", NVCC)
@pytest.mark.parametrize("name", sorted(WMMA_GEMMS))
def test_wmma_gemm_pattern(executor, variant, name):
    (tm, tn, tk), lay, mem, acc, alpha, beta = WMMA_GEMMS[name]
    m, n, k = 4 * tm, 2 * tn, 3 * tk
    a, b, c = _values((m, k), mem), _values((k, n), mem), _values((m, n), np.int8)
    pad = 16
    ld = {"a": (k if lay[0] == "row" else m) + pad, "b": (n if lay[1] == "row" else k) + pad,
          "c": (n if lay[2] == "row" else m) + pad, "d": (n if lay[3] == "row" else m) + pad}
    sentinel = 77
    bufs = [_stored(_as_mem(a, mem), lay[0], ld["a"], 0), _stored(_as_mem(b, mem), lay[1], ld["b"], 0),
            _stored(c.astype(acc), lay[2], ld["c"], 0), _stored(np.zeros((m, n), acc), lay[3], ld["d"], sentinel)]
    # a half by-value parameter is a 2-byte .b8 array in nvcc's PTX: pass its bytes
    scalar = (lambda v: np.array(v, np.float16)) if acc == np.float16 else acc
    if acc == np.int32:          # nvcc declares int parameters .u32: pass the two's complement bits
        scalar = lambda v: np.uint32(v & 0xFFFFFFFF)      # noqa: E731
    kernel("wmma_gemm", name, variant)((n // tn, m // (2 * tm)), (32, 2),
                                      (*bufs, *(np.int32(ld[r]) for r in "abcd"), np.int32(k),
                                       scalar(alpha), scalar(beta)), device=executor)
    expect = (alpha * (a @ b) + beta * c).astype(acc)
    np.testing.assert_array_equal(bufs[3], _stored(expect, lay[3], ld["d"], sentinel))


# ---------------------------------------------------------------- tests/cuda/mma_gemm.cu

@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("variant", NVCC)
def test_mma_gemm_cp_async_ldmatrix_double_buffered(executor, variant):
    m, n, k = 64, 96, 128
    a, b = ints((m, k)), ints((k, n))
    c = np.zeros((m, n), np.float32)
    kernel("mma_gemm", "mma_gemm_f16", variant)((n // 32, m // 32), 128, (a, b, c, np.int32(m), np.int32(n),
                                                                         np.int32(k)), device=executor)
    np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("variant", NVCC)
def test_mma_gemm_s8_from_global_registers(executor, variant):
    m, n, k = 32, 16, 96
    a = RNG.integers(-128, 128, (m, k)).astype(np.int8)
    bt = RNG.integers(-128, 128, (n, k)).astype(np.int8)
    c = np.zeros((m, n), np.int32)
    kernel("mma_gemm", "mma_gemm_s8_satfinite", variant)((n // 8, m // 16), 32, (a, bt, c, np.int32(m), np.int32(n),
                                                                                  np.int32(k)), device=executor)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ bt.T.astype(np.int64))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_stmatrix_roundtrip_sm90(executor):
    src = ints((16, 16))
    out = np.zeros((16, 16), np.float16)
    kernel("mma_gemm", "stmatrix_roundtrip", "sm90")(1, 32, (src, out), device=executor)
    expect = src.astype(np.float64) + 1
    for i in (0, 8):
        for j in (0, 8):
            expect[i:i + 8, j:j + 8] = expect[i:i + 8, j:j + 8].T.copy()
    np.testing.assert_array_equal(out, expect.astype(np.float16))
