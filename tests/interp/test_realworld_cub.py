"""The CUB and Thrust part of the real-world corpus (tests/cuda/cub_block.cu, cub_sort_hist.cu,
cub_warp.cu, cub_device.cu, thrust_algos.cu as nvcc 13 compiled them, tests/fixtures/nvcc/*):
every kernel with a model runs on every CPU executor (the ``executor`` fixture: interp and cpu)
and gives exactly what the numpy model in tests/models/realworld.py computes (integer inputs,
or floats whose sums are exact). The device-wide kernels (DeviceReduce, DeviceScan, Thrust's
sort/reduce/transform/fill/sequence) are launched the way their dispatch layer launches them for
a small input. Cooperative groups, inline asm and libcu++: test_realworld_corpus.py."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import ptxvm

from models import realworld as M
from models.realworld_launch import I32, U32, Cases, ints, kernel, tparam

CASES = Cases()


# ---------------------------------------------------------------- cub_block.cu

@CASES.case("cub_block", "cub_reduce_sum<64>", "cub_reduce_sum<128>", "cub_reduce_sum<256>")
def _reduce_sum(name, dev, var="sm80"):
    b = tparam(name)
    x, out = ints(4 * b, seed=b), np.zeros(4, I32)
    kernel("cub_block", name, var)(4, b, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x, b))


@CASES.case("cub_block", "cub_reduce_max_warps<128>", "cub_reduce_max_warps<256>")
def _reduce_max(name, dev, var="sm80"):
    b = tparam(name)
    x, out = ints(4 * b, -10**6, 10**6, seed=3), np.zeros(4, I32)
    kernel("cub_block", name, var)(4, b, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_reduce(x, b, np.maximum))


@CASES.case("cub_block", "cub_reduce_min_items4")
def _reduce_min4(name, dev, var="sm80"):
    x, out = ints(4 * 512, -10**6, 10**6, seed=4), np.zeros(4, I32)
    kernel("cub_block", name, var)(4, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_reduce(x, 512, np.minimum))


@CASES.case("cub_block", "cub_reduce_partial")
def _reduce_partial(name, dev, var="sm80"):
    x, out = ints(2 * 128, seed=5), np.zeros(2, I32)
    kernel("cub_block", name, var)(2, 128, (x, out, 77), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x.reshape(2, 128)[:, :77].reshape(-1), 77))


@CASES.case("cub_block", "cub_scan_inclusive<128>", "cub_scan_inclusive<256>")
def _scan_inclusive(name, dev, var="sm80"):
    b = tparam(name)
    x, out, tot = ints(4 * b, seed=6), np.zeros(4 * b, I32), np.zeros(4, I32)
    kernel("cub_block", name, var)(4, b, (x, out, tot), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, b))
    np.testing.assert_array_equal(tot, M.group_sum(x, b))


@CASES.case("cub_block", "cub_scan_exclusive_warps<64>", "cub_scan_exclusive_warps<256>")
def _scan_exclusive(name, dev, var="sm80"):
    b = tparam(name)
    x, out = ints(4 * b, seed=7), np.zeros(4 * b, I32)
    kernel("cub_block", name, var)(4, b, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.exclusive_sum(x, b))


@CASES.case("cub_block", "cub_scan_max_items4")
def _scan_max4(name, dev, var="sm80"):
    x, out = ints(2 * 512, -1000, 1000, seed=8), np.zeros(2 * 512, I32)
    kernel("cub_block", name, var)(2, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, 512, np.maximum))


@CASES.case("cub_block", "cub_scan_exclusive_seed")
def _scan_seed(name, dev, var="sm80"):
    x, out = ints(4 * 128, 0, 1 << 30, seed=9, dtype=U32), np.zeros(4 * 128, U32)
    kernel("cub_block", name, var)(4, 128, (x, out, 0xFFFFFF00), device=dev)     # sums wrap mod 2^32
    np.testing.assert_array_equal(out, M.exclusive_scan_seed(x, 128, 0xFFFFFF00))


LOAD_STORE = {0: "DIRECT", 1: "STRIPED", 2: "VECTORIZE", 3: "TRANSPOSE", 4: "WARP_TRANSPOSE"}
_LS = "cub_load_store<(cub::CUB_300001_SM_800::BlockLoadAlgorithm){0}, (cub::CUB_300001_SM_800::BlockStoreAlgorithm){0}>"


@CASES.case("cub_block", *(_LS.format(a) for a in LOAD_STORE))
def _load_store(name, dev, var="sm80"):
    x, out = ints(4 * 512, seed=10), np.zeros(4 * 512, I32)
    kernel("cub_block", name, var)(4, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, x + 1)      # every algorithm: the same blocked arrangement


@CASES.case("cub_block", "cub_load_guarded")
def _load_guarded(name, dev, var="sm80"):
    x, out = ints(256, seed=11), np.zeros(256, I32)
    kernel("cub_block", name, var)(1, 128, (x, out, 150), device=dev)
    np.testing.assert_array_equal(out, np.where(np.arange(256) < 150, 3 * x, 21))


@CASES.case("cub_block", "cub_exchange_striped_to_blocked")
def _exchange(name, dev, var="sm80"):
    x, out = ints(4 * 512, seed=12), np.zeros(4 * 512, I32)
    kernel("cub_block", name, var)(4, 128, (x, out), device=dev)
    # thread t loads striped positions k*128+t, exchanges to blocked (t*4+k), stores blocked:
    # the tile ends up where it started
    np.testing.assert_array_equal(out, x)


@CASES.case("cub_block", "cub_flag_heads")
def _flag_heads(name, dev, var="sm80"):
    x, f = ints(4 * 256, 0, 3, seed=13), np.zeros(4 * 256, I32)
    kernel("cub_block", name, var)(4, 128, (x, f), device=dev)
    np.testing.assert_array_equal(f, M.flag_heads(x, 256))


@CASES.case("cub_block", "cub_adjacent_difference")
def _adj_diff(name, dev, var="sm80"):
    x, out = ints(4 * 256, seed=14), np.zeros(4 * 256, I32)
    kernel("cub_block", name, var)(4, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.subtract_left(x, 256))


# ---------------------------------------------------------------- cub_sort_hist.cu

_SORTS = {"cub_radix_sort<unsigned int, 128, 4>": (U32, 128, 4), "cub_radix_sort<int, 128, 2>": (I32, 128, 2),
          "cub_radix_sort<unsigned short, 64, 4>": (np.uint16, 64, 4),
          "cub_radix_sort<unsigned long long, 64, 2>": (np.uint64, 64, 2),
          "cub_radix_sort<float, 128, 2>": (np.float32, 128, 2)}


@CASES.case("cub_sort_hist", *_SORTS)
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


@CASES.case("cub_sort_hist", "cub_radix_sort_desc")
def _radix_desc(name, dev, var="sm80"):
    x, out = ints(2 * 256, -10**9, 10**9, seed=16), np.zeros(2 * 256, I32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.sort_groups(x, 256, descending=True))


@CASES.case("cub_sort_hist", "cub_radix_sort_pairs")
def _radix_pairs(name, dev, var="sm80"):
    x = ints(2 * 256, 0, 40, seed=17, dtype=U32)            # many equal keys: stability shows
    keys, vals = np.zeros_like(x), np.zeros(2 * 256, I32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, keys, vals), device=dev)
    np.testing.assert_array_equal(keys, M.sort_groups(x, 256))
    np.testing.assert_array_equal(vals, M.stable_argsort_groups(x, 256))


@CASES.case("cub_sort_hist", "cub_radix_sort_bits_striped")
def _radix_bits(name, dev, var="sm80"):
    x, out = ints(2 * 256, 0, 1 << 31, seed=18, dtype=U32), np.zeros(2 * 256, U32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, out), device=dev)
    # striped: thread t's item k has rank k * 128 + t and is stored there, so out is in rank order
    np.testing.assert_array_equal(out, M.sort_by_bits(x, 256, 4, 12))


@CASES.case("cub_sort_hist", "cub_merge_sort")
def _merge_sort(name, dev, var="sm80"):
    x, out = ints(2 * 512, -500, 500, seed=19), np.zeros(2 * 512, I32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.sort_groups(x, 512))


@CASES.case("cub_sort_hist", "cub_histogram<(cub::CUB_300001_SM_800::BlockHistogramAlgorithm)0>",
      "cub_histogram<(cub::CUB_300001_SM_800::BlockHistogramAlgorithm)1>")
def _histogram(name, dev, var="sm80"):
    x = np.random.default_rng(20).integers(0, 256, 2 * 512).astype(np.uint8)
    x[:100] = 7                                            # a heavy bin
    hist = np.zeros(2 * 256, U32)
    kernel("cub_sort_hist", name, var)(2, 128, (x, hist), device=dev)
    np.testing.assert_array_equal(hist, M.histograms(x, 512))


@CASES.case("cub_sort_hist", "cub_shuffle_offset")
def _shuffle(name, dev, var="sm80"):
    x, out = ints(4 * 128, seed=21), np.zeros(4 * 128, I32)
    kernel("cub_sort_hist", name, var)(4, 128, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.shift_left_in_groups(x, 128))


# ---------------------------------------------------------------- cub_warp.cu

@CASES.case("cub_warp", "cub_warp_sum<32>", "cub_warp_sum<16>", "cub_warp_sum<8>", "cub_warp_sum<4>")
def _warp_sum(name, dev, var="sm80"):
    lanes = tparam(name)
    x, out = ints(512, seed=22), np.zeros(512 // lanes, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_sum(x, lanes))


@CASES.case("cub_warp", "cub_warp_max")
def _warp_max(name, dev, var="sm80"):
    x, out = ints(512, 0, 1 << 32, seed=23, dtype=U32), np.zeros(16, U32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.group_reduce(x, 32, np.maximum))


@CASES.case("cub_warp", "cub_warp_sum_partial")
def _warp_partial(name, dev, var="sm80"):
    x, out = ints(256, seed=24), np.zeros(8, I32)
    kernel("cub_warp", name, var)(1, 256, (x, out, 19), device=dev)
    np.testing.assert_array_equal(out, M.rows(x, 32)[:, :19].sum(axis=1, dtype=I32))


@CASES.case("cub_warp", "cub_warp_head_segmented_sum")
def _warp_segmented(name, dev, var="sm80"):
    x, heads = ints(512, seed=25), (ints(512, 0, 5, seed=26) == 0).astype(I32)
    out = np.full(512, 99, I32)
    kernel("cub_warp", name, var)(2, 256, (x, heads, out), device=dev)
    np.testing.assert_array_equal(out, M.head_segmented_sums(x, heads, 32))


@CASES.case("cub_warp", "cub_warp_inclusive_sum<32>", "cub_warp_inclusive_sum<16>")
def _warp_inclusive(name, dev, var="sm80"):
    lanes = tparam(name)
    x, out = ints(512, seed=27), np.zeros(512, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, lanes))


@CASES.case("cub_warp", "cub_warp_exclusive_sum")
def _warp_exclusive(name, dev, var="sm80"):
    x, out, tot = ints(512, seed=28), np.zeros(512, I32), np.zeros(16, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out, tot), device=dev)
    np.testing.assert_array_equal(out, M.exclusive_sum(x, 32))
    np.testing.assert_array_equal(tot, M.group_sum(x, 32))


@CASES.case("cub_warp", "cub_warp_inclusive_min8")
def _warp_min8(name, dev, var="sm80"):
    x, out = ints(512, seed=29), np.zeros(512, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.inclusive_scan(x, 8, np.minimum))


@CASES.case("cub_warp", "cub_warp_broadcast")
def _warp_bcast(name, dev, var="sm80"):
    x, out = ints(512, seed=30), np.zeros(512, I32)
    kernel("cub_warp", name, var)(2, 256, (x, out), device=dev)
    np.testing.assert_array_equal(out, M.shfl_idx_in_tiles(x, 32, 5))


@CASES.case("cub_warp", "cub_warp_load_exchange_store")
def _warp_lxs(name, dev, var="sm80"):
    x, out = ints(2 * 512, seed=31), np.zeros(2 * 512, I32)
    kernel("cub_warp", name, var)(2, 128, (x, out), device=dev)
    # each warp's 128 ints: loaded blocked (lane l: 4l..4l+3), exchanged to striped (lane l:
    # k*32+l), stored as if blocked: out[4l+k] = in[k*32+l] + 10
    want = np.concatenate([M.striped_to_blocked(t, 32, 4) for t in M.rows(x, 128)]) + 10
    np.testing.assert_array_equal(out, want)


@CASES.case("cub_warp", "cub_warp_merge_sort")
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
_SCAN_INIT = _NS + "scan::DeviceScanInitKernel<cub::CUB_300001_SM_800::ScanTileState<int, true> >"
_SCAN = (_NS + "scan::DeviceScanKernel<" + _NS + "scan::policy_hub<int, int, int, unsigned int, "
         "cuda::std::__4::plus<void> >::Policy1000, int const*, int*, cub::CUB_300001_SM_800::ScanTileState<int, "
         "true>, cuda::std::__4::plus<void>, cub::CUB_300001_SM_800::NullType, unsigned int, int, false, "
         "cub::CUB_300001_SM_800::NullType>")
_THRUST = "thrust::THRUST_300001_SM_800_NS::"
_SORT_TILE = (_NS + "radix_sort::DeviceRadixSortSingleTileKernel<" + _NS + "radix::policy_hub<unsigned int, "
              "cub::CUB_300001_SM_800::NullType, unsigned long long>::Policy1000, (cub::CUB_300001_SM_800::SortOrder)0, "
              "unsigned int, cub::CUB_300001_SM_800::NullType, unsigned long long, " + _NS + "identity_decomposer_t>")
_THRUST_SUM_TILE = (_NS + "reduce::DeviceReduceSingleTileKernel<" + _NS + "reduce::policy_hub<int, unsigned int, "
                    "cuda::std::__4::plus<int> >::Policy1000, " + _THRUST + "device_ptr<int const>, int*, unsigned int, "
                    "cuda::std::__4::plus<int>, int, int, cuda::std::__4::__identity>")
# CUB's transform kernels (the kernel_arg<...> pack expansion), as c++filt names them
_SAXPY = (_NS + "transform::transform_kernel<" + _NS + "transform::policy_hub<true, cuda::std::__4::tuple<" + _THRUST
          + "device_ptr<int>, " + _THRUST + "device_ptr<int> > >::policy1000, int, saxpy_int, " + _THRUST
          + "device_ptr<int>, int*, int*>")
_SQUARE = (_NS + "transform::transform_kernel<" + _NS + "transform::policy_hub<true, cuda::std::__4::tuple<" + _THRUST
           + "device_ptr<unsigned int> > >::policy1000, int, square_u, " + _THRUST + "device_ptr<unsigned int>, "
           "unsigned int*>")
_FOR_EACH = (_NS + "for_each::static_kernel<" + _NS + "for_each::policy_hub_t::policy_500_t, long, "
             + _THRUST + "cuda_cub::{f} >")
_FILL = _FOR_EACH.format(f="__fill::functor<" + _THRUST + "device_ptr<int>, int>")
_TABULATE = _FOR_EACH.format(f="__tabulate::functor<" + _THRUST + "device_ptr<int>, " + _THRUST +
                             "system::detail::generic::detail::compute_sequence_value<int, void>, long>")


def _single_tile(stem, name, x, init, dev, var):
    out = np.zeros(1, x.dtype)
    kernel(stem, name)(1, 256, (x, out, x.size, b"\0", init, b"\0"), device=dev)
    return out[0]


@CASES.case("cub_device", _SUM_TILE)
def _device_reduce_sum(name, dev, var="sm80"):
    x = ints(700, seed=33)
    assert _single_tile("cub_device", name, x, 5, dev, var) == x.sum(dtype=I32) + 5


@CASES.case("cub_device", _MAX_TILE)
def _device_reduce_max(name, dev, var="sm80"):
    x = ints(1000, 0, 1 << 32, seed=34, dtype=U32)
    assert _single_tile("cub_device", name, x, 0, dev, var) == x.max()


@CASES.case("cub_device", _SCAN)
def _device_inclusive_sum(name, dev, var="sm80"):
    """DeviceScan::InclusiveSum as its dispatch launches it: the init kernel clears the tile
    descriptors (32 padding words + one 8-byte {status, value} per tile), then one CTA per tile
    (sm_80's policy: 320 threads x 12 items, sm_90's: 128 x 24, read from the PTX's .maxntid and
    tile arithmetic), the second tile taking its prefix from the first through the decoupled
    look-back."""
    n, tiles = 5000, 2
    block = 128 if var == "sm90" else 320
    x = ints(n, seed=35)
    out = np.zeros(n, I32)
    desc = ptxvm.to_device(np.zeros(2 * (32 + tiles), U32))
    try:
        state = struct.pack("<Q", desc.ptr)
        kernel("cub_device", _SCAN_INIT, var)(1, 128, (state, tiles), device=dev)
        kernel("cub_device", name, var)(tiles, block, (x, out, state, 0, b"\0", b"\0", n), device=dev)
    finally:
        desc.free()
    np.testing.assert_array_equal(out, np.cumsum(x, dtype=I32))


@CASES.case("thrust_algos", _SORT_TILE)
def _thrust_sort_single_tile(name, dev, var="sm80"):
    """thrust::sort of a small key range: CUB's single-tile radix sort kernel, one CTA of 256,
    keys only (the value pointers are null), all 32 key bits."""
    x = ints(1000, 0, 1 << 32, seed=36, dtype=U32)
    x[:50] = 12345                                        # duplicates
    out = np.zeros_like(x)
    kernel("thrust_algos", name, var)(1, 256, (x, out, 0, 0, x.size, 0, 32, b"\0"), device=dev)
    np.testing.assert_array_equal(out, np.sort(x))


@CASES.case("thrust_algos", _THRUST_SUM_TILE)
def _thrust_reduce(name, dev, var="sm80"):
    """thrust::reduce(first, last, 0, plus<int>()) of a small range: the single-tile kernel,
    the input iterator a device_ptr passed by value (8 bytes)."""
    x = ints(900, seed=37)
    out = np.zeros(1, I32)
    d = ptxvm.to_device(x)
    try:
        kernel("thrust_algos", name, var)(1, 256, (struct.pack("<Q", d.ptr), out, x.size, b"\0", 0, b"\0"),
                                          device=dev)
    finally:
        d.free()
    assert out[0] == x.sum(dtype=I32)


def _transform(name, dev, var, op: bytes, inputs, n=1000, per_thread=2):
    """cub::DeviceTransform's kernel as thrust::transform launches it: (num_items,
    items_per_thread, op by value, the output device_ptr by value, one 16-byte kernel_arg per input whose first 8 bytes
    are the pointer); a CTA of 256 covers 256 * items_per_thread items."""
    bufs = [ptxvm.to_device(a) for a in inputs]
    out = ptxvm.to_device(np.zeros(n, inputs[0].dtype))
    try:
        args = [struct.pack("<Q8x", b.ptr) for b in bufs]
        grid = -(-n // (256 * per_thread))
        kernel("thrust_algos", name, var)(grid, 256, (n, per_thread, op, struct.pack("<Q", out.ptr), *args),
                                          device=dev)
        return out.copy_to_host()
    finally:
        for b in (*bufs, out):
            b.free()


@CASES.case("thrust_algos", _SAXPY)
def _thrust_saxpy(name, dev, var="sm80"):
    x, y = ints(1000, seed=38), ints(1000, seed=39)
    out = _transform(name, dev, var, struct.pack("<i", 3), (x, y))
    np.testing.assert_array_equal(out, 3 * x + y)


@CASES.case("thrust_algos", _SQUARE)
def _thrust_square(name, dev, var="sm80"):
    x = ints(1000, 0, 1 << 32, seed=40, dtype=U32)
    out = _transform(name, dev, var, b"\0", (x,))
    np.testing.assert_array_equal(out, x * x)                 # wraps mod 2^32 like the kernel


@CASES.case("thrust_algos", _FILL)
def _thrust_fill(name, dev, var="sm80"):
    a = ptxvm.to_device(np.full(1000, -1, I32))
    try:
        functor = struct.pack("<Qi4x", a.ptr, 42)
        kernel("thrust_algos", name, var)(4, 256, (900, functor), device=dev)
        got = a.copy_to_host()
    finally:
        a.free()
    np.testing.assert_array_equal(got, np.where(np.arange(1000) < 900, 42, -1))


@CASES.case("thrust_algos", _TABULATE)
def _thrust_sequence(name, dev, var="sm80"):
    a = ptxvm.to_device(np.zeros(1000, I32))
    try:
        functor = struct.pack("<Qii", a.ptr, 3, 2)       # thrust::sequence(first, last, 3, 2)
        kernel("thrust_algos", name, var)(4, 256, (1000, functor), device=dev)
        got = a.copy_to_host()
    finally:
        a.free()
    np.testing.assert_array_equal(got, 3 + 2 * np.arange(1000))



CASES.labels |= {_SCAN: "DeviceScan::InclusiveSum/two-tiles", _SUM_TILE: "DeviceReduce::Sum/single-tile", _MAX_TILE: "DeviceReduce::Max/single-tile",
          _THRUST_SUM_TILE: "thrust::reduce/single-tile", _SAXPY: "thrust::transform/saxpy",
          _SQUARE: "thrust::transform/square", _FILL: "thrust::fill/for_each", _SORT_TILE: "thrust::sort/single-tile", _TABULATE: "thrust::sequence/for_each"}
CASES.labels |= {_LS.format(a): f"cub_load_store<{v}>" for a, v in LOAD_STORE.items()}
CASES.labels |= {f"cub_histogram<(cub::CUB_300001_SM_800::BlockHistogramAlgorithm){a}>": f"cub_histogram<{v}>"
           for a, v in ((0, "ATOMIC"), (1, "SORT"))}


@pytest.mark.parametrize("name", CASES.params())
def test_kernel_matches_its_model(name: str, executor: str) -> None:
    CASES.run(name, executor)


@pytest.mark.slow
@pytest.mark.parametrize("name,variant", CASES.variant_params({}))
def test_other_nvcc_variants_match_the_model_on_the_interpreter(name: str, variant: str) -> None:
    CASES.run(name, "interp", variant)
