"""Triton's @triton.jit kernels on ptxvm (issue 18 item 2), with the real Triton: compiled by
Triton's NVIDIA backend for sm_80 with no GPU, launched on the interpreter and the host JIT,
checked against numpy. Exact where the math is exact (integer, f32 add/multiply, f16 products
summed in f32 on small integers); math that Triton lowers to `.approx` instructions (exp,
rsqrt) within a relative 2^-20 of numpy and bit-equal between the executors."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

triton = pytest.importorskip("triton")
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # Triton 3.9 warns when unset

import ptxvm  # noqa: E402
import ptxvm.triton  # noqa: E402
from ptxvm.triton import TritonError  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import kernels as K  # noqa: E402


@pytest.fixture
def on(executor):
    ptxvm.triton.activate(device=executor)
    yield executor
    ptxvm.triton.deactivate()


def test_vector_add(on):
    n = 5000
    x, y = np.random.default_rng(1).standard_normal((2, n)).astype(np.float32)
    out = np.zeros(n, np.float32)
    K.add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    assert np.array_equal(out, x + y)


def test_vector_add_on_device_arrays_and_a_grid_lambda(on):
    n = 3000
    x = ptxvm.to_device(np.arange(n, dtype=np.float32))
    out = ptxvm.zeros(n, np.float32)
    K.add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, x, out, n, BLOCK=256)
    assert np.array_equal(out.copy_to_host(), 2 * np.arange(n, dtype=np.float32))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_fused_softmax(on):
    x = np.random.default_rng(2).standard_normal((6, 100)).astype(np.float32)
    out = np.zeros_like(x)
    K.softmax_kernel[(6,)](out, x, x.strides[0] // 4, out.strides[0] // 4, 100, BLOCK=128, num_warps=4)
    np.testing.assert_allclose(out, _softmax(x), rtol=2 ** -20, atol=0)


@pytest.mark.parametrize("shape", [(32, 32, 32), (48, 40, 72)])
def test_matmul_with_tl_dot(on, shape):
    """tl.dot on f16 is mma.sync + ldmatrix on sm_80; small integers keep every sum exact."""
    M, N, Kd = shape
    rng = np.random.default_rng(3)
    a = rng.integers(-3, 4, (M, Kd)).astype(np.float16)
    b = rng.integers(-3, 4, (Kd, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    K.matmul_kernel[grid](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, num_warps=4)
    assert np.array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


def test_layer_norm_forward(on):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 96)).astype(np.float32)
    w, b = rng.standard_normal((2, 96)).astype(np.float32)
    y = np.zeros_like(x)
    K.layernorm_kernel[(4,)](x, y, w, b, 96, 96, 1e-5, BLOCK=128)
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1, keepdims=True)
    ref = (x64 - mean) / np.sqrt(((x64 - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(y, ref, rtol=2 ** -18, atol=2 ** -20)


def test_block_reduction(on):
    x = np.random.default_rng(5).integers(-1000, 1000, 4096).astype(np.int32)
    out = np.zeros(4, np.int32)
    K.sum_kernel[(4,)](x, out, 4096, BLOCK=1024)
    assert np.array_equal(out, x.reshape(4, 1024).sum(axis=1))


def test_atomic_histogram(on):
    x = np.random.default_rng(6).integers(0, 16, 2000).astype(np.int32)
    hist = np.zeros(16, np.int32)
    K.atomic_hist_kernel[(triton.cdiv(2000, 512),)](x, hist, 2000, BLOCK=512)
    assert np.array_equal(hist, np.bincount(x, minlength=16))


def test_two_dimensional_grid_transpose(on):
    x = np.arange(50 * 70, dtype=np.float32).reshape(50, 70)
    y = np.zeros((70, 50), np.float32)
    K.transpose2d_kernel[(triton.cdiv(50, 16), triton.cdiv(70, 32))](x, y, 50, 70, BM=16, BN=32)
    assert np.array_equal(y, x.T)


def test_masked_loads_with_other(on):
    x = np.linspace(-4, 4, 1000, dtype=np.float32)
    out = np.full(1024, 7, np.float32)
    K.relu_scale_kernel[(1,)](x, out, 1000, 2.0, BLOCK=1024)
    assert np.array_equal(out[:1000], np.maximum(x, 0) * 2) and np.all(out[1000:] == 7)


def test_autotuned_kernel(on):
    n = 3000
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    K.tuned_add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, x, out, n)
    assert np.array_equal(out, 2 * x)
    assert K.tuned_add_kernel.best_config.kwargs["BLOCK"] in (128, 256)


def test_executors_agree_bit_for_bit_on_approximate_math():
    x = np.random.default_rng(7).standard_normal((3, 64)).astype(np.float32)
    outs = []
    for device in ("interp", "cpu"):
        ptxvm.triton.activate(device=device)
        out = np.zeros_like(x)
        K.softmax_kernel[(3,)](out, x, 64, 64, 64, BLOCK=64)
        outs.append(out.view(np.uint32))
    ptxvm.triton.deactivate()
    assert np.array_equal(*outs)


# ------------------------------------------------------------------ bad input

def test_strided_numpy_view_is_refused_clearly(on):
    x = np.zeros((10, 20), np.float32)
    with pytest.raises(TritonError, match="argument `x_ptr` is a strided numpy view"):
        K.add_kernel[(1,)](x[:, ::2], x[:, ::2], np.zeros(100, np.float32), 100, BLOCK=128)


def test_thread_block_clusters_are_refused_clearly():
    """Clusters (num_ctas > 1) exist on sm_90: Triton compiles them, ptxvm refuses to launch
    them; on sm_80 Triton's own refusal comes as a ptxvm error."""
    x = np.zeros(128, np.float32)
    try:
        ptxvm.triton.activate(arch=90)
        with pytest.raises(TritonError, match="num_ctas=2: thread-block clusters are not run by ptxvm"):
            K.add_kernel[(1,)](x, x, x, 128, BLOCK=128, num_ctas=2)
        ptxvm.triton.activate(arch=80)
        with pytest.raises(TritonError, match="Triton refuses the kernel's options for sm_80: num_ctas > 1"):
            K.add_kernel[(1,)](x, x, x, 128, BLOCK=128, num_ctas=2)
    finally:
        ptxvm.triton.deactivate()


def test_unknown_executor_is_refused_at_activation():
    with pytest.raises(ptxvm.LaunchError):
        ptxvm.triton.activate(device="no-such-executor")


def test_environment_switch_runs_an_unmodified_script(tmp_path):
    """PTXVM_TRITON=1: Triton's own backend discovery finds ptxvm's driver (the entry point)."""
    script = tmp_path / "plain.py"
    script.write_text(textwrap.dedent("""\
        import numpy as np, triton, triton.language as tl
        @triton.jit
        def triple(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3, mask=mask)
        x = np.arange(100, dtype=np.int32); out = np.zeros(100, np.int32)
        triple[(1,)](x, out, 100, BLOCK=128)
        print("ok" if (out == 3 * x).all() else "wrong")
        """))
    env = {**os.environ, "PTXVM_TRITON": "1", "TRITON_DEFAULT_FP_FUSION": "1"}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert r.stdout.strip() == "ok", r.stderr[-2000:]
