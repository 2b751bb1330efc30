"""The real-world corpus (tests/cuda/cub_*.cu, thrust_algos.cu, cg_tiles.cu, warp_asm.cu,
libcuxx*.cu as nvcc 13 compiled them, tests/fixtures/nvcc/*): every kernel with a model runs on
every CPU executor (the ``executor`` fixture: interp and cpu) and gives exactly what the
numpy model in tests/models/realworld.py computes (integer inputs, or floats that sum exactly).
Parsing, verification and round-trips of these files are in tests/frontend; AMD translation in
test_realworld_translate.py."""

from __future__ import annotations

import re
import struct
import warnings
from functools import cache

import numpy as np
import pytest

import ptxvm
from ptxvm.demangle import demangle

from models import realworld as M
from models.fixtures import FIXTURES

STEMS = ("cub_block", "cub_sort_hist", "cub_warp", "cub_device", "thrust_algos", "cg_tiles",
         "warp_asm", "libcuxx", "libcuxx_barrier")
I32, U32 = np.int32, np.uint32


@cache
def module(stem: str, variant: str = "sm80") -> ptxvm.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(FIXTURES / "nvcc" / variant / f"{stem}.ptx")


def short_name(mangled: str) -> str:
    """`void f<128>(int const*, int*)` -> `f<128>`: the name as the source writes it."""
    full = demangle(mangled) or mangled
    full = re.sub(r"^void ", "", full)
    depth = 0
    for j in range(len(full) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(full[j], 0)
        if depth == 0:
            return full[:j]
    return full


def _unversioned(name: str) -> str:
    """CUB/Thrust put the target in their inline namespaces (CUB_300001_SM_800, _SM_900)."""
    return re.sub(r"_SM_\d+", "_SM", name)


def kernel(stem: str, name: str, variant: str = "sm80"):
    mod = module(stem, variant)
    hits = [k for k in mod.kernels if _unversioned(short_name(k)) == _unversioned(name)]
    assert len(hits) == 1, (name, [short_name(k) for k in mod.kernels])
    return mod[hits[0]]


def ints(n: int, lo: int = -50, hi: int = 50, seed: int = 0, dtype=I32) -> np.ndarray:
    return np.random.default_rng(seed).integers(lo, hi, n).astype(dtype)


CASES: dict[str, tuple] = {}      # kernel name -> (case function, stem, xfail reason)


def case(stem: str, *names: str, xfail: str | None = None):
    """Register a case function of kernels of ``stem`` under each name (its first argument
    is the name)."""
    def wrap(fn):
        for n in names:
            CASES[n] = (fn, stem, xfail)
        return fn
    return wrap


def _tparam(name: str) -> int:
    return int(re.search(r"<(\d+)", name).group(1))


# ---------------------------------------------------------------- cub_block.cu

@case("cub_block", "cub_reduce_sum<64>", "cub_reduce_sum<128>", "cub_reduce_sum<256>")
def _reduce_sum(name, dev, var="sm80"):
    b = _tparam(name)
    x, out = ints(4 * b, seed=b), np.zeros(4, I32)
    kernel("cub_block", name, var)(4, b, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x, b))


@case("cub_block", "cub_reduce_max_warps<128>", "cub_reduce_max_warps<256>")
def _reduce_max(name, dev, var="sm80"):
    b = _tparam(name)
    x, out = ints(4 * b, -10**6, 10**6, seed=3), np.zeros(4, I32)
    kernel("cub_block", name, var)(4, b, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_reduce(x, b, np.maximum))


@case("cub_block", "cub_reduce_min_items4")
def _reduce_min4(name, dev, var="sm80"):
    x, out = ints(4 * 512, -10**6, 10**6, seed=4), np.zeros(4, I32)
    kernel("cub_block", name, var)(4, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_reduce(x, 512, np.minimum))


@case("cub_block", "cub_reduce_partial")
def _reduce_partial(name, dev, var="sm80"):
    x, out = ints(2 * 128, seed=5), np.zeros(2, I32)
    kernel("cub_block", name, var)(2, 128, (x, out, 77), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x.reshape(2, 128)[:, :77].reshape(-1), 77))


@case("cub_block", "cub_scan_inclusive<128>", "cub_scan_inclusive<256>")
def _scan_inclusive(name, dev, var="sm80"):
    b = _tparam(name)
    x, out, tot = ints(4 * b, seed=6), np.zeros(4 * b, I32), np.zeros(4, I32)
    kernel("cub_block", name, var)(4, b, (x, out, tot), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, b))
    np.testing.assert_array_equal(tot, M.group_sum(x, b))


@case("cub_block", "cub_scan_exclusive_warps<64>", "cub_scan_exclusive_warps<256>")
def _scan_exclusive(name, dev, var="sm80"):
    b = _tparam(name)
    x, out = ints(4 * b, seed=7), np.zeros(4 * b, I32)
    kernel("cub_block", name, var)(4, b, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.exclusive_sum(x, b))


@case("cub_block", "cub_scan_max_items4")
def _scan_max4(name, dev, var="sm80"):
    x, out = ints(2 * 512, -1000, 1000, seed=8), np.zeros(2 * 512, I32)
    kernel("cub_block", name, var)(2, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, 512, np.maximum))


@case("cub_block", "cub_scan_exclusive_seed")
def _scan_seed(name, dev, var="sm80"):
    x, out = ints(4 * 128, 0, 1 << 30, seed=9, dtype=U32), np.zeros(4 * 128, U32)
    kernel("cub_block", name, var)(4, 128, (x, out, 0xFFFFFF00), device=dev)     # sums wrap mod 2^32
    np.testing.assert_array_equal(out, M.exclusive_scan_seed(x, 128, 0xFFFFFF00))


LOAD_STORE = {0: "DIRECT", 1: "STRIPED", 2: "VECTORIZE", 3: "TRANSPOSE", 4: "WARP_TRANSPOSE"}
_LS = "cub_load_store<(cub::CUB_300001_SM_800::BlockLoadAlgorithm){0}, (cub::CUB_300001_SM_800::BlockStoreAlgorithm){0}>"


@case("cub_block", *(_LS.format(a) for a in LOAD_STORE))
def _load_store(name, dev, var="sm80"):
    x, out = ints(4 * 512, seed=10), np.zeros(4 * 512, I32)
    kernel("cub_block", name, var)(4, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, x + 1)      # every algorithm: the same blocked arrangement


@case("cub_block", "cub_load_guarded")
def _load_guarded(name, dev, var="sm80"):
    x, out = ints(256, seed=11), np.zeros(256, I32)
    kernel("cub_block", name, var)(1, 128, (x, out, 150), device=dev)
    np.testing.assert_array_equal(out, np.where(np.arange(256) < 150, 3 * x, 21))


@case("cub_block", "cub_exchange_striped_to_blocked")
def _exchange(name, dev, var="sm80"):
    x, out = ints(4 * 512, seed=12), np.zeros(4 * 512, I32)
    kernel("cub_block", name, var)(4, 128, (x, out), device=dev)
    # thread t loads striped positions k*128+t, exchanges to blocked (t*4+k), stores blocked:
    # the tile ends up where it started
    np.testing.assert_array_equal(out, x)


@case("cub_block", "cub_flag_heads")
def _flag_heads(name, dev, var="sm80"):
    x, f = ints(4 * 256, 0, 3, seed=13), np.zeros(4 * 256, I32)
    kernel("cub_block", name, var)(4, 128, (x, f), device=dev)
    np.testing.assert_array_equal(f, M.flag_heads(x, 256))


@case("cub_block", "cub_adjacent_difference")
def _adj_diff(name, dev, var="sm80"):
    x, out = ints(4 * 256, seed=14), np.zeros(4 * 256, I32)
    kernel("cub_block", name, var)(4, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.subtract_left(x, 256))


# ---------------------------------------------------------------- cub_sort_hist.cu

_SORTS = {"cub_radix_sort<unsigned int, 128, 4>": (U32, 128, 4), "cub_radix_sort<int, 128, 2>": (I32, 128, 2),
          "cub_radix_sort<unsigned short, 64, 4>": (np.uint16, 64, 4),
          "cub_radix_sort<unsigned long long, 64, 2>": (np.uint64, 64, 2),
          "cub_radix_sort<float, 128, 2>": (np.float32, 128, 2)}


@case("cub_sort_hist", *_SORTS)
def _radix_sort(name, dev, var="sm80"):
    dt, b, items = _SORTS[name]
    n = 2 * b * items
    rng = np.random.default_rng(15)
    if dt == np.float32:
        x = (rng.integers(-2000, 2000, n) / 8).astype(dt)       # negative and positive, exact
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    out = np.zeros_like(x)
    kernel("cub_sort_hist", name, var)(2, b, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.sort_groups(x, b * items))


@case("cub_sort_hist", "cub_radix_sort_desc")
def _radix_desc(name, dev, var="sm80"):
    x, out = ints(2 * 256, -10**9, 10**9, seed=16), np.zeros(2 * 256, I32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.sort_groups(x, 256, descending=True))


@case("cub_sort_hist", "cub_radix_sort_pairs")
def _radix_pairs(name, dev, var="sm80"):
    x = ints(2 * 256, 0, 40, seed=17, dtype=U32)            # many equal keys: stability shows
    keys, vals = np.zeros_like(x), np.zeros(2 * 256, I32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, keys, vals), device=dev)
    np.testing.assert_array_equal(keys, M.sort_groups(x, 256))
    np.testing.assert_array_equal(vals, M.stable_argsort_groups(x, 256))


@case("cub_sort_hist", "cub_radix_sort_bits_striped")
def _radix_bits(name, dev, var="sm80"):
    x, out = ints(2 * 256, 0, 1 << 31, seed=18, dtype=U32), np.zeros(2 * 256, U32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, out), device=dev)
    # striped: thread t's item k has rank k * 128 + t and is stored there, so out is in rank order
    np.testing.assert_array_equal(out, M.sort_by_bits(x, 256, 4, 12))


@case("cub_sort_hist", "cub_merge_sort")
def _merge_sort(name, dev, var="sm80"):
    x, out = ints(2 * 512, -500, 500, seed=19), np.zeros(2 * 512, I32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.sort_groups(x, 512))


@case("cub_sort_hist", "cub_histogram<(cub::CUB_300001_SM_800::BlockHistogramAlgorithm)0>",
      "cub_histogram<(cub::CUB_300001_SM_800::BlockHistogramAlgorithm)1>")
def _histogram(name, dev, var="sm80"):
    x = np.random.default_rng(20).integers(0, 256, 2 * 512).astype(np.uint8)
    x[:100] = 7                                            # a heavy bin
    hist = np.zeros(2 * 256, U32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, hist), device=dev)
    np.testing.assert_array_equal(hist, M.histograms(x, 512))


@case("cub_sort_hist", "cub_shuffle_offset")
def _shuffle(name, dev, var="sm80"):
    x, out = ints(4 * 128, seed=21), np.zeros(4 * 128, I32)
    kernel("cub_sort_hist", name, var)(4, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.shift_left_in_groups(x, 128))


# ---------------------------------------------------------------- cub_warp.cu

@case("cub_warp", "cub_warp_sum<32>", "cub_warp_sum<16>", "cub_warp_sum<8>", "cub_warp_sum<4>")
def _warp_sum(name, dev, var="sm80"):
    lanes = _tparam(name)
    x, out = ints(512, seed=22), np.zeros(512 // lanes, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x, lanes))


@case("cub_warp", "cub_warp_max")
def _warp_max(name, dev, var="sm80"):
    x, out = ints(512, 0, 1 << 32, seed=23, dtype=U32), np.zeros(16, U32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_reduce(x, 32, np.maximum))


@case("cub_warp", "cub_warp_sum_partial")
def _warp_partial(name, dev, var="sm80"):
    x, out = ints(256, seed=24), np.zeros(8, I32)
    kernel("cub_warp", name, var)(1, 256, (x, out, 19), device=dev)
    np.testing.assert_array_equal(out, M.rows(x, 32)[:, :19].sum(axis=1, dtype=I32))


@case("cub_warp", "cub_warp_head_segmented_sum")
def _warp_segmented(name, dev, var="sm80"):
    x, heads = ints(512, seed=25), (ints(512, 0, 5, seed=26) == 0).astype(I32)
    out = np.full(512, 99, I32)
    kernel("cub_warp", name, var)(2, 256, (x, heads, out), device=dev)
    np.testing.assert_array_equal(out, M.head_segmented_sums(x, heads, 32))


@case("cub_warp", "cub_warp_inclusive_sum<32>", "cub_warp_inclusive_sum<16>")
def _warp_inclusive(name, dev, var="sm80"):
    lanes = _tparam(name)
    x, out = ints(512, seed=27), np.zeros(512, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, lanes))


@case("cub_warp", "cub_warp_exclusive_sum")
def _warp_exclusive(name, dev, var="sm80"):
    x, out, tot = ints(512, seed=28), np.zeros(512, I32), np.zeros(16, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out, tot), device=dev)
    np.testing.assert_array_equal(out, M.exclusive_sum(x, 32))
    np.testing.assert_array_equal(tot, M.group_sum(x, 32))


@case("cub_warp", "cub_warp_inclusive_min8")
def _warp_min8(name, dev, var="sm80"):
    x, out = ints(512, seed=29), np.zeros(512, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, 8, np.minimum))


@case("cub_warp", "cub_warp_broadcast")
def _warp_bcast(name, dev, var="sm80"):
    x, out = ints(512, seed=30), np.zeros(512, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.shfl_idx_in_tiles(x, 32, 5))


@case("cub_warp", "cub_warp_load_exchange_store")
def _warp_lxs(name, dev, var="sm80"):
    x, out = ints(2 * 512, seed=31), np.zeros(2 * 512, I32)
    kernel("cub_warp", name, var)(2, 128, (x, out), device=dev)
    # each warp's 128 ints: loaded blocked (lane l: 4l..4l+3), exchanged to striped (lane l:
    # k*32+l), stored as if blocked: out[4l+k] = in[k*32+l] + 10
    want = np.concatenate([M.striped_to_blocked(t, 32, 4) for t in M.rows(x, 128)]) + 10
    np.testing.assert_array_equal(out, want)


@case("cub_warp", "cub_warp_merge_sort")
def _warp_merge(name, dev, var="sm80"):
    x, out = ints(2 * 256, 0, 1000, seed=32, dtype=U32), np.zeros(2 * 256, U32)
    kernel("cub_warp", name, var)(2, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.sort_groups(x, 64))


# ---------------------------------------------------------------- cub_device.cu, thrust_algos.cu

_NS = "cub::CUB_300001_SM_800::detail::"
_SUM_TILE = (_NS + "reduce::DeviceReduceSingleTileKernel<" + _NS + "reduce::policy_hub<int, unsigned int, "
             "cuda::std::__4::plus<void> >::Policy1000, int const*, int*, unsigned int, cuda::std::__4::plus<void>, "
             "int, int, cuda::std::__4::__identity>")
_MAX_TILE = (_NS + "reduce::DeviceReduceSingleTileKernel<" + _NS + "reduce::policy_hub<unsigned int, unsigned int, "
             "cuda::__4::maximum<void> >::Policy1000, unsigned int const*, unsigned int*, unsigned int, "
             "cuda::__4::maximum<void>, unsigned int, unsigned int, cuda::std::__4::__identity>")
_THRUST = "thrust::THRUST_300001_SM_800_NS::"
_FOR_EACH = (_NS + "for_each::static_kernel<" + _NS + "for_each::policy_hub_t::policy_500_t, long, "
             + _THRUST + "cuda_cub::{f} >")
_FILL = _FOR_EACH.format(f="__fill::functor<" + _THRUST + "device_ptr<int>, int>")
_TABULATE = _FOR_EACH.format(f="__tabulate::functor<" + _THRUST + "device_ptr<int>, " + _THRUST +
                             "system::detail::generic::detail::compute_sequence_value<int, void>, long>")


def _single_tile(stem, name, x, init, dev, var):
    out = np.zeros(1, x.dtype)
    kernel(stem, name)(1, 256, (x, out, x.size, b"\0", init, b"\0"), device=dev)
    return out[0]


@case("cub_device", _SUM_TILE)
def _device_reduce_sum(name, dev, var="sm80"):
    x = ints(700, seed=33)
    assert _single_tile("cub_device", name, x, 5, dev, var) == x.sum(dtype=I32) + 5


@case("cub_device", _MAX_TILE)
def _device_reduce_max(name, dev, var="sm80"):
    x = ints(1000, 0, 1 << 32, seed=34, dtype=U32)
    assert _single_tile("cub_device", name, x, 0, dev, var) == x.max()


@case("thrust_algos", _FILL)
def _thrust_fill(name, dev, var="sm80"):
    a = ptxvm.to_device(np.full(1000, -1, I32))
    try:
        functor = struct.pack("<Qi4x", a.ptr, 42)
        kernel("thrust_algos", name, var)(4, 256, (900, functor), device=dev)
        got = a.copy_to_host()
    finally:
        a.free()
    np.testing.assert_array_equal(got, np.where(np.arange(1000) < 900, 42, -1))


@case("thrust_algos", _TABULATE)
def _thrust_sequence(name, dev, var="sm80"):
    a = ptxvm.to_device(np.zeros(1000, I32))
    try:
        functor = struct.pack("<Qii", a.ptr, 3, 2)       # thrust::sequence(first, last, 3, 2)
        kernel("thrust_algos", name, var)(4, 256, (1000, functor), device=dev)
        got = a.copy_to_host()
    finally:
        a.free()
    np.testing.assert_array_equal(got, 3 + 2 * np.arange(1000))


# ---------------------------------------------------------------- cg_tiles.cu

@case("cg_tiles", "cg_tile_sum<16>", "cg_tile_sum<8>", "cg_tile_sum<4>", "cg_tile_sum<2>")
def _cg_sum(name, dev, var="sm80"):
    n = _tparam(name)
    x, out = ints(512, seed=40), np.zeros(512 // n, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x, n))


@case("cg_tiles", "cg_tile16_bitops")
def _cg_bitops(name, dev, var="sm80"):
    x = ints(512, 0, 1 << 32, seed=41, dtype=U32)
    outs = [np.zeros(32, U32) for _ in range(4)]
    kernel("cg_tiles", name, var)(2, 256, (x, *outs), device=dev)
    for got, op in zip(outs, (np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.minimum)):
        np.testing.assert_array_equal(got, M.group_reduce(x, 16, op))


@case("cg_tiles", "cg_tile32_fsum")
def _cg_fsum(name, dev, var="sm80"):
    x = ints(512, -1000, 1000, seed=42).astype(np.float32) / 4     # every partial sum exact
    out = np.zeros(16, np.float32)
    kernel("cg_tiles", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.rows(x, 32).sum(axis=1))


@case("cg_tiles", "cg_tile16_scans")
def _cg_scans(name, dev, var="sm80"):
    x, inc, exc = ints(512, seed=43), np.zeros(512, I32), np.zeros(512, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, inc, exc), device=dev)
    np.testing.assert_array_equal(inc, M.inclusive_scan(x, 16))
    np.testing.assert_array_equal(exc, M.exclusive_sum(x, 16))


@case("cg_tiles", "cg_tile32_scan_max")
def _cg_scan_max(name, dev, var="sm80"):
    x, out = ints(512, seed=44), np.zeros(512, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, 32, np.maximum))


@case("cg_tiles", "cg_labeled_sum")
def _cg_labeled(name, dev, var="sm80"):
    x, lab = ints(256, seed=45), ints(256, 0, 4, seed=46)
    outs = [np.zeros(256, I32) for _ in range(3)]
    kernel("cg_tiles", name, var)(1, 256, (x, lab, *outs), device=dev)
    for got, want in zip(outs, M.labeled_partition(x, lab)):
        np.testing.assert_array_equal(got, want)


@case("cg_tiles", "cg_binary_partition_count")
def _cg_binary(name, dev, var="sm80"):
    x, out = ints(256, seed=47), np.zeros(256, I32)
    kernel("cg_tiles", name, var)(1, 256, (x, out), device=dev)
    odd = M.rows(x & 1, 32)
    want = np.where(odd == 1, odd.sum(axis=1, keepdims=True), 32 - odd.sum(axis=1, keepdims=True))
    np.testing.assert_array_equal(out, want.reshape(-1))


@case("cg_tiles", "cg_coalesced_compact")
def _cg_coalesced(name, dev, var="sm80"):
    x = ints(256, -3, 3, seed=48)
    x[64:96] = -1                                           # a warp with no active lane
    rank, count = np.zeros(256, I32), np.full(8, -7, I32)
    kernel("cg_tiles", name, var)(1, 256, (x, rank, count), device=dev)
    want_rank, want_count = M.active_ranks(x > 0)
    np.testing.assert_array_equal(rank, want_rank)
    np.testing.assert_array_equal(count, np.where(want_count > 0, want_count, -7))


@case("cg_tiles", "cg_coalesced_aggregated_atomic")
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


@case("cg_tiles", "cg_tile8_meta")
def _cg_meta(name, dev, var="sm80"):
    out = np.zeros(2 * 128, I32)
    kernel("cg_tiles", name, var)(2, 128, (out,), device=dev)
    t = np.tile(np.arange(128), 2)
    np.testing.assert_array_equal(out, (t // 8) * 100 + 16)


@case("cg_tiles", "cg_tile16_shuffles")
def _cg_shuffles(name, dev, var="sm80"):
    x, out = ints(512, seed=50), np.zeros(512, I32)
    kernel("cg_tiles", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.shfl_xor_in_tiles(x, 16, 5) + M.shfl_idx_in_tiles(x, 16, 3))


@case("cg_tiles", "cg_tile8_votes")
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


@case("cg_tiles", "cg_block_ranks")
def _cg_block(name, dev, var="sm80"):
    out = np.zeros(2 * 256, I32)
    kernel("cg_tiles", name, var)(2, 256, (out,), device=dev)
    t = np.arange(512)
    np.testing.assert_array_equal(out, 255 - t % 256 + 1000 * (t // 256))


# ---------------------------------------------------------------- warp_asm.cu

@case("warp_asm", "warpsize_lane_ids")
def _ws_ids(name, dev, var="sm80"):
    out = np.zeros(2 * 128, I32)
    kernel("warp_asm", name, var)(2, 128, (out,), device=dev)
    t = np.tile(np.arange(128), 2)
    np.testing.assert_array_equal(out, t % 32 + 1000 * (t // 32) + 32 * 100000)


@case("warp_asm", "warpsize_loop_sum")
def _ws_sum(name, dev, var="sm80"):
    x, out = ints(512, seed=60), np.zeros(16, I32)
    kernel("warp_asm", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x, 32))


@case("warp_asm", "asm_shfl_up_scan")
def _asm_scan(name, dev, var="sm80"):
    x, out = ints(512, 0, 1 << 32, seed=61, dtype=U32), np.zeros(512, U32)
    kernel("warp_asm", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, 32))


@case("warp_asm", "asm_shfl_bfly_max")
def _asm_bfly(name, dev, var="sm80"):
    x, out = ints(512, -10**9, 10**9, seed=62), np.zeros(512, I32)
    kernel("warp_asm", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, np.repeat(M.group_reduce(x, 32, np.maximum), 32))


@case("warp_asm", "asm_nested_shadow")
def _asm_shadow(name, dev, var="sm80"):
    x, out = ints(256, -10**6, 10**6, seed=63), np.zeros(256, I32)
    kernel("warp_asm", name, var)(1, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, (x + 7) + 3 * x)      # inner t = x + 7, outer t = 3x


@case("warp_asm", "asm_range_bytes")
def _asm_bytes(name, dev, var="sm80"):
    x, out = ints(256, 0, 1 << 32, seed=64, dtype=U32), np.zeros(256, U32)
    kernel("warp_asm", name, var)(1, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.bytes_sum(x))


@case("warp_asm", "asm_predicate_range")
def _asm_pred(name, dev, var="sm80"):
    x, out = ints(256, 0, 30, seed=65), np.zeros(256, I32)
    kernel("warp_asm", name, var)(1, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, ((x >= 10) & (x < 20)).astype(I32))


@case("warp_asm", "asm_laneid_lanemask")
def _asm_lane(name, dev, var="sm80"):
    lane, lt = np.zeros(256, I32), np.zeros(256, I32)
    kernel("warp_asm", name, var)(2, 128, (lane, lt), device=dev)
    np.testing.assert_array_equal(lane, np.arange(256) % 32)
    np.testing.assert_array_equal(lt, np.arange(256) % 32)     # popc(%lanemask_lt) == lane


@case("warp_asm", "asm_add64_carry")
def _asm_add64(name, dev, var="sm80"):
    rng = np.random.default_rng(66)
    a, b = (rng.integers(0, 1 << 64, 256, dtype=np.uint64, endpoint=False) for _ in range(2))
    a[:4] = 0xFFFFFFFF                                     # low halves that carry
    out = np.zeros(256, np.uint64)
    kernel("warp_asm", name, var)(1, 256, (a, b, out), device=dev)
    np.testing.assert_array_equal(out, a + b)              # numpy wraps mod 2^64


@case("warp_asm", "asm_vote_popc")
def _asm_vote(name, dev, var="sm80"):
    x, out = ints(512, seed=67), np.zeros(16, I32)
    kernel("warp_asm", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.rows(x & 1, 32).sum(axis=1))


@case("warp_asm", "asm_prmt_reverse")
def _asm_prmt(name, dev, var="sm80"):
    x, out = ints(256, 0, 1 << 32, seed=68, dtype=U32), np.zeros(256, U32)
    kernel("warp_asm", name, var)(1, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.byte_reverse(x))


# ---------------------------------------------------------------- libcuxx.cu

@case("libcuxx", "cuxx_atomic_ref_add")
def _cuxx_add(name, dev, var="sm80"):
    x, c = ints(1024, seed=70), np.zeros(1, I32)
    kernel("libcuxx", name, var)(4, 256, (x, c), device=dev)
    assert c[0] == x.sum()


@case("libcuxx", "cuxx_atomic_ref_minmax")
def _cuxx_minmax(name, dev, var="sm80"):
    x = ints(1024, -10**9, 10**9, seed=71)
    lo, hi = np.full(1, 2**31 - 1, I32), np.full(1, -2**31, I32)
    kernel("libcuxx", name, var)(4, 256, (x, lo, hi), device=dev)
    assert (lo[0], hi[0]) == (x.min(), x.max())


@case("libcuxx", "cuxx_atomic_ref_bits")
def _cuxx_bits(name, dev, var="sm80"):
    x = ints(512, 0, 1 << 32, seed=72, dtype=U32) | U32(0x10)     # a bit every value has
    out = np.zeros(6, U32)
    kernel("libcuxx", name, var)(2, 256, (x, out), device=dev)
    want = np.stack([M.group_reduce(x, 256, op) for op in (np.bitwise_or, np.bitwise_and, np.bitwise_xor)], 1)
    np.testing.assert_array_equal(out, want.reshape(-1))


@case("libcuxx", "cuxx_atomic_cas_loop")
def _cuxx_cas(name, dev, var="sm80"):
    c = np.zeros(1, U32)
    kernel("libcuxx", name, var)(2, 128, (c,), device=dev)
    assert c[0] == M.iterate_3x_plus_1(256)


@case("libcuxx", "cuxx_atomic_exchange_sum")
def _cuxx_xchg(name, dev, var="sm80"):
    x, out = ints(512, seed=73), np.zeros(2, I32)
    kernel("libcuxx", name, var)(2, 256, (x, out), device=dev)
    # the swapped-out values are 0 and all values but the one left in the cell, in any order
    np.testing.assert_array_equal(out, M.group_sum(x, 256))


@case("libcuxx", "cuxx_shared_atomic_tickets")
def _cuxx_tickets(name, dev, var="sm80"):
    tickets, sums = np.full(512, -1, I32), np.zeros(2, I32)
    kernel("libcuxx", name, var)(2, 256, (tickets, sums), device=dev)
    for b in range(2):
        assert sorted(tickets[b * 256:(b + 1) * 256]) == list(range(256))
    np.testing.assert_array_equal(sums, [255 * 256 // 2] * 2)


@case("libcuxx_barrier", "cuxx_block_barrier", xfail="cuda::barrier compiles to mbarrier.init/arrive/test_wait: "
      "`mbarrier.init.shared.b64` is not supported by the interpreter yet / has no lowering to LLVM yet")
def _cuxx_barrier(name, dev, var="sm80"):
    x, out = ints(256, seed=74), np.zeros(256, I32)
    kernel("libcuxx_barrier", name, var)(1, 256, (x, out), device=dev)
    t = np.arange(256)
    np.testing.assert_array_equal(out, 2 * x[(t + 2) % 256])


@case("libcuxx", "cuxx_bit_ops")
def _cuxx_bitops(name, dev, var="sm80"):
    x = ints(256, 0, 1 << 32, seed=75, dtype=U32)
    x[:3] = (0, 1, 0x80000000)
    outs = [np.zeros(256, U32) for _ in range(6)]
    kernel("libcuxx", name, var)(1, 256, (x, *outs), device=dev)
    want = (M.popcount(x), M.countl_zero(x), M.countr_zero(x), M.rotl(x, 7), M.bit_floor(x), M.bit_width(x))
    for got, w in zip(outs, want):
        np.testing.assert_array_equal(got, w)


@case("libcuxx", "cuxx_array_clamp")
def _cuxx_clamp(name, dev, var="sm80"):
    x, out = ints(256, -100, 100, seed=76), np.zeros(256, I32)
    kernel("libcuxx", name, var)(1, 256, (x, out, -50 & 0xFFFFFFFF, 60), device=dev)   # int params are .u32 in nvcc PTX
    np.testing.assert_array_equal(out, np.clip(2 * x + 5, -50, 60))   # the array sums to 2x + 5


# ---------------------------------------------------------------- the tests

LABELS = {_SUM_TILE: "DeviceReduce::Sum/single-tile", _MAX_TILE: "DeviceReduce::Max/single-tile",
          _FILL: "thrust::fill/for_each", _TABULATE: "thrust::sequence/for_each"}
LABELS |= {_LS.format(a): f"cub_load_store<{v}>" for a, v in LOAD_STORE.items()}
LABELS |= {f"cub_histogram<(cub::CUB_300001_SM_800::BlockHistogramAlgorithm){a}>": f"cub_histogram<{v}>"
           for a, v in ((0, "ATOMIC"), (1, "SORT"))}


def _params(stems=STEMS):
    for name, (fn, stem, xfail) in CASES.items():
        marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
        label = LABELS.get(name, name)
        if stem in stems:
            yield pytest.param(name, marks=marks, id=re.sub(r"[^\w<>,:/]+", "_", label))


@pytest.mark.parametrize("name", list(_params()))
def test_kernel_matches_its_model(name: str, executor: str) -> None:
    fn, _, _ = CASES[name]
    fn(name, executor)


ODD_FRAME = ("interpreter bug: a callee's .local frame of a size not a multiple of 4 (-G code: "
             "by-value 1-3 byte structs) corrupts 4-byte accesses to the caller's frame in lanes "
             "t % 4 != 0; repro tests/data/realworld_repros/interp_odd_local_frame.ptx")
# -G kernels the interpreter gets wrong (the cpu executor runs them right), and how it shows
DEBUG_BUILD_BUGS = {
    "cub_warp_inclusive_min8": "KernelFault: misaligned local access: 4-byte access at 0x2b",
    "cub_warp_load_exchange_store": "ValueError from numpy inside ptxvm: When changing to a larger dtype, "
                                    "its size must be a divisor of the total size in bytes",
    "cub_warp_merge_sort": "wrong keys (90% of them)",
    "cuxx_array_clamp": "wrong values in 36 of 256 lanes",
}


def _variant_params():
    # nvcc's -G output of cub_device and thrust_algos is over the fixture size limit (MANIFEST.json)
    for p in _params([s for s in STEMS if s not in ("cub_device", "thrust_algos")]):
        for variant in ("sm90", "sm80-lineinfo", "sm80-G"):
            (name,), marks = p.values, list(p.marks)
            if variant == "sm80-G" and name in DEBUG_BUILD_BUGS:
                marks.append(pytest.mark.xfail(strict=True, reason=f"{ODD_FRAME}: {DEBUG_BUILD_BUGS[name]}"))
            yield pytest.param(name, variant, marks=marks, id=f"{p.id}-{variant}")


@pytest.mark.slow
@pytest.mark.parametrize("name,variant", list(_variant_params()))
def test_other_nvcc_variants_match_the_model_on_the_interpreter(name: str, variant: str) -> None:
    fn, _, _ = CASES[name]
    fn(name, "interp", variant)


@pytest.mark.parametrize("dev", [pytest.param("interp", marks=pytest.mark.xfail(strict=True, reason=ODD_FRAME)),
                                 "cpu"])
def test_odd_sized_local_frame_repro(dev: str) -> None:
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "data" / "realworld_repros" / "interp_odd_local_frame.ptx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = ptxvm.Module.from_file(path)["_Z9array_sumPKiPiii"]
    x, out = ints(256, -100, 100, seed=76), np.zeros(256, I32)
    k(1, 256, (x, out, -50 & 0xFFFFFFFF, 60), device=dev)
    s = 2 * x + 5
    np.testing.assert_array_equal(out, np.clip(np.maximum(s, np.minimum(s, -51)), -50, 60))


def test_a_fast_sample_of_other_variants() -> None:
    """One kernel per variant in the default run (the whole set is -m slow)."""
    for variant in ("sm90", "sm80-lineinfo", "sm80-G"):
        _asm_scan("asm_shfl_up_scan", "interp", variant)
        _reduce_sum("cub_reduce_sum<128>", "interp", variant)


def test_every_case_names_one_kernel_and_the_corpus_is_big_enough() -> None:
    """The cases name real kernels, and the corpus has >= 60 kernels of our own (CUB's
    EmptyKernel, emitted into every file that includes CUB, not counted)."""
    for name, (_, stem, _) in CASES.items():
        kernel(stem, name)
    own = [k for s in STEMS for k in module(s).kernels if "EmptyKernel" not in k]
    assert len(own) >= 60, len(own)
    assert len(CASES) >= 60, len(CASES)
