"""numba-cuda kernels compiled to PTX by tests/fixtures/regenerate.py.

Not a test module (no ``test_`` prefix) and not imported by the test suite:
the generated PTX under tests/fixtures/numba/ is committed instead. Importing
this module needs numba-cuda; compiling needs NVRTC/NVVM (no GPU).

``KERNELS`` maps fixture name -> (kernel function, list of signature strings
tried in order). Each kernel's docstring gives the numpy model.
"""

import math

from numba import cuda, float32, int32

BLOCK = 256


@cuda.jit
def vector_add(a, b, c):
    """c[i] = a[i] + b[i] for i < c.size."""
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def saxpy_grid_stride(alpha, x, y):
    """y[i] = alpha * x[i] + y[i], grid-stride loop."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, y.size, stride):
        y[i] = alpha * x[i] + y[i]


@cuda.jit
def block_sum_shared(inp, out):
    """out[blockIdx.x] = sum of the block's BLOCK-element slice (zero-padded); blockDim == 256."""
    s = cuda.shared.array(BLOCK, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    s[t] = inp[i] if i < inp.size else float32(0.0)
    cuda.syncthreads()
    stride = BLOCK // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def atomics(vals, fvals, counters, fsum, hist):
    """counters[0] += 1 per element, counters[1] = max(vals), counters[2] = min(vals),
    counters[3] |= 1 << (i % 31), fsum[0] += fvals[i], hist[vals[i] % 16] += 1 (vals >= 0)."""
    i = cuda.grid(1)
    if i < vals.size:
        v = vals[i]
        cuda.atomic.add(counters, 0, 1)
        cuda.atomic.max(counters, 1, v)
        cuda.atomic.min(counters, 2, v)
        cuda.atomic.or_(counters, 3, int32(1) << (i % 31))
        cuda.atomic.add(fsum, 0, fvals[i])
        cuda.atomic.add(hist, v % 16, 1)


@cuda.jit
def shared_histogram(vals, hist):
    """hist[b] += number of vals[i] with vals[i] % 32 == b, via a shared-memory histogram."""
    sh = cuda.shared.array(32, dtype=int32)
    t = cuda.threadIdx.x
    if t < 32:
        sh[t] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < vals.size:
        cuda.atomic.add(sh, vals[i] % 32, 1)
    cuda.syncthreads()
    if t < 32:
        cuda.atomic.add(hist, t, sh[t])


@cuda.jit
def matmul_2d(a, b, c):
    """c = a @ b with a 2D grid, one thread per output element."""
    row, col = cuda.grid(2)
    if row < c.shape[0] and col < c.shape[1]:
        acc = float32(0.0)
        for k in range(a.shape[1]):
            acc += a[row, k] * b[k, col]
        c[row, col] = acc


@cuda.jit
def math_funcs(x, out):
    """out[i, :] = sin, exp, sqrt(|x|), log(|x| + 1), tanh of x[i]."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = math.sin(v)
        out[i, 1] = math.exp(v)
        out[i, 2] = math.sqrt(abs(v))
        out[i, 3] = math.log(abs(v) + 1.0)
        out[i, 4] = math.tanh(v)


@cuda.jit
def warp_sum_shfl(inp, out):
    """out[warp] = sum of the 32 values of each warp via shfl_down_sync."""
    i = cuda.grid(1)
    v = inp[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


KERNELS = {
    "vector_add": (vector_add, ["void(float32[:], float32[:], float32[:])"]),
    "saxpy_grid_stride": (saxpy_grid_stride, ["void(float32, float32[:], float32[:])"]),
    "block_sum_shared": (block_sum_shared, ["void(float32[:], float32[:])"]),
    "atomics": (atomics, ["void(int32[:], float32[:], int32[:], float32[:], int32[:])"]),
    "shared_histogram": (shared_histogram, ["void(int32[:], int32[:])"]),
    "matmul_2d": (matmul_2d, ["void(float32[:,:], float32[:,:], float32[:,:])"]),
    "math_funcs": (math_funcs, ["void(float32[:], float32[:,:])"]),
    "warp_sum_shfl": (warp_sum_shfl, ["void(float32[:], float32[:])"]),
}
