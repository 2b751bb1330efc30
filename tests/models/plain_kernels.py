"""numpy models of the small corpus kernels no other model covered (tests/cuda/elementwise.cu,
stencil2d.cu, bench_kernels.cu, sync_primitives.cu), each written from the comment and the C
code of its CUDA source, never from ptxvm's output."""

from __future__ import annotations

import numpy as np


def trunc_divmod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """C's `/` and `%` on signed integers: the quotient truncates toward zero and the remainder
    takes the dividend's sign (C99 6.5.5), unlike numpy's floor division."""
    q = np.array([abs(int(x)) // abs(int(y)) * (1 if (x < 0) == (y < 0) else -1)
                  for x, y in zip(a, b)], dtype=a.dtype)
    return q, (a - q * b).astype(a.dtype)


def stencil_2d(grid: np.ndarray) -> np.ndarray:
    """One 5-point step on a (ny, nx) grid: the interior gets -4 * centre + its four neighbours,
    the boundary is copied (the sums are exact for the small integer inputs the test uses)."""
    out = grid.copy()
    c = grid[1:-1, 1:-1]
    out[1:-1, 1:-1] = (-4 * c + grid[1:-1, :-2] + grid[1:-1, 2:] + grid[:-2, 1:-1] + grid[2:, 1:-1])
    return out


def nbody_accel(pos: np.ndarray, eps2: float) -> np.ndarray:
    """acc[i] = (sum_j d_ij * m_j / (|d_ij|^2 + eps2)^(3/2), 0) with d_ij = p_j - p_i, over every
    j including i, in float64 (the kernel's rsqrtf and f32 sums differ from it by rounding)."""
    p = pos.astype(np.float64)
    d = p[None, :, :3] - p[:, None, :3]
    r2 = (d * d).sum(axis=2) + eps2
    s = p[None, :, 3] / r2 ** 1.5
    acc = np.zeros_like(p)
    acc[:, :3] = (d * s[:, :, None]).sum(axis=1)
    return acc


def neighbour_difference(x: np.ndarray, block: int) -> np.ndarray:
    """mbarrier_phases: out[b*B + t] = s[(t + 1) % B] - s[t] with s the block's inputs."""
    r = x.reshape(-1, block)
    return (np.roll(r, -1, axis=1) - r).reshape(-1)


def twice_plus_mirror(x: np.ndarray, block: int) -> np.ndarray:
    """mbarrier_split_arrive: out[b*B + t] = 2 * in[b*B + t] + s[B - 1 - t]."""
    r = x.reshape(-1, block)
    return (2 * r + r[:, ::-1]).reshape(-1)
