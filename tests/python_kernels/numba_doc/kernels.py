"""Kernels in the style of numba's CUDA documentation, each with an independent numpy model.

Importing this module needs numba (``pip install 'ptxvm[numba]'``); the kernels are built with
``ptxvm.numba.jit`` and their bodies use numba's ``cuda`` namespace unchanged. ``CASES`` lists
one :class:`Case` per kernel: how to make its arguments at a size ``n`` (threads), the launch
configuration, and the numpy model of what the arguments hold afterwards. The tests
(tests/driver/test_numba_frontdoor.py) and benchmarks/bench_frontdoors.py both use it; the models
never call the kernels.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32, int32

from ptxvm.numba import jit

TPB = 16            # matmul tile (numba docs' fast_matmul)
BLOCK = 128
HALO = BLOCK + 2     # numba needs a shared array's shape as a global constant


@dataclass(frozen=True)
class Case:
    name: str
    kernel: object                                  # a ptxvm.numba Dispatcher
    make: Callable[[np.random.Generator, int], tuple]   # -> the kernel's arguments
    config: Callable[[tuple], tuple]                # args -> (grid, block[, stream, shared])
    model: Callable[[tuple], tuple]                 # inputs (copies) -> expected arguments after
    rtol: float = 0.0                               # 0: bit-exact
    simulator: bool = True                          # numba's CUDA simulator can run it
    slow: bool = False                              # left to `-m slow` in the default test run


def blocks(n: int, tpb: int = BLOCK) -> int:
    return max(1, -(-n // tpb))


# 1. The first kernel of numba's docs: one thread per element, guarded.
@jit
def vadd(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


# 2. Grid-stride loop (numba docs: "grid-stride loops"), fewer threads than elements.
@jit
def saxpy_stride(alpha, x, y):
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        y[i] = alpha * x[i] + y[i]


# 3. Shared-memory tiled matmul (numba docs' fast_matmul).
@jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


# 4. Histogram with atomics (numba docs: cuda.atomic.add).
@jit
def histogram(x, xmin, xmax, hist):
    nbins = hist.shape[0]
    width = (xmax - xmin) / nbins
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        b = int32((x[i] - xmin) / width)
        if b >= 0 and b < nbins:
            cuda.atomic.add(hist, b, 1)


# 5. Warp-shuffle reduction: each warp's sum lands in its lane 0.
@jit
def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else int32(0)
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


# 6. 2-D arrays with cuda.grid(2); also run on F-order and strided views (cases 7, 8).
@jit
def scale2d(x, out):
    i, j = cuda.grid(2)
    if i < x.shape[0] and j < x.shape[1]:
        out[i, j] = x[i, j] * 3 + i - j


# 9. 3-D arrays with cuda.grid(3).
@jit
def grid3d(x, out):
    i, j, k = cuda.grid(3)
    if i < x.shape[0] and j < x.shape[1] and k < x.shape[2]:
        out[i, j, k] = x[i, j, k] + 100 * i + 10 * j + k


# 10. A cuda.jit(device=True) helper called from a kernel.
@cuda.jit(device=True)
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


@jit
def clamp_kernel(x, lo, hi, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = clamp(x[i], lo, hi)


# 11. cuda.local.array: each thread sorts its 5-element window and keeps the median.
@jit
def median5(x, out):
    i = cuda.grid(1)
    if i < out.size:
        w = cuda.local.array(5, dtype=float32)
        for k in range(5):
            w[k] = x[i + k]
        for a in range(5):
            for b in range(4 - a):
                if w[b] > w[b + 1]:
                    t = w[b]
                    w[b] = w[b + 1]
                    w[b + 1] = t
        out[i] = w[2]


# 12. Block reduction in shared memory with syncthreads (tree), one partial per block.
@jit
def block_sum(x, partial):
    s = cuda.shared.array(BLOCK, dtype=int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    step = BLOCK // 2
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


# 13. Dynamic shared memory (launch's 4th slot): reverse each block's slice.
@jit
def block_reverse(x):
    s = cuda.shared.array(0, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i]
    cuda.syncthreads()
    x[i] = s[cuda.blockDim.x - 1 - t]


# 14. Warp votes: ballot, all, any.
@jit
def votes(x, ballot, all_pos, any_big):
    i = cuda.grid(1)
    w = i // 32
    v = x[i]
    b = cuda.ballot_sync(0xFFFFFFFF, v > 0)
    a = cuda.all_sync(0xFFFFFFFF, v > -50)
    n = cuda.any_sync(0xFFFFFFFF, v > 90)
    if cuda.laneid == 0:
        ballot[w] = b
        all_pos[w] = a
        any_big[w] = n


# 15. Math library (float64): sin, exp, sqrt, hypot.
@jit
def mathfuncs(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.sin(v) * math.exp(-abs(v)) + math.sqrt(abs(v)) + math.hypot(v, 1.5)


# 16. complex128 arrays and a complex scalar.
@jit
def cmul(z, w, c, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = z[i] * w[i] + c


# 17. Prefix sum in a block (Hillis-Steele, double buffer in shared memory).
@jit
def block_scan(x, out):
    s = cuda.shared.array((2, BLOCK), dtype=int32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[0, t] = x[i]
    cuda.syncthreads()
    src = 0
    off = 1
    while off < BLOCK:
        v = s[src, t]
        if t >= off:
            v += s[src, t - off]
        s[1 - src, t] = v
        cuda.syncthreads()
        src = 1 - src
        off *= 2
    out[i] = s[src, t]


# 18. Atomics max / compare-and-swap, int64 scalars with negative values.
@jit
def atomic_max_cas(x, offset, best, flag, winners):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.max(best, 0, x[i] + offset)
        # Exactly one thread finds the flag unset, whatever the order threads arrive in.
        if cuda.atomic.compare_and_swap(flag, -1, 7) == -1:
            cuda.atomic.add(winners, 0, 1)


# 19. A tuple argument and a bool scalar.
@jit
def tuple_args(x, coef, negate, out):
    i = cuda.grid(1)
    if i < x.size:
        v = coef[0] * x[i] + coef[1]
        out[i] = -v if negate else v


# 20. A 1-D three-point stencil with halo cells in shared memory.
@jit
def stencil3(x, out):
    s = cuda.shared.array(HALO, dtype=float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    n = x.size
    s[t + 1] = x[i] if i < n else 0
    if t == 0:
        s[0] = x[i - 1] if i >= 1 else 0
    if t == BLOCK - 1:
        s[BLOCK + 1] = x[i + 1] if i + 1 < n else 0
    cuda.syncthreads()
    if i < n:
        out[i] = s[t] + s[t + 1] * 2 + s[t + 2]


# -- argument makers and numpy models ---------------------------------------------------------

def _f32(rng, n, lo=-10, hi=10):
    return rng.integers(lo, hi, n).astype(np.float32)


def _matmul_make(rng, n):
    m = max(TPB, int(round(math.sqrt(n))) // TPB * TPB)
    A = rng.integers(-4, 5, (m, m)).astype(np.float32)
    B = rng.integers(-4, 5, (m, m)).astype(np.float32)
    return A, B, np.zeros((m, m), np.float32)


def _side(n):
    return max(2, int(round(math.sqrt(n))))


def _scale_model(a):
    x = a[0]
    i, j = np.indices(x.shape)
    return x, (x * 3 + i - j).astype(x.dtype)


def _2d_config(a):
    s = a[0].shape
    return (blocks(s[0], 16), blocks(s[1], 16)), (16, 16)


def _strided_make(rng, n):
    s = _side(n)
    base = rng.integers(-9, 9, (2 * s, 3 * s)).astype(np.float64)
    outbase = np.zeros((s, 2 * s))
    return base[::2, ::-3], outbase[:, 1::2]


def _grid3d_make(rng, n):
    s = max(2, int(round(n ** (1 / 3))))
    return rng.integers(0, 9, (s, s + 1, s + 2)).astype(np.int64), np.zeros((s, s + 1, s + 2), np.int64)


def _grid3d_model(a):
    x = a[0]
    i, j, k = np.indices(x.shape)
    return x, x + 100 * i + 10 * j + k


def _hist_make(rng, n):
    return rng.uniform(0, 10, 4 * n).astype(np.float32), np.float32(0), np.float32(10), np.zeros(16, np.int32)


def _hist_model(a):
    x, lo, hi, _ = a
    width = np.float32((hi - lo) / np.float32(16))
    b = ((x - lo) / width).astype(np.int32)
    return x, lo, hi, np.bincount(b[(b >= 0) & (b < 16)], minlength=16).astype(np.int32)


def _warp_make(rng, n):
    # one sum per warp of the launch (blocks(n) blocks of BLOCK threads)
    return rng.integers(-1000, 1000, n).astype(np.int32), np.zeros(blocks(n) * BLOCK // 32, np.int32)


def _warp_model(a):
    x, out = a
    pad = np.zeros(out.size * 32, np.int32)
    pad[:x.size] = x
    return x, pad.reshape(-1, 32).sum(axis=1).astype(np.int32)


def _median_make(rng, n):
    return rng.normal(size=n + 4).astype(np.float32), np.zeros(n, np.float32)


def _median_model(a):
    x, out = a
    win = np.lib.stride_tricks.sliding_window_view(x, 5)[:out.size]
    return x, np.median(win, axis=1).astype(np.float32)


def _bsum_make(rng, n):
    return rng.integers(-100, 100, n).astype(np.int32), np.zeros(blocks(n), np.int32)


def _bsum_model(a):
    x, p = a
    pad = np.zeros(p.size * BLOCK, np.int32)
    pad[:x.size] = x
    return x, pad.reshape(-1, BLOCK).sum(axis=1).astype(np.int32)


def _rev_make(rng, n):
    return (rng.normal(size=blocks(n) * BLOCK).astype(np.float32),)


def _votes_make(rng, n):
    w = blocks(n) * BLOCK // 32       # every warp of the launch reads 32 elements
    x = rng.integers(-60, 100, w * 32).astype(np.int32)
    return x, np.zeros(w, np.uint32), np.zeros(w, np.int32), np.zeros(w, np.int32)


def _votes_model(a):
    x = a[0].reshape(-1, 32)
    ballot = ((x > 0).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
    return a[0], ballot, (x > -50).all(axis=1).astype(np.int32), (x > 90).any(axis=1).astype(np.int32)


def _math_model(a):
    x = a[0]
    return x, np.sin(x) * np.exp(-np.abs(x)) + np.sqrt(np.abs(x)) + np.hypot(x, 1.5)


def _cmul_make(rng, n):
    z = (rng.integers(-5, 5, n) + 1j * rng.integers(-5, 5, n)).astype(np.complex128)
    w = (rng.integers(-5, 5, n) + 1j * rng.integers(-5, 5, n)).astype(np.complex128)
    return z, w, complex(0.5, -2.0), np.zeros(n, np.complex128)


def _scan_make(rng, n):
    return rng.integers(-50, 50, blocks(n) * BLOCK).astype(np.int32), np.zeros(blocks(n) * BLOCK, np.int32)


def _amax_make(rng, n):
    return (rng.integers(-10**6, 10**6, n).astype(np.int64), -3_000_000_000, np.full(1, -2**62, np.int64),
            np.full(1, -1, np.int64), np.zeros(1, np.int64))


def _amax_model(a):
    x, off = a[0], a[1]
    return x, off, np.array([x.max() + off], np.int64), np.array([7], np.int64), np.array([1], np.int64)


def _tuple_make(rng, n):
    return _f32(rng, n), (np.float32(2.5), np.float32(-1.0)), True, np.zeros(n, np.float32)


def _tuple_model(a):
    x, (c0, c1), neg, _ = a
    v = (c0 * x + c1).astype(np.float32)
    return x, (c0, c1), neg, -v if neg else v


def _stencil_model(a):
    x = a[0]
    p = np.concatenate([[0], x, [0]]).astype(np.float32)
    return x, (p[:-2] + p[1:-1] * 2 + p[2:]).astype(np.float32)


def _1d(a, i=-1):
    return blocks(a[i].size), BLOCK


CASES: tuple[Case, ...] = (
    Case("vadd", vadd, lambda r, n: (_f32(r, n), _f32(r, n), np.zeros(n, np.float32)),
         lambda a: _1d(a), lambda a: (a[0], a[1], a[0] + a[1])),
    Case("saxpy_grid_stride", saxpy_stride, lambda r, n: (np.float32(1.5), _f32(r, 4 * n), _f32(r, 4 * n)),
         lambda a: (blocks(a[1].size // 4), BLOCK), lambda a: (a[0], a[1], (a[0] * a[1] + a[2]).astype(np.float32))),
    Case("shared_matmul", fast_matmul, _matmul_make,
         lambda a: ((a[0].shape[0] // TPB,) * 2, (TPB, TPB)), lambda a: (a[0], a[1], a[0] @ a[1])),
    Case("atomic_histogram", histogram, _hist_make, lambda a: (blocks(a[0].size // 4), BLOCK), _hist_model),
    Case("warp_shuffle_sum", warp_sum, _warp_make, lambda a: (blocks(a[0].size), BLOCK), _warp_model,
         simulator=False),
    Case("array_2d", scale2d, lambda r, n: (_f32(r, _side(n) ** 2).reshape(_side(n), -1),
                                            np.zeros((_side(n),) * 2, np.float32)),
         _2d_config, _scale_model),
    Case("array_2d_fortran", scale2d, lambda r, n: (np.asfortranarray(_f32(r, _side(n) ** 2).reshape(_side(n), -1)),
                                                    np.zeros((_side(n),) * 2, np.float32, order="F")),
         _2d_config, _scale_model),
    Case("array_2d_strided_views", scale2d, _strided_make, _2d_config, _scale_model),
    Case("array_3d", grid3d, _grid3d_make,
         lambda a: (tuple(blocks(d, 8) for d in a[0].shape), (8, 8, 8)), _grid3d_model),
    Case("device_function", clamp_kernel, lambda r, n: (_f32(r, n), np.float32(-3), np.float32(4), np.zeros(n, np.float32)),
         lambda a: _1d(a), lambda a: (a[0], a[1], a[2], np.clip(a[0], a[1], a[2]))),
    Case("local_array_median", median5, _median_make, lambda a: _1d(a), _median_model),
    Case("shared_block_sum", block_sum, _bsum_make, lambda a: (a[1].size, BLOCK), _bsum_model),
    Case("dynamic_shared_reverse", block_reverse, _rev_make, lambda a: (a[0].size // BLOCK, BLOCK, 0, BLOCK * 4),
         lambda a: (a[0].reshape(-1, BLOCK)[:, ::-1].reshape(-1),)),
    Case("warp_votes", votes, _votes_make, lambda a: (blocks(a[0].size), BLOCK), _votes_model, simulator=False),
    Case("math_float64", mathfuncs, lambda r, n: (r.normal(0, 4, n), np.zeros(n)), lambda a: _1d(a), _math_model,
         rtol=1e-13),
    Case("complex128", cmul, _cmul_make, lambda a: _1d(a), lambda a: (a[0], a[1], a[2], a[0] * a[1] + a[2])),
    Case("block_scan", block_scan, _scan_make, lambda a: (a[0].size // BLOCK, BLOCK),
         lambda a: (a[0], np.cumsum(a[0].reshape(-1, BLOCK), axis=1, dtype=np.int32).reshape(-1))),
    Case("atomic_max_cas_int64", atomic_max_cas, _amax_make, lambda a: _1d(a, 0), _amax_model),
    Case("tuple_and_bool_args", tuple_args, _tuple_make, lambda a: _1d(a), _tuple_model),
    Case("stencil_halo", stencil3, lambda r, n: (_f32(r, n), np.zeros(n, np.float32)), lambda a: _1d(a),
         _stencil_model),
)
