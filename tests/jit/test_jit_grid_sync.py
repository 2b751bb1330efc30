"""Cooperative launches and cooperative groups' grid-wide sync on the host JIT (issue 14 item 3):
tests/cuda/grid_sync.cu compiled by nvcc 13, every variant, against numpy models of the sources."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from models import devrt
from models.fixture_kernels import VARIANTS, kernel

DEVICE = "cpu"
# -G code takes ~10 s per kernel to compile for the host: in the slow suite.
JIT_VARIANTS = [v if v != "sm80-G" else pytest.param(v, marks=pytest.mark.slow) for v in VARIANTS]


@pytest.mark.parametrize("variant", JIT_VARIANTS)
def test_grid_sum_sees_every_block_after_the_barrier(variant):
    _, (partial, out), (want_partial, want_out) = devrt.run_grid_sum(DEVICE, variant)
    np.testing.assert_array_equal(partial, want_partial)
    assert out == want_out


@pytest.mark.parametrize("variant", JIT_VARIANTS)
def test_repeated_grid_barriers_order_every_round(variant):
    got, want = devrt.run_grid_rotate(DEVICE, variant)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("variant", JIT_VARIANTS)
def test_split_barrier_on_a_2d_grid(variant):
    got, want = devrt.run_split_barrier(DEVICE, variant)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("variant", JIT_VARIANTS)
def test_blocks_reaching_the_barrier_on_different_paths(variant):
    # Even blocks spin at their copy of sync() while odd blocks still loop: the spinners wait.
    got, want = devrt.run_two_sites(DEVICE, variant)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cooperative", [True, False])
def test_is_valid_tells_a_cooperative_launch(cooperative):
    out = devrt.run_is_valid(DEVICE, "sm80", cooperative)
    np.testing.assert_array_equal(out, np.full(out.size, int(cooperative)))


def test_a_cooperative_grid_runs_as_one_batch_whatever_the_budget():
    # 300 CTAs of 256 threads are past the JIT's 16 MiB batch budget: a plain launch splits them.
    stats, (partial, out), (want_partial, want_out) = devrt.run_grid_sum(DEVICE, "sm80", blocks=300, tpb=256,
                                                                          n=70_000)
    assert stats.batches == 1 and out == want_out
    np.testing.assert_array_equal(partial, want_partial)
    plain = np.full(400 * 256, -1, np.int32)      # a smaller record than grid_sum's: more CTAs to split
    stats = kernel("grid_sync", "grid_is_valid")((400,), (256,), (plain,), device=DEVICE)
    assert stats.batches > 1 and not plain.any()


def test_many_grid_barriers_stay_inside_the_watchdog():
    # Each barrier costs the spinning CTA masters at most a short quantum (machine.cooperative).
    got, want = devrt.run_grid_rotate(DEVICE, "sm80", blocks=16, tpb=32, steps=400)
    np.testing.assert_array_equal(got, want)


def test_grid_sync_without_a_cooperative_launch_is_a_located_trap():
    with pytest.raises(ptxvm.TrapError) as e:
        devrt.run_grid_sum(DEVICE, "sm80-lineinfo", cooperative=False)
    assert e.value.message.split("\n") == [
        devrt.NOT_COOPERATIVE,
        "  in kernel `grid_sum(int const*, int*, int*, int)` (_Z8grid_sumPKiPiS1_i), block (0, 0, 0), thread (0, 0, 0)",
        "  at `trap;` [/usr/local/cuda-13.0/bin/../targets/x86_64-linux/include/cooperative_groups.h:180]"]


def test_a_cooperative_grid_too_large_to_be_resident_is_refused_before_it_runs():
    out = np.zeros(1, np.int32)
    k = kernel("grid_sync", "grid_sum")
    with pytest.raises(ptxvm.ResourceError) as e:
        k((1025,), (32,), (out, out, out, np.int32(0)), device=DEVICE, cooperative=True)
    assert e.value.message == (
        "kernel `_Z8grid_sumPKiPiS1_i`: a cooperative launch keeps every block of its grid resident at once, "
        "and grid (1025, 1, 1) has 1,025 blocks, more than the 1,024 ptxvm's device holds (CUDA refuses it "
        "with cudaErrorCooperativeLaunchTooLarge; limit cooperative_ctas, raise it with "
        "PTXVM_LIMIT_COOPERATIVE_CTAS=... or ptxvm.limits.configure(cooperative_ctas=...))")
    assert not out.any()


def test_cooperative_grid_memory_is_checked_against_batch_memory():
    out = np.zeros(1, np.int32)
    ptxvm.limits.configure(batch_memory=1 << 16)
    try:
        with pytest.raises(ptxvm.ResourceError) as e:
            kernel("grid_sync", "grid_sum")((64,), (256,), (out, out, out, np.int32(0)), device=DEVICE,
                                            cooperative=True)
    finally:
        ptxvm.limits.reset()
    assert e.value.message.startswith("the cooperative launch of kernel `_Z8grid_sumPKiPiS1_i` (all 64 blocks "
                                      "of 256 threads resident at once) needs ")
    assert "(batch_memory; raise it with PTXVM_LIMIT_BATCH_MEMORY=" in e.value.message


def test_cooperative_must_be_a_bool():
    with pytest.raises(ptxvm.LaunchError, match="cooperative must be True or False, got str 'yes'"):
        kernel("grid_sync", "grid_is_valid")((1,), (1,), (np.zeros(1, np.int32),), device=DEVICE,
                                             cooperative="yes")
