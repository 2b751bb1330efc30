"""Triton kernels compiled to PTX by tests/fixtures/regenerate.py.

Not a test module (no ``test_`` prefix) and not imported by the test suite:
the generated PTX under tests/fixtures/triton/ is committed instead. Compiling
needs only the ``triton`` package (no GPU).

``KERNELS`` maps fixture name -> dict(fn=..., signature=..., constexprs=...,
num_warps=..., optional num_stages, divisible_by_16 (argument names given the
``tt.divisibility`` 16 attribute, as Triton's launcher does for aligned
values) and target (default ("cuda", 80, 32))). Each kernel's docstring gives the numpy model and the launch
grid. Note: every Triton kernel gets two extra trailing pointer params
(global/profile scratch) and its dynamic shared memory size is only in the
compile metadata (recorded in MANIFEST.json by regenerate.py).
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = x + y; grid = (cdiv(n, BLOCK),)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    """Row softmax: out[r] = softmax(in[r, :n_cols]); grid = (rows,), BLOCK >= n_cols."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """C (fp32) = A (fp16, M x K) @ B (fp16, K x N) with fp32 accumulation via tl.dot;
    grid = (cdiv(M, BLOCK_M), cdiv(N, BLOCK_N))."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, N, eps, BLOCK: tl.constexpr):
    """y[r] = (x[r] - mean) / sqrt(var + eps) * w + b over the first N columns;
    grid = (rows,), BLOCK >= N."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, diff * rstd * w + b, mask=mask)


@triton.jit
def sum_reduce_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[0] += sum(x) via one tl.atomic_add per program; grid = (cdiv(n, BLOCK),)."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


@triton.jit
def max_cols_kernel(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """out[c] = max over rows of x[:, c] (2D block reduction along axis 0, looping over rows);
    grid = (cdiv(N, BLOCK_N),)."""
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.full((BLOCK_N,), -float("inf"), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=-float("inf"))
        acc = tl.maximum(acc, tl.max(x, axis=0))
    tl.store(out_ptr + cols, acc, mask=cols < N)


_MATMUL_SIG = {
    "a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32",
    "M": "i32", "N": "i32", "K": "i32",
    "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32",
    "stride_bn": "i32", "stride_cm": "i32", "stride_cn": "i32",
    "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
}

_MATMUL_SIG_UNIT = dict(_MATMUL_SIG, stride_ak="constexpr", stride_bn="constexpr",
                        stride_cn="constexpr")
_MATMUL_DIV16 = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"]

KERNELS = {
    "add_kernel": dict(
        fn=add_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                   "BLOCK": "constexpr"},
        constexprs={"BLOCK": 1024}, num_warps=4),
    "softmax_kernel": dict(
        fn=softmax_kernel,
        signature={"out_ptr": "*fp32", "in_ptr": "*fp32", "in_stride": "i32",
                   "out_stride": "i32", "n_cols": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 1024}, num_warps=4),
    # Tutorial-style specialisation (what the launcher does for unit strides and 16-aligned
    # values): unit strides as constexprs, pointers/sizes divisible by 16. This gives the
    # pipelined form: cp.async.cg (zero-fill) + ldmatrix + mma.sync.m16n8k16.
    "matmul_kernel_64x64x32": dict(
        fn=matmul_kernel, signature=_MATMUL_SIG_UNIT,
        constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32,
                    "stride_ak": 1, "stride_bn": 1, "stride_cn": 1},
        divisible_by_16=_MATMUL_DIV16, num_warps=4, num_stages=3),
    # Same specialisation for sm_90 (Triton picks sm_90a: wgmma.mma_async, fence.proxy.async).
    "matmul_kernel_64x64x32_sm90": dict(
        fn=matmul_kernel, signature=_MATMUL_SIG_UNIT,
        constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32,
                    "stride_ak": 1, "stride_bn": 1, "stride_cn": 1},
        divisible_by_16=_MATMUL_DIV16, num_warps=4, num_stages=3, target=("cuda", 90, 32)),
    # All strides runtime values, no alignment facts: plain ld.global + ldmatrix + mma.sync.
    "matmul_kernel_32x32x32": dict(
        fn=matmul_kernel, signature=_MATMUL_SIG,
        constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, num_warps=4),
    "layernorm_kernel": dict(
        fn=layernorm_kernel,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "w_ptr": "*fp32", "b_ptr": "*fp32",
                   "stride": "i32", "N": "i32", "eps": "fp32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 512}, num_warps=4),
    "sum_reduce_kernel": dict(
        fn=sum_reduce_kernel,
        signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
        constexprs={"BLOCK": 1024}, num_warps=4),
    "max_cols_kernel": dict(
        fn=max_cols_kernel,
        signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "M": "i32", "N": "i32",
                   "stride": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"},
        constexprs={"BLOCK_M": 32, "BLOCK_N": 64}, num_warps=4),
}
