"""The device-runtime fixture kernels (tests/cuda/grid_sync.cu, tests/cuda/cdp.cu) as the
interpreter and JIT tests launch them, and plain numpy models of what each computes, written from
the CUDA sources (not from ptxvm's output)."""

from __future__ import annotations

import numpy as np

from models.fixture_kernels import kernel

NOT_COOPERATIVE = ("`trap` executed; the kernel reads cooperative groups' grid workspace (%envreg1, "
                   "%envreg2), which only a cooperative launch provides, and grid_group::sync() traps "
                   "without one: launch with cooperative=True (ptxvm run --cooperative)")


# ------------------------------------------------------------------ grid_sync.cu models

def grid_sum_model(x: np.ndarray, n: int, blocks: int, tpb: int) -> tuple[np.ndarray, int]:
    """partial[b] = sum of block b's in[i] (i < n), out = their sum."""
    v = np.zeros(blocks * tpb, dtype=np.int64)
    v[:n] = x[:n]
    partial = v.reshape(blocks, tpb).sum(axis=1)
    return partial.astype(np.int32), int(partial.sum())


def grid_rotate_model(buf0: np.ndarray, steps: int) -> np.ndarray:
    """Both buffers after ``steps`` rounds of dst[i] = src[(i + 1) % n] + 1."""
    bufs = [buf0.astype(np.int64).copy(), np.zeros_like(buf0, dtype=np.int64)]
    for s in range(steps):
        bufs[(s + 1) % 2] = np.roll(bufs[s % 2], -1) + 1
    return np.concatenate(bufs).astype(np.int32)


def split_barrier_model(grid: tuple[int, int], block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """ranks[b] = b; out[t] = nblocks - 1 - (the block rank of grid thread t)."""
    nblocks, tpb = grid[0] * grid[1], block[0] * block[1]
    rank_of_thread = np.repeat(np.arange(nblocks), tpb)
    return np.arange(nblocks, dtype=np.int32), (nblocks - 1 - rank_of_thread).astype(np.int32)


def run_grid_sum(device: str, variant: str, blocks: int = 6, tpb: int = 96, n: int = 500, seed: int = 1,
                 cooperative: bool = True):
    x = np.random.default_rng(seed).integers(-1000, 1000, blocks * tpb).astype(np.int32)
    partial, out = np.zeros(blocks, np.int32), np.zeros(1, np.int32)
    stats = kernel("grid_sync", "grid_sum", variant)((blocks,), (tpb,), (x, partial, out, np.int32(n)),
                                                    device=device, cooperative=cooperative)
    return stats, (partial, int(out[0])), grid_sum_model(x, n, blocks, tpb)


def run_grid_rotate(device: str, variant: str, blocks: int = 5, tpb: int = 64, steps: int = 7):
    n = blocks * tpb
    buf = np.zeros(2 * n, np.int32)
    buf[:n] = np.arange(n) * 3
    expect = grid_rotate_model(buf[:n], steps)
    kernel("grid_sync", "grid_rotate", variant)((blocks,), (tpb,), (buf, np.int32(steps)), device=device,
                                                cooperative=True)
    return buf, expect


def run_split_barrier(device: str, variant: str, grid=(3, 2), block=(32, 2)):
    nblocks, tpb = grid[0] * grid[1], block[0] * block[1]
    ranks, out = np.full(nblocks, -1, np.int32), np.full(nblocks * tpb, -1, np.int32)
    kernel("grid_sync", "grid_split_barrier", variant)(grid, block, (ranks, out), device=device, cooperative=True)
    return (ranks, out), split_barrier_model(grid, block)


def run_two_sites(device: str, variant: str, blocks: int = 7, tpb: int = 64, work: int = 2000):
    """out[b] = +/- sum(k + 1 for every block k): odd blocks +, even blocks -."""
    vals, out = np.zeros(blocks, np.int32), np.zeros(blocks, np.int32)
    kernel("grid_sync", "grid_two_sites", variant)((blocks,), (tpb,), (vals, out, np.int32(work)), device=device,
                                                   cooperative=True)
    total = sum(range(1, blocks + 1))
    return out, np.array([total if b % 2 else -total for b in range(blocks)], np.int32)


def run_is_valid(device: str, variant: str, cooperative: bool, blocks: int = 3, tpb: int = 32) -> np.ndarray:
    out = np.full(blocks * tpb, -1, np.int32)
    kernel("grid_sync", "grid_is_valid", variant)((blocks,), (tpb,), (out,), device=device, cooperative=cooperative)
    return out


# ------------------------------------------------------------------ cdp.cu models

def fib(k: int) -> int:
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def run_cdp_cases(device: str, variant: str) -> list[tuple[str, object, object]]:
    """(case, got, expected) for every kernel of cdp.cu."""
    cases = []
    n, blocks = 40, 3
    out = np.zeros(blocks * n, np.int32)
    kernel("cdp", "cdp_parent", variant)((blocks,), (64,), (out, np.int32(n)), device=device)
    cases.append(("parent", out, np.concatenate([b * n + 2 * np.arange(n) for b in range(blocks)])))
    out = np.zeros(1, np.int32)
    kernel("cdp", "cdp_fib", variant)((1,), (1,), (out, np.int32(9)), device=device)
    cases.append(("fib", int(out[0]), fib(9)))
    out = np.zeros(33, np.int32)
    out[:32] = np.arange(32)
    kernel("cdp", "cdp_tail", variant)((1,), (32,), (out, np.int32(4)), device=device)
    cases.append(("tail", out, np.concatenate([np.arange(32) + 4 + 1, [4]])))
    out = np.zeros(8, np.int64)
    kernel("cdp", "cdp_mixed_parent", variant)((1,), (1,), (out, np.int32(8)), device=device)
    cases.append(("mixed", out, (2.0 * np.arange(8)).astype(np.int64) + 3 - 5))
    out, status = np.zeros(8, np.int32), np.full(2, -1, np.int32)
    kernel("cdp", "cdp_heap_parent", variant)((1,), (1,), (out, status, np.int32(8)), device=device)
    cases.append(("heap", out, 2 * (np.arange(8) + 7)))
    cases.append(("heap status", status, np.zeros(2, np.int32)))
    return cases


SYNC_PTX = """
.version 7.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) cudaDeviceSynchronize
(
)
;
.visible .entry waits(.param .u64 out)
{
    .reg .b32 %r<2>;
    { // callseq 0, 0
    .param .b32 retval0;
    call.uni (retval0), cudaDeviceSynchronize, ();
    ld.param.b32 %r1, [retval0+0];
    }
    ret;
}
"""

# What both executors say after naming the instruction (the interpreter its opcode, the JIT its text).
SYNC_WHY = ("calls `cudaDeviceSynchronize`, device-side cudaDeviceSynchronize, which CUDA 12 "
                "removed (CDP2: a child grid completes before its parent grid, and a parent cannot wait for "
                "it; nvcc 13 rejects it in device code); rebuild without it, e.g. move the dependent work into "
                "a child or tail launch (cudaStreamTailLaunch)")
