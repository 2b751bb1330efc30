"""The corpus kernels (tests/cuda/*.cu as nvcc 13 compiled them for sm_80) that no other test
checked against a model: each runs on every CPU executor (the ``executor`` fixture: interp and
cpu) and gives what tests/models/plain_kernels.py (or the CUDA source's one-line meaning)
computes, bit for bit where the arithmetic is exact."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ptxvm

from models import plain_kernels as M
from models.fixture_kernels import fixture_module, kernel

RNG = np.random.default_rng(2026)


def test_daxpy_grid_stride(executor):
    # dyadic inputs of few bits: alpha * x + y is exact, so fma and mul+add agree with numpy
    n = 3000
    x = RNG.integers(-1000, 1000, n) / 8.0
    y = RNG.integers(-1000, 1000, n) / 4.0
    out = y.copy()
    kernel("elementwise", "daxpy_grid_stride")(3, 128, (np.int64(n), np.float64(-1.5), x, out),
                                                device=executor)
    np.testing.assert_array_equal(out, -1.5 * x + y)


def test_int64_divmod_truncates_toward_zero(executor):
    n = 200
    a = RNG.integers(-(1 << 62), 1 << 62, n, dtype=np.int64)
    b = RNG.integers(-(1 << 20), 1 << 20, n, dtype=np.int64)
    b[b == 0] = 7
    a[:4], b[:4] = [-7, 7, -7, 7], [2, -2, -2, 2]          # the sign cases C99 6.5.5 fixes
    q, r, m = (np.zeros(n, np.int64) for _ in range(3))
    kernel("elementwise", "int64_divmod")(2, 128, (a, b, q, r, m, np.int32(n)), device=executor)
    mq, mr = M.trunc_divmod(a, b)
    np.testing.assert_array_equal(q, mq)
    np.testing.assert_array_equal(r, mr)
    np.testing.assert_array_equal(m, np.maximum(a, b) - np.minimum(a, b))
    assert list(q[:4]) == [-3, -3, 3, 3] and list(r[:4]) == [-1, 1, -1, 1]


def test_stencil_2d(executor):
    ny, nx = 37, 45                                        # not multiples of the 16 x 16 block
    g = RNG.integers(-100, 100, (ny, nx)).astype(np.float32)
    out = np.zeros_like(g)
    kernel("stencil2d", "stencil_2d")((3, 3), (16, 16), (g, out, np.int32(nx), np.int32(ny)),
                                      device=executor)
    np.testing.assert_array_equal(out, M.stencil_2d(g))


def test_nbody_step(executor):
    n = 100                                                # two tiles of 64, the second partial
    pos = np.empty((n, 4), np.float32)
    pos[:, :3] = RNG.uniform(-1, 1, (n, 3))
    pos[:, 3] = RNG.uniform(0.5, 1.5, n)
    acc = np.full((n, 4), np.nan, np.float32)
    kernel("bench_kernels", "nbody_step")(2, 64, (pos, acc, np.int32(n), np.float32(0.01)),
                                          device=executor)
    want = M.nbody_accel(pos, 0.01)
    # rsqrt.approx.f32 (2^-22.9 relative) and f32 sums of 100 terms of either sign
    scale = np.abs(want[:, :3]).max()
    np.testing.assert_allclose(acc[:, :3], want[:, :3], rtol=0, atol=2e-5 * scale)
    np.testing.assert_array_equal(acc[:, 3], 0)


@pytest.mark.parametrize("name,model", [("mbarrier_phases", M.neighbour_difference),
                                        ("mbarrier_split_arrive", M.twice_plus_mirror)])
def test_cuda_barrier_phases(executor, name, model):
    b = 128
    x = RNG.integers(-1000, 1000, 3 * b).astype(np.float32)   # differences and sums exact
    out = np.zeros_like(x)
    kernel("sync_primitives", name)(3, b, (x, out), device=executor)
    np.testing.assert_array_equal(out, model(x, b))


def test_printf_conditional_prints_once_per_block(executor, capfd):
    flags = np.array([0xDEADBEEF, 0, 0x80000001, 0x1234], np.uint32)
    copy = np.zeros(4, np.uint32)
    kernel("printf_assert", "printf_conditional")(4, 64, (flags, copy), device=executor)
    lines = capfd.readouterr().out.splitlines()
    np.testing.assert_array_equal(copy, flags)
    pat = re.compile(r"block (\d+) flags=0x([0-9a-f]{8}) at 0x([0-9a-f]+)")
    got = sorted((int(m[1]), int(m[2], 16), int(m[3], 16)) for m in map(pat.fullmatch, lines))
    assert [(b, f) for b, f, _ in got] == [(b, int(f)) for b, f in enumerate(flags)]
    # %p of &flags[blockIdx.x]: consecutive u32 elements of one array
    assert [p - got[0][2] for _, _, p in got] == [0, 4, 8, 12]


def test_trap_on_negative(executor):
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)
    kernel("printf_assert", "trap_on_negative")(1, 64, (x, out, np.int32(64)), device=executor)
    np.testing.assert_array_equal(out, x)
    x[37] = -1
    with pytest.raises(ptxvm.TrapError) as e:
        kernel("printf_assert", "trap_on_negative")(1, 64, (x, np.zeros(64, np.int32), np.int32(64)),
                                                    device=executor)
    assert e.value.thread == (37, 0, 0)


@pytest.mark.parametrize("stem", ["cub_block", "cub_warp", "cub_sort_hist", "cub_device", "thrust_algos"])
def test_cub_empty_kernel_runs_and_writes_nothing(executor, stem):
    """CUB's EmptyKernel<void> (emitted into every file including CUB, used to query the PTX
    version): no parameters, no effect."""
    mod = fixture_module(stem)
    name, = (k for k in mod.kernels if "EmptyKernel" in k)
    assert tuple(mod.kernels[name]) == ()
    mod[name](4, 32, (), device=executor)


def test_cdp_streams_children_launched_from_the_host(executor):
    """tests/cuda/cdp_streams.cu's child kernels on their own: fill (out[i] = v + i), then
    add_one (out[i] += 1); n not a multiple of the 64-thread block."""
    n = 200
    out = np.full(n, -7, np.int32)
    kernel("cdp_streams", "fill")(4, 64, (out, np.int32(n), np.int32(10)), device=executor)
    np.testing.assert_array_equal(out, 10 + np.arange(n))
    kernel("cdp_streams", "add_one")(4, 64, (out, np.int32(n)), device=executor)
    np.testing.assert_array_equal(out, 11 + np.arange(n))
