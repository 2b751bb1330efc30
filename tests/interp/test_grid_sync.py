"""Cooperative launches and cooperative groups' grid-wide sync on the interpreter (issue 14 item 3):
tests/cuda/grid_sync.cu compiled by nvcc 13, every variant, against numpy models of the sources."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from models import devrt
from models.fixture_kernels import VARIANTS, kernel

DEVICE = "interp"


@pytest.mark.parametrize("variant", VARIANTS)
def test_grid_sum_sees_every_block_after_the_barrier(variant):
    _, (partial, out), (want_partial, want_out) = devrt.run_grid_sum(DEVICE, variant)
    np.testing.assert_array_equal(partial, want_partial)
    assert out == want_out


@pytest.mark.parametrize("variant", VARIANTS)
def test_repeated_grid_barriers_order_every_round(variant):
    got, want = devrt.run_grid_rotate(DEVICE, variant)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("variant", ["sm80", "sm80-G"])
def test_split_barrier_on_a_2d_grid(variant):
    got, want = devrt.run_split_barrier(DEVICE, variant)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("variant", VARIANTS)
def test_blocks_reaching_the_barrier_on_different_paths(variant):
    # Even blocks spin at their copy of sync() while odd blocks still loop: the spinners wait.
    got, want = devrt.run_two_sites(DEVICE, variant)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cooperative", [True, False])
def test_is_valid_tells_a_cooperative_launch(cooperative):
    out = devrt.run_is_valid(DEVICE, "sm80", cooperative)
    np.testing.assert_array_equal(out, np.full(out.size, int(cooperative)))


def test_a_cooperative_grid_runs_as_one_batch_whatever_the_budget(monkeypatch):
    # A tiny batch budget splits a plain launch into one batch per CTA; the grid barrier needs them all.
    monkeypatch.setenv("PTXVM_INTERP_BATCH_BYTES", "4096")
    stats, (partial, out), (want_partial, want_out) = devrt.run_grid_sum(DEVICE, "sm80", blocks=8, tpb=64, n=512)
    assert stats.batches == 1 and out == want_out
    np.testing.assert_array_equal(partial, want_partial)
    plain = np.full(8 * 64, -1, np.int32)
    stats = kernel("grid_sync", "grid_is_valid")((8,), (64,), (plain,), device=DEVICE)
    assert stats.batches == 8 and not plain.any()


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


POLLS = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry polls(.param .u64 p)
{
    .reg .pred %q<4>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
$strong:
    ld.acquire.gpu.u32 %r1, [%rd1];
    setp.eq.u32 %q1, %r1, 0;
    @%q1 bra $strong;
$plain:
    ld.global.u32 %r2, [%rd1];
    setp.eq.u32 %q2, %r2, 0;
    @%q2 bra $plain;
$writes:
    ld.volatile.global.u32 %r3, [%rd1];
    st.global.u32 [%rd1+4], %r3;
    setp.eq.u32 %q3, %r3, 0;
    @%q3 bra $writes;
    ret;
}
"""


def test_poll_edges_are_read_only_loops_around_a_strong_load():
    from ptxvm.interp.executor import prepare
    from ptxvm.interp.polling import poll_edges
    from ptxvm.driver.arrays import default_device
    mod = ptxvm.Module(POLLS)
    k = mod["polls"]
    program = prepare(mod.ir, k.ir, default_device().image(mod), 0)
    edges = poll_edges(program)
    assert [str(program.ops[pc].ins) for pc in sorted(edges)] == ["@%q1 bra $strong;"]
