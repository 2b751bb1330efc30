"""The cooperative groups, inline-asm and libcu++ part of the real-world corpus
(tests/cuda/cg_tiles.cu, warp_asm.cu, libcuxx*.cu as nvcc 13 compiled them): every kernel with
a model runs on every CPU executor (interp and cpu) equal to tests/models/realworld.py; the
checks over the whole corpus (its size, its nvcc variants) and the repro of the interpreter
bug the -G builds show. CUB and Thrust: test_realworld_cub.py; parsing, verification and
round-trips: tests/frontend/test_frontend.py; AMD: tests/amdgpu/test_realworld_translate.py."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import ptxvm

from models import realworld as M
from models.fixtures import FIXTURES
from models.realworld_launch import I32, STEMS, U32, Cases, ints, kernel, module, tparam

CASES = Cases()


# ---------------------------------------------------------------- cg_tiles.cu

@CASES.case("cg_tiles", "cg_tile_sum<16>", "cg_tile_sum<8>", "cg_tile_sum<4>", "cg_tile_sum<2>")
def _cg_sum(name, dev, var="sm80"):
    n = tparam(name)
    x, out = ints(512, seed=40), np.zeros(512 // n, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x, n))


@CASES.case("cg_tiles", "cg_tile16_bitops")
def _cg_bitops(name, dev, var="sm80"):
    x = ints(512, 0, 1 << 32, seed=41, dtype=U32)
    outs = [np.zeros(32, U32) for _ in range(4)]
    kernel("cg_tiles", name, var)(2, 256, (x, *outs), device=dev)
    for got, op in zip(outs, (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.minimum)):
        np.testing.assert_array_equal(got, M.group_reduce(x, 16, op))


@CASES.case("cg_tiles", "cg_tile32_fsum")
def _cg_fsum(name, dev, var="sm80"):
    x = ints(512, -1000, 1000, seed=42).astype(np.float32) / 4     # every partial sum exact
    out = np.zeros(16, np.float32)
    kernel("cg_tiles", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.rows(x, 32).sum(axis=1))


@CASES.case("cg_tiles", "cg_tile16_scans")
def _cg_scans(name, dev, var="sm80"):
    x, inc, exc = ints(512, seed=43), np.zeros(512, I32), np.zeros(512, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, inc, exc), device=dev)
    np.testing.assert_array_equal(inc, M.inclusive_scan(x, 16))
    np.testing.assert_array_equal(exc, M.exclusive_sum(x, 16))


@CASES.case("cg_tiles", "cg_tile32_scan_max")
def _cg_scan_max(name, dev, var="sm80"):
    x, out = ints(512, seed=44), np.zeros(512, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, 32, np.maximum))


@CASES.case("cg_tiles", "cg_labeled_sum")
def _cg_labeled(name, dev, var="sm80"):
    x, lab = ints(256, seed=45), ints(256, 0, 4, seed=46)
    outs = [np.zeros(256, I32) for _ in range(3)]
    kernel("cg_tiles", name, var)(1, 256, (x, lab, *outs), device=dev)
    for got, want in zip(outs, M.labeled_partition(x, lab)):
        np.testing.assert_array_equal(got, want)


@CASES.case("cg_tiles", "cg_binary_partition_count")
def _cg_binary(name, dev, var="sm80"):
    x, out = ints(256, seed=47), np.zeros(256, I32)
    kernel("cg_tiles", name, var)(1, 256, (x, out), device=dev)
    odd = M.rows(x & 1, 32)
    want = np.where(odd == 1, odd.sum(axis=1, keepdims=True), 32 - odd.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(out, want.reshape(-1))


@CASES.case("cg_tiles", "cg_coalesced_compact")
def _cg_coalesced(name, dev, var="sm80"):
    x = ints(256, -3, 3, seed=48)
    x[64:96] = -1                                           # a warp with no active lane
    rank, count = np.zeros(256, I32), np.full(8, -7, I32)
    kernel("cg_tiles", name, var)(1, 256, (x, rank, count), device=dev)
    want_rank, want_count = M.active_ranks(x > 0)
    np.testing.assert_array_equal(rank, want_rank)
    np.testing.assert_array_equal(count, np.where(want_count > 0, want_count, -7))


@CASES.case("cg_tiles", "cg_coalesced_aggregated_atomic")
def _cg_agg_atomic(name, dev, var="sm80"):
    x = ints(512, -1, 2, seed=49)
    counter, slot = np.zeros(1, I32), np.zeros(512, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, counter, slot), device=dev)
    active = x != 0
    assert counter[0] == active.sum()
    np.testing.assert_array_equal(slot[~active], -1)
    # which warp gets which base depends on the order the warps ran; within a warp the slots
    # are consecutive in lane order, and together they are 0..count-1 once each
    assert sorted(slot[active]) == list(range(active.sum()))
    ranks, _ = M.active_ranks(active)
    for w in range(16):
        s, r = slot[w * 32:(w + 1) * 32], ranks[w * 32:(w + 1) * 32]
        act = r >= 0
        if act.any():
            np.testing.assert_array_equal(s[act] - s[act].min(), r[act])


@CASES.case("cg_tiles", "cg_tile8_meta")
def _cg_meta(name, dev, var="sm80"):
    out = np.zeros(2 * 128, I32)
    kernel("cg_tiles", name, var)(2, 128, (out,), device=dev)
    t = np.tile(np.arange(128), 2)
    np.testing.assert_array_equal(out, (t // 8) * 100 + 16)


@CASES.case("cg_tiles", "cg_tile16_shuffles")
def _cg_shuffles(name, dev, var="sm80"):
    x, out = ints(512, seed=50), np.zeros(512, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.shfl_xor_in_tiles(x, 16, 5) + M.shfl_idx_in_tiles(x, 16, 3))


@CASES.case("cg_tiles", "cg_tile8_votes")
def _cg_votes(name, dev, var="sm80"):
    x = ints(256, -2, 3, seed=51)
    x[0:8] = 1                                              # a tile where all hold
    any_, all_ = np.zeros(256, I32), np.zeros(256, I32)
    ballot, match = np.zeros(256, U32), np.zeros(256, U32)
    kernel("cg_tiles", name, var)(1, 256, (x, any_, all_, ballot, match), device=dev)
    p = M.rows(x > 0, 8)
    np.testing.assert_array_equal(any_, np.repeat(p.any(axis=1), 8))
    np.testing.assert_array_equal(all_, np.repeat(p.all(axis=1), 8))
    np.testing.assert_array_equal(ballot, M.tile_ballot(x > 0, 8))
    np.testing.assert_array_equal(match, M.tile_match_any(x & 3, 8))


@CASES.case("cg_tiles", "cg_block_ranks")
def _cg_block(name, dev, var="sm80"):
    out = np.zeros(2 * 256, I32)
    kernel("cg_tiles", name, var)(2, 256, (out,), device=dev)
    t = np.arange(512)
    np.testing.assert_array_equal(out, 255 - t % 256 + 1000 * (t // 256))


# ---------------------------------------------------------------- warp_asm.cu

@CASES.case("warp_asm", "warpsize_lane_ids")
def _ws_ids(name, dev, var="sm80"):
    out = np.zeros(2 * 128, I32)
    kernel("warp_asm", name, var)(2, 128, (out,), device=dev)
    t = np.tile(np.arange(128), 2)
    np.testing.assert_array_equal(out, t % 32 + 1000 * (t // 32) + 32 * 100000)


@CASES.case("warp_asm", "warpsize_loop_sum")
def _ws_sum(name, dev, var="sm80"):
    x, out = ints(512, seed=60), np.zeros(16, I32)
    kernel("warp_asm", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x, 32))


@CASES.case("warp_asm", "asm_shfl_up_scan")
def _asm_scan(name, dev, var="sm80"):
    x, out = ints(512, 0, 1 << 32, seed=61, dtype=U32), np.zeros(512, U32)
    kernel("warp_asm", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, 32))


@CASES.case("warp_asm", "asm_shfl_bfly_max")
def _asm_bfly(name, dev, var="sm80"):
    x, out = ints(512, -10**9, 10**9, seed=62), np.zeros(512, I32)
    kernel("warp_asm", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, np.repeat(M.group_reduce(x, 32, np.maximum), 32))


@CASES.case("warp_asm", "asm_nested_shadow")
def _asm_shadow(name, dev, var="sm80"):
    x, out = ints(256, -10**6, 10**6, seed=63), np.zeros(256, I32)
    kernel("warp_asm", name, var)(1, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, (x + 7) + 3 * x)      # inner t = x + 7, outer t = 3x


@CASES.case("warp_asm", "asm_range_bytes")
def _asm_bytes(name, dev, var="sm80"):
    x, out = ints(256, 0, 1 << 32, seed=64, dtype=U32), np.zeros(256, U32)
    kernel("warp_asm", name, var)(1, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.bytes_sum(x))


@CASES.case("warp_asm", "asm_predicate_range")
def _asm_pred(name, dev, var="sm80"):
    x, out = ints(256, 0, 30, seed=65), np.zeros(256, I32)
    kernel("warp_asm", name, var)(1, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, ((x >= 10) & (x < 20)).astype(I32))


@CASES.case("warp_asm", "asm_laneid_lanemask")
def _asm_lane(name, dev, var="sm80"):
    lane, lt = np.zeros(256, I32), np.zeros(256, I32)
    kernel("warp_asm", name, var)(2, 128, (lane, lt), device=dev)
    np.testing.assert_array_equal(lane, np.arange(256) % 32)
    np.testing.assert_array_equal(lt, np.arange(256) % 32)     # popc(%lanemask_lt) == lane


@CASES.case("warp_asm", "asm_add64_carry")
def _asm_add64(name, dev, var="sm80"):
    rng = np.random.default_rng(66)
    a, b = (rng.integers(0, 1 << 64, 256, dtype=np.uint64, endpoint=False) for _ in range(2))
    a[:4] = 0xFFFFFFFF                                     # low halves that carry
    out = np.zeros(256, np.uint64)
    kernel("warp_asm", name, var)(1, 256, (a, b, out), device=dev)
    np.testing.assert_array_equal(out, a + b)              # numpy wraps mod 2^64


@CASES.case("warp_asm", "asm_vote_popc")
def _asm_vote(name, dev, var="sm80"):
    x, out = ints(512, seed=67), np.zeros(16, I32)
    kernel("warp_asm", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.rows(x & 1, 32).sum(axis=1))


@CASES.case("warp_asm", "asm_prmt_reverse")
def _asm_prmt(name, dev, var="sm80"):
    x, out = ints(256, 0, 1 << 32, seed=68, dtype=U32), np.zeros(256, U32)
    kernel("warp_asm", name, var)(1, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.byte_reverse(x))


# ---------------------------------------------------------------- libcuxx.cu

@CASES.case("libcuxx", "cuxx_atomic_ref_add")
def _cuxx_add(name, dev, var="sm80"):
    x, c = ints(1024, seed=70), np.zeros(1, I32)
    kernel("libcuxx", name, var)(4, 256, (x, c), device=dev)
    assert c[0] == x.sum()


@CASES.case("libcuxx", "cuxx_atomic_ref_minmax")
def _cuxx_minmax(name, dev, var="sm80"):
    x = ints(1024, -10**9, 10**9, seed=71)
    lo, hi = np.full(1, 2**31 - 1, I32), np.full(1, -2**31, I32)
    kernel("libcuxx", name, var)(4, 256, (x, lo, hi), device=dev)
    assert (lo[0], hi[0]) == (x.min(), x.max())


@CASES.case("libcuxx", "cuxx_atomic_ref_bits")
def _cuxx_bits(name, dev, var="sm80"):
    x = ints(512, 0, 1 << 32, seed=72, dtype=U32) | U32(0x10)     # a bit every value has
    out = np.zeros(6, U32)
    kernel("libcuxx", name, var)(2, 256, (x, out), device=dev)
    want = np.stack([M.group_reduce(x, 256, op) for op in (np.bitwise_or, np.bitwise_and, np.bitwise_xor)], 1)
    np.testing.assert_array_equal(out, want.reshape(-1))


@CASES.case("libcuxx", "cuxx_atomic_cas_loop")
def _cuxx_cas(name, dev, var="sm80"):
    c = np.zeros(1, U32)
    kernel("libcuxx", name, var)(2, 128, (c,), device=dev)
    assert c[0] == M.iterate_3x_plus_1(256)


@CASES.case("libcuxx", "cuxx_atomic_exchange_sum")
def _cuxx_xchg(name, dev, var="sm80"):
    x, out = ints(512, seed=73), np.zeros(2, I32)
    kernel("libcuxx", name, var)(2, 256, (x, out), device=dev)
    # the swapped-out values are 0 and all values but the one left in the cell, in any order
    np.testing.assert_array_equal(out, M.group_sum(x, 256))


@CASES.case("libcuxx", "cuxx_shared_atomic_tickets")
def _cuxx_tickets(name, dev, var="sm80"):
    tickets, sums = np.full(512, -1, I32), np.zeros(2, I32)
    kernel("libcuxx", name, var)(2, 256, (tickets, sums), device=dev)
    for b in range(2):
        assert sorted(tickets[b * 256:(b + 1) * 256]) == list(range(256))
    np.testing.assert_array_equal(sums, [255 * 256 // 2] * 2)


@CASES.case("libcuxx_barrier", "cuxx_block_barrier")      # cuda::barrier: mbarrier.init/arrive/test_wait
def _cuxx_barrier(name, dev, var="sm80"):
    x, out = ints(256, seed=74), np.zeros(256, I32)
    kernel("libcuxx_barrier", name, var)(1, 256, (x, out), device=dev)
    t = np.arange(256)
    np.testing.assert_array_equal(out, 2 * x[(t + 2) % 256])


@CASES.case("libcuxx", "cuxx_bit_ops")
def _cuxx_bitops(name, dev, var="sm80"):
    x = ints(256, 0, 1 << 32, seed=75, dtype=U32)
    x[:3] = (0, 1, 0x80000000)
    outs = [np.zeros(256, U32) for _ in range(6)]
    kernel("libcuxx", name, var)(1, 256, (x, *outs), device=dev)
    want = (M.popcount(x), M.countl_zero(x), M.countr_zero(x), M.rotl(x, 7), M.bit_floor(x), M.bit_width(x))
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w)


@CASES.case("libcuxx", "cuxx_array_clamp")
def _cuxx_clamp(name, dev, var="sm80"):
    x, out = ints(256, -100, 100, seed=76), np.zeros(256, I32)
    kernel("libcuxx", name, var)(1, 256, (x, out, -50 & 0xFFFFFFFF, 60), device=dev)   # int params are .u32 in nvcc PTX
    np.testing.assert_array_equal(out, np.clip(2 * x + 5, -50, 60))   # the array sums to 2x + 5


@pytest.mark.parametrize("name", CASES.params())
def test_kernel_matches_its_model(name: str, executor: str) -> None:
    CASES.run(name, executor)


@pytest.mark.slow
@pytest.mark.parametrize("name,variant", CASES.variant_params({}))
def test_other_nvcc_variants_match_the_model_on_the_interpreter(name: str, variant: str) -> None:
    CASES.run(name, "interp", variant)


@pytest.mark.parametrize("dev", ["interp", "cpu"])
def test_odd_sized_local_frame_repro(dev: str) -> None:
    # Regression: a 1-byte callee frame made the interpreter's per-thread local windows an odd
    # number of bytes apart, and `view(dtype)[idx // 4]` shifted the words of threads t % 4 != 0
    # (interp.state.window_stride keeps them 16-byte multiples).
    path = Path(__file__).resolve().parents[1] / "data" / "realworld_repros" / "interp_odd_local_frame.ptx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = ptxvm.Module.from_file(path)["_Z9array_sumPKiPiii"]
    x, out = ints(256, -100, 100, seed=76), np.zeros(256, I32)
    k(1, 256, (x, out, -50 & 0xFFFFFFFF, 60), device=dev)
    s = 2 * x + 5
    np.testing.assert_array_equal(out, np.clip(np.maximum(s, np.minimum(s, -51)), -50, 60))


def test_a_fast_sample_of_other_variants() -> None:
    """Two kernels per other nvcc build in the default run (all of them: -m slow)."""
    for variant in ("sm90", "sm80-lineinfo", "sm80-G"):
        CASES.run("asm_shfl_up_scan", "interp", variant)
        CASES.run("cg_tile16_scans", "interp", variant)


def test_the_corpus_is_big_enough() -> None:
    """>= 60 kernels of our own (CUB's EmptyKernel, emitted into every file that includes CUB,
    not counted), every one of this file's cases names one kernel."""
    for name, (_, stem, _) in CASES.entries.items():
        kernel(stem, name)
    own = [k for s in STEMS for k in module(s).kernels if "EmptyKernel" not in k]
    assert len(own) >= 60, len(own)


def test_every_source_has_its_four_nvcc_variants() -> None:
    """sm80, sm90, -lineinfo and -G of each source, with the kernels of the sm80 build, but the
    -G builds MANIFEST.json lists as dropped for size."""
    dropped = {(Path(d["source"]).stem, d["variant"])
               for d in json.loads((FIXTURES / "MANIFEST.json").read_text())["generators"]["nvcc"]["dropped"]}
    assert dropped >= {("cub_device", "sm80-G"), ("thrust_algos", "sm80-G")}
    for stem in STEMS:
        for variant in ("sm90", "sm80-lineinfo", "sm80-G"):
            if (stem, variant) not in dropped:
                assert len(module(stem, variant).kernels) == len(module(stem).kernels), (stem, variant)
