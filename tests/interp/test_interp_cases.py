"""More execution cases: the fixture kernels of tests/cuda/*.cu that test_interp_kernels.py does not
cover, run on the interpreter and checked against independent models (numpy, Python ints,
Fractions) written from the CUDA sources' comments and, where nvcc's instruction choice matters
for rounding (fma contraction, summation order), from the PTX's visible instruction sequence."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import ptxvm
from ptxvm.driver.api import default_device

from models.fixture_kernels import VARIANTS, fixture_module, kernel, round_f32, tree_sum, ulp_distance, warp_bits

RNG = np.random.default_rng(20240611)
F32 = np.float32


def _fma32(a, b, c) -> np.float32:
    """fma.rn.f32 modelled exactly: the f32 nearest to a*b+c computed over the rationals."""
    return round_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def _mac(a, b, acc, variant: str) -> np.float32:
    """acc + a*b as nvcc emits it: contracted to fma.rn.f32, except in -G (debug) builds, which keep
    mul.f32 then add.f32 (checked in tests/fixtures/nvcc/sm80-G)."""
    if variant == "sm80-G":
        return F32(F32(F32(a) * F32(b)) + F32(acc))
    return _fma32(a, b, acc)


def _rand_u32(n: int) -> np.ndarray:
    return RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


def _set_global(stem: str, symbol: str, data: np.ndarray, variant: str = "sm80") -> None:
    """cudaMemcpyToSymbol: write a module variable (``__constant__``/``__device__``) in place."""
    mod = fixture_module(stem, variant)
    dev = default_device()
    addr = dev.image(mod).addresses[symbol]
    alloc = dev.memory.find(addr)
    raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    off = addr - alloc.base
    alloc.data[off:off + raw.size] = raw


# ---------------------------------------------------------------------------------------------
# reductions.cu

def _block_sum_dynamic(variant="sm80"):
    n, B = 1000, 128
    blocks = (n + 2 * B - 1) // (2 * B)
    x = RNG.random(n, dtype=F32)
    out = np.zeros(blocks, F32)
    kernel("reductions", "block_sum_dynamic", variant)(blocks, B, (x, out, n), shared_mem=B * 4)
    padded = np.zeros(blocks * 2 * B, F32)
    padded[:n] = x
    p = padded.reshape(blocks, 2, B)
    v = (F32(0) + p[:, 0]) + p[:, 1]       # v = 0; v += in[i]; v += in[i + B]
    # shared tree for stride > 32, then the volatile warp tail: every step reads the old
    # neighbour values (lock-step warp), so lane 0 sees exactly the halving tree
    assert np.array_equal(out, tree_sum(v))


def test_block_sum_dynamic_shared_mem():
    _block_sum_dynamic()


def test_block_argmax_ties_to_lowest_index():
    n = 300
    x = RNG.integers(0, 50, n).astype(F32)          # many ties
    blocks = (n + 127) // 128
    mx, am = np.zeros(blocks, F32), np.zeros(blocks, np.int32)
    kernel("reductions", "block_argmax")(blocks, 128, (x, mx, am, n))
    for b in range(blocks):
        s = x[128 * b:128 * b + 128]
        assert mx[b] == s.max() and am[b] == 128 * b + int(np.argmax(s))


def test_dot_product_fma_chains_tree_and_block_atomics():
    n, blocks, B = 1300, 2, 256
    a, b = RNG.random((2, n), dtype=F32) - F32(0.5)
    result = np.array([0.25], F32)
    kernel("reductions", "dot_product")(blocks, B, (a, b, result, n))
    # per thread: tmp = fma(a[i], b[i], tmp) over the grid-stride loop (nvcc contracts it)
    tmp = np.zeros(blocks * B, F32)
    for t in range(blocks * B):
        acc = F32(0)
        for i in range(t, n, blocks * B):
            acc = _fma32(a[i], b[i], acc)
        tmp[t] = acc
    partial = tree_sum(tmp.reshape(blocks, B))
    expect = F32(0.25)
    for p in partial:                  # one float atomicAdd per block, applied in block order
        expect = F32(expect + p)
    assert result[0] == expect


def test_block_inclusive_scan():
    n, B = 700, 256
    x = RNG.integers(-1000, 1000, n, dtype=np.int32)
    out = np.zeros(n, np.int32)
    kernel("reductions", "block_inclusive_scan")((n + B - 1) // B, B, (x, out, n))
    expect = np.concatenate([np.cumsum(x[s:s + B]) for s in range(0, n, B)])
    assert np.array_equal(out, expect)


# ---------------------------------------------------------------------------------------------
# grids.cu

def _stencil_7pt(variant="sm80"):
    nx, ny, nz = 9, 7, 6
    a = RNG.random((nz, ny, nx), dtype=F32)
    out = np.full_like(a, -1)
    kernel("grids", "stencil_7pt", variant)((2, 2, 3), (8, 4, 2), (a, out, nx, ny, nz))
    expect = a.copy()
    for z in range(1, nz - 1):
        for y in range(1, ny - 1):
            for x in range(1, nx - 1):
                # nvcc: fma(in[idx], -6, in[idx-1]) (-G: mul, add) then add.f32 of the rest in source order
                v = _mac(a[z, y, x], -6.0, a[z, y, x - 1], variant)
                for w in (a[z, y, x + 1], a[z, y - 1, x], a[z, y + 1, x], a[z - 1, y, x], a[z + 1, y, x]):
                    v = F32(v + w)
                expect[z, y, x] = v
    assert np.array_equal(out, expect)


def test_stencil_7pt():
    _stencil_7pt()


def _matmul_naive(variant="sm80"):
    M, N, K = 19, 21, 11
    A = (RNG.random((M, K), dtype=F32) - F32(0.5))
    B = (RNG.random((K, N), dtype=F32) - F32(0.5))
    C = np.zeros((M, N), F32)
    kernel("grids", "matmul_naive", variant)(((N + 15) // 16, (M + 15) // 16), (16, 16), (A, B, C, M, N, K))
    expect = np.zeros((M, N), F32)
    for r in range(M):
        for c in range(N):
            acc = F32(0)
            for k in range(K):          # acc += A*B contracted to fma.rn.f32 (k ascending)
                acc = _mac(A[r, k], B[k, c], acc, variant)
            expect[r, c] = acc
    assert np.array_equal(C, expect)


def test_matmul_naive_fma():
    _matmul_naive()


# ---------------------------------------------------------------------------------------------
# warp_shuffle.cu

def _shfl_broadcast_and_max(variant="sm80"):
    n = 256
    x = RNG.integers(-10**6, 10**6, n, dtype=np.int32)
    out = np.zeros(n, np.int32)
    kernel("warp_shuffle", "shfl_broadcast", variant)(2, 128, (x, out))
    assert np.array_equal(out.reshape(-1, 32), np.repeat(x.reshape(-1, 32)[:, :1], 32, axis=1))
    mx = np.zeros(n, np.int32)
    kernel("warp_shuffle", "warp_max_xor", variant)(2, 128, (x, mx))
    assert np.array_equal(mx.reshape(-1, 32), np.repeat(x.reshape(-1, 32).max(axis=1, keepdims=True), 32, axis=1))


def test_shfl_broadcast_and_xor_max():
    _shfl_broadcast_and_max()


def test_shfl_width8_and_double():
    n = 128
    x = RNG.integers(-1000, 1000, n, dtype=np.int32)
    d = RNG.random(n) * 1e300
    out, dout = np.zeros(n, np.int32), np.zeros(n)
    kernel("warp_shuffle", "shfl_width8_double")(2, 64, (x, out, d, dout))
    assert np.array_equal(out.reshape(-1, 8), np.repeat(x.reshape(-1, 8).sum(axis=1, keepdims=True), 8, axis=1))
    assert np.array_equal(dout.reshape(-1, 8), np.repeat(d.reshape(-1, 8)[:, :1], 8, axis=1))


def test_block_sum_shfl():
    n, B = 1000, 256
    blocks = (n + B - 1) // B
    x = RNG.random(n, dtype=F32)
    out = np.zeros(blocks, F32)
    kernel("warp_shuffle", "block_sum_shfl")(blocks, B, (x, out, n))
    padded = np.zeros(blocks * B, F32)
    padded[:n] = x
    warps = tree_sum(padded.reshape(-1, 32)).reshape(blocks, B // 32)   # shfl_down tree, lane 0
    second = np.zeros((blocks, 32), F32)
    second[:, :B // 32] = warps
    assert np.array_equal(out, tree_sum(second))


# ---------------------------------------------------------------------------------------------
# warp_vote.cu

def _warp_compact(variant="sm80"):
    n = 128
    x = RNG.integers(-100, 100, n, dtype=np.int32)
    x[32:64] = 2 * np.arange(32)          # a warp that keeps all
    x[64:96] |= 1                          # a warp that keeps none
    out, count = np.full(n, -7, np.int32), np.zeros(4, np.int32)
    kernel("warp_vote", "warp_compact", variant)(2, 64, (x, out, count))
    for w in range(4):
        seg = x[32 * w:32 * w + 32]
        kept = seg[seg % 2 == 0]
        assert count[w] == kept.size
        assert np.array_equal(out[32 * w:32 * w + kept.size], kept)
        assert (out[32 * w + kept.size:32 * w + 32] == -7).all()


def test_warp_compact():
    _warp_compact()


def test_active_mask_divergent():
    n = 128
    x = RNG.integers(0, 3, n, dtype=np.int32)
    x[96:] = 0                                   # a warp where no lane enters
    x[32:64] = 1                                 # one where all do
    mask, active = np.full(n, 5, np.uint32), np.full(n, 5, np.int32)
    kernel("warp_vote", "active_mask_divergent")(1, 128, (x, mask, active))
    bits = warp_bits(x != 0)
    for i in range(n):
        on = x[i] != 0
        assert mask[i] == (bits[i // 32] if on else 0)
        assert active[i] == (bin(int(bits[i // 32])).count("1") if on else 0)


def test_warp_aggregated_append():
    n, thr = 256, 10
    x = RNG.integers(0, 30, n, dtype=np.int32)
    out, counter = np.full(n, -1, np.int32), np.array([0], np.int32)
    kernel("warp_vote", "warp_aggregated_append")(2, 128, (x, thr, out, counter))
    sel = np.nonzero(x > thr)[0]
    assert counter[0] == sel.size
    got = out[:sel.size]
    assert sorted(got) == list(sel) and (out[sel.size:] == -1).all()
    # each warp's lanes fill one contiguous run of slots, in lane order
    for w in range(n // 32):
        mine = np.nonzero((got >= 32 * w) & (got < 32 * w + 32))[0]
        if mine.size:
            assert np.array_equal(mine, np.arange(mine[0], mine[0] + mine.size))
            assert np.array_equal(got[mine], sel[(sel >= 32 * w) & (sel < 32 * w + 32)])


# ---------------------------------------------------------------------------------------------
# atomics.cu — the interpreter applies colliding atomics of one instruction in thread order
# (linear thread index over the launch's CTAs), so float sums are modelled as sequential
# float32/float64 accumulation in thread index order, exactly.

def _seq_sum(init, values, dtype):
    acc = dtype(init)
    for v in values:
        acc = dtype(acc + dtype(v))
    return acc


def _atomic_add_types(variant="sm80"):
    n = 300
    vi = RNG.integers(-10**6, 10**6, n, dtype=np.int32)
    vf = (RNG.random(n, dtype=F32) - F32(0.3)) * F32(100)
    vd = (RNG.random(n) - 0.3) * 1e5
    si, ui = np.array([5], np.int32), np.array([0xFFFFFF00], np.uint32)
    ull, f, d = np.array([1 << 60], np.uint64), np.array([0.1], F32), np.array([0.1])
    kernel("atomics", "atomic_add_types", variant)(3, 128, (vi, vf, vd, si, ui, ull, f, d, n))
    assert int(si[0]) == 5 + int(vi.astype(np.int64).sum())
    assert int(ui[0]) == (0xFFFFFF00 + sum(range(n))) & 0xFFFFFFFF
    assert int(ull[0]) == ((1 << 60) + sum(i << 20 for i in range(n))) & ((1 << 64) - 1)
    assert f[0] == _seq_sum(0.1, vf, F32)
    assert d[0] == _seq_sum(0.1, vd, np.float64)


def test_atomic_add_types():
    _atomic_add_types()


def test_atomic_sub_exch_minmax():
    n = 200
    v = RNG.integers(-10**9, 10**9, n, dtype=np.int32)
    r = np.array([100, -5, 0x7FFFFFFF, -0x80000000], np.int32)
    ru = np.array([0xFFFFFFFF, 0], np.uint32)
    rl = np.array([2**63 - 1, -2**63], np.int64)
    rul = np.array([2**64 - 1, 0, 12345], np.uint64)
    rf, prev = np.array([-1.0], F32), np.zeros(n, np.int32)
    kernel("atomics", "atomic_sub_exch_minmax")(2, 128, (v, r, ru, rl, rul, rf, prev, n))
    ints = [int(x) for x in v]
    w32 = lambda x: (x + 2**31) % 2**32 - 2**31  # noqa: E731
    assert [int(x) for x in r] == [w32(100 - sum(ints)), ints[-1], min(ints), max(ints)]
    # exch returns applied in thread order: each thread sees its predecessor's value
    assert list(prev) == [-5] + ints[:-1]
    assert [int(x) for x in ru] == [min(x % 2**32 for x in ints), max(x % 2**32 for x in ints)]
    assert [int(x) for x in rl] == [min(x * 1000000007 for x in ints), max(x * 1000000007 for x in ints)]
    assert [int(x) for x in rul] == [min((x % 2**32) << 3 for x in ints), max((x % 2**32) << 3 for x in ints),
                                     n - 1]
    assert rf[0] == F32(ints[-1])


def test_atomic_inc_dec_wrapping():
    n, lim = 300, 37
    for c0, c1 in ((0, 0), (30, 100)):         # 100 > lim: the first dec wraps to lim
        c, old = np.array([c0, c1], np.uint32), np.zeros(n, np.uint32)
        kernel("atomics", "atomic_inc_dec")(3, 128, (c, lim, old, n))
        a, b, olds = c0, c1, []
        for _ in range(n):
            olds.append(a)
            a = 0 if a >= lim else a + 1
            b = lim if b == 0 or b > lim else b - 1
        assert list(old) == olds and [int(c[0]), int(c[1])] == [a, b]


def test_atomic_bitwise():
    n = 150
    v = _rand_u32(n)
    r = np.array([0xFFFFFFFF, 0, 0x12345678], np.uint32)
    r64 = np.array([0, 2**64 - 1, 0xDEADBEEF], np.uint64)
    kernel("atomics", "atomic_bitwise")(2, 128, (v, r, r64, n))
    e = [0xFFFFFFFF, 0, 0x12345678]
    e64 = [0, 2**64 - 1, 0xDEADBEEF]
    for i in range(n):
        if i % 2 == 0:
            e[0] &= ~(1 << (i & 31)) & 0xFFFFFFFF
        e[1] |= 1 << (i & 31)
        e[2] ^= int(v[i])
        e64[0] |= 1 << (i & 63)
        if i & 1:
            e64[1] &= ~(1 << (i & 63)) & (2**64 - 1)
        e64[2] ^= (int(v[i]) * i) & (2**64 - 1)
    assert [int(x) for x in r] == e and [int(x) for x in r64] == e64


def test_cas_float_max():
    n = 300
    x = (RNG.random(n, dtype=F32) - F32(0.5)) * F32(1000)
    for init in (F32(-1e30), F32(1e30), F32(0)):
        res = np.array([init], F32)
        kernel("atomics", "cas_float_max")(3, 128, (x, res, n))
        assert res[0] == max(init, x.max())


def test_cas_double_mul_in_thread_order():
    n = 64
    x = 1 + (RNG.random(n) - 0.5) * 1e-3
    prod = np.array([3.0])
    kernel("atomics", "cas_double_mul")(2, 32, (x, prod, n))
    # each round of the CAS loop, the lowest pending thread wins (thread order)
    expect = 3.0
    for v in x:
        expect = expect * float(v)
    assert prod[0] == expect


def test_spinlock_accumulate_across_blocks():
    blocks = 6
    lock, total = np.zeros(1, np.int32), np.array([1000], np.int32)
    # The lock holder must make progress while other blocks spin (forward-progress turns).
    kernel("atomics", "spinlock_accumulate")(blocks, 32, (lock, total), max_steps=200_000)
    assert total[0] == 1000 + sum(range(1, blocks + 1)) and lock[0] == 0
    assert lock[0] == 0 and total[0] == 1000 + blocks * (blocks + 1) // 2


def test_shared_atomics_all():
    blocks, B = 2, 96
    x = RNG.integers(-1000, 1000, blocks * B, dtype=np.int32)
    out, fout, dout = np.zeros(12 * blocks, np.int32), np.zeros(2 * blocks, F32), np.zeros(blocks)
    kernel("atomics", "shared_atomics_all")(blocks, B, (x, out, fout, dout))
    for b in range(blocks):
        v = [int(t) for t in x[b * B:(b + 1) * B]]
        w32 = lambda q: (q + 2**31) % 2**32 - 2**31  # noqa: E731
        and_, or_, xor_ = -1, 0, 0
        for t in range(B):
            and_ &= ~(1 << (t & 31))
            or_ |= 1 << (t & 31)
            xor_ ^= v[t]
        dec = 0
        for _ in range(B):
            dec = 1000 if dec == 0 or dec > 1000 else dec - 1
        expect = [w32(sum(v)), w32(-sum(v)), min(v), max(v), w32(and_), w32(or_), xor_, B, dec,
                  B - 1,             # exch applied in thread order: the last thread's value stays
                  101, w32(sum(v))]
        assert [int(q) for q in out[12 * b:12 * b + 12]] == expect, b
        assert fout[2 * b] == _seq_sum(0, [F32(q) * F32(0.5) for q in v], F32)
        assert fout[2 * b + 1] == F32(max(v))
        assert dout[b] == _seq_sum(0, [q * 0.25 for q in v], np.float64)


def test_atomic_scopes():
    n = 300
    x = RNG.random(n, dtype=F32)
    c, f = np.array([0, 7, -1], np.int32), np.array([0.5, -0.5], F32)
    kernel("atomics", "atomic_scopes")(3, 128, (c, f, x, n))
    assert list(c) == [n, n + 7, n - 1]
    assert f[0] == _seq_sum(0.5, x, F32) and f[1] == _seq_sum(-0.5, x + x, F32)


# ---------------------------------------------------------------------------------------------
# memory_spaces.cu — __constant__ tables are not initialised by the module: the host writes them
# (cudaMemcpyToSymbol), here through the module's image in the device memory.

def _conv1d_constant(variant="sm80"):
    n, taps = 300, 7
    coeffs = np.zeros(16, F32)
    coeffs[:taps] = RNG.random(taps, dtype=F32) - F32(0.5)
    _set_global("memory_spaces", "c_coeffs", coeffs, variant)
    x = RNG.random(n + taps - 1, dtype=F32)
    out = np.zeros(n, F32)
    kernel("memory_spaces", "conv1d_constant", variant)(3, 128, (x, out, n, taps))
    expect = []
    for i in range(n):
        acc = F32(0)
        for k in range(taps):        # acc += c[k] * in[i+k], contracted to fma.rn.f32
            acc = _mac(coeffs[k], x[i + k], acc, variant)
        expect.append(acc)
    assert np.array_equal(out, np.array(expect, F32))


def test_conv1d_constant_memory():
    _conv1d_constant()


def test_constant_lookup_and_device_global_table():
    n = 300
    lut = RNG.integers(-10**6, 10**6, 256, dtype=np.int32)
    _set_global("memory_spaces", "c_lut", lut)
    x = RNG.integers(0, 256, n, dtype=np.uint8)
    out = np.zeros(n, np.int32)
    kernel("memory_spaces", "constant_lookup")(3, 128, (x, out, n))
    # g_table is initialised by the module: {1, 2, 4, ..., 128}
    assert np.array_equal(out, lut[x] + (1 << (np.arange(n) & 7)))


def test_ldg_readonly():
    n = 200
    a = RNG.random(n, dtype=F32)
    b4 = RNG.random((n, 4), dtype=F32)
    d = RNG.random(n) * 100
    h = RNG.integers(-1000, 1000, n, dtype=np.int32)
    out = np.zeros(n, F32)
    kernel("memory_spaces", "ldg_readonly")(2, 128, (a, b4, d, h, out, n))
    s = ((b4[:, 0] + b4[:, 1]) + b4[:, 2]) + b4[:, 3]
    # fma.rn.f32(a, x+y+z+w, (float)d) then add.f32 of (float)h
    expect = [_fma32(p, q, F32(r)) + F32(t) for p, q, r, t in zip(a, s, d, h)]
    assert np.array_equal(out, np.array(expect, F32))


def test_dynamic_shared_reverse_two_arrays():
    B, blocks = 96, 3
    x = RNG.random(B * blocks, dtype=F32)
    out, iout = np.zeros_like(x), np.zeros(B * blocks, np.int32)
    kernel("memory_spaces", "dynamic_shared_reverse")(blocks, B, (x, out, iout), shared_mem=B * 8)
    assert np.array_equal(out.reshape(blocks, B), x.reshape(blocks, B)[:, ::-1])
    t = np.arange(B)
    assert np.array_equal(iout.reshape(blocks, B), np.tile(t * (B - 1 - t), (blocks, 1)))


def test_shared_halo_blur():
    n = 300
    x = RNG.random(n, dtype=F32)
    out = np.zeros(n, F32)
    kernel("memory_spaces", "shared_halo_blur")(3, 128, (x, out, n))
    p = np.concatenate([np.zeros(2, F32), x, np.zeros(2, F32)])
    s = (((p[:-4] + p[1:-3]) + p[2:-2]) + p[3:-1]) + p[4:]
    assert np.array_equal(out, s * F32(0.2))


def test_vector_types():
    n = 150
    in4 = RNG.random((n, 4), dtype=F32)
    i2 = RNG.integers(-10**9, 10**9, (n, 2), dtype=np.int32)
    d2 = RNG.random((n, 2))
    out4, o2, d2o = np.zeros_like(in4), np.zeros_like(i2), np.zeros_like(d2)
    kernel("memory_spaces", "vector_types")(2, 128, (in4, out4, i2, o2, d2, d2o, n))
    assert np.array_equal(out4, in4 * F32(2)) and np.array_equal(o2, i2[:, ::-1])
    s = d2[:, 0] + d2[:, 1]
    assert np.array_equal(d2o, np.stack([s, s], axis=1))


def test_last_block_sum_threadfence_pattern():
    n, blocks = 1000, 8
    x = RNG.random(n, dtype=F32)
    partial, total = np.zeros(blocks, F32), np.zeros(1, F32)
    for _ in range(2):            # the last block resets g_counter, so a second launch works too
        total[0] = -1
        kernel("memory_spaces", "last_block_sum")(blocks, 128, (x, partial, total, n))
        padded = np.zeros(blocks * 128, F32)
        padded[:n] = x
        tree = tree_sum(padded.reshape(blocks, 128))
        assert np.array_equal(partial, tree)
        assert total[0] == _seq_sum(0, tree, F32)


def test_generic_pointers_shared_and_global():
    n = 300
    x = RNG.random(n, dtype=F32) * F32(100)
    out = np.zeros(n, F32)
    kernel("memory_spaces", "generic_pointers")(2, 256, (x, out, n))
    assert np.array_equal(out, F32(3) * x + F32(3) * x)


# ---------------------------------------------------------------------------------------------
# coop_groups.cu

def test_tile32_sum():
    x = RNG.random(256, dtype=F32)
    out = np.zeros(8, F32)
    kernel("coop_groups", "tile32_sum")(2, 128, (x, out))
    assert np.array_equal(out, tree_sum(x.reshape(-1, 32)))


def _tile_reduce_ops(variant="sm80"):
    x = RNG.integers(-10**8, 10**8, 256, dtype=np.int32)
    sums, maxes = np.zeros(8, np.int32), np.zeros(8, np.int32)
    kernel("coop_groups", "tile_reduce_ops", variant)(2, 128, (x, sums, maxes))
    w = x.reshape(-1, 32).astype(np.int64)
    assert np.array_equal(sums, ((w.sum(axis=1) + 2**31) % 2**32 - 2**31))
    assert np.array_equal(maxes, w.max(axis=1))


def test_tile_reduce_ops():
    _tile_reduce_ops()


def test_tile16_scan():
    x = RNG.integers(-1000, 1000, 128, dtype=np.int32)
    out = np.zeros(128, np.int32)
    kernel("coop_groups", "tile16_scan")(2, 64, (x, out))
    assert np.array_equal(out.reshape(-1, 16), np.cumsum(x.reshape(-1, 16), axis=1))


def test_tile4_votes():
    x = RNG.integers(-2, 3, 128, dtype=np.int32)
    x[:4], x[4:8] = 1, -1
    any_, all_, ballot = np.zeros(128, np.int32), np.zeros(128, np.int32), np.zeros(128, np.uint32)
    kernel("coop_groups", "tile4_votes")(2, 64, (x, any_, all_, ballot))
    p = (x > 0).reshape(-1, 4)
    bits = (p * (1 << np.arange(4))).sum(axis=1)
    assert np.array_equal(any_, np.repeat(p.any(axis=1), 4)) and np.array_equal(all_, np.repeat(p.all(axis=1), 4))
    assert np.array_equal(ballot, np.repeat(bits, 4))


def test_block_sum_cg():
    n, B = 700, 192
    blocks = (n + B - 1) // B
    x = RNG.random(n, dtype=F32)
    out = np.zeros(blocks, F32)
    kernel("coop_groups", "block_sum_cg")(blocks, B, (x, out, n))
    padded = np.zeros(blocks * B, F32)
    padded[:n] = x
    # cg::reduce(plus<float>) is a shfl.bfly butterfly with offsets 16..1: lane 0 sees the tree
    warps = tree_sum(padded.reshape(-1, 32)).reshape(blocks, B // 32)
    second = np.zeros((blocks, 32), F32)
    second[:, :B // 32] = warps
    assert np.array_equal(out, tree_sum(second))


def test_coalesced_rank():
    x = RNG.integers(0, 100, 128, dtype=np.int32)
    x[64:96] = 2                       # a warp with no odd lane
    rank, size = np.zeros(128, np.int32), np.zeros(128, np.int32)
    kernel("coop_groups", "coalesced_rank")(1, 128, (x, rank, size))
    for i in range(128):
        w = x[i // 32 * 32:i // 32 * 32 + 32] & 1
        if x[i] & 1:
            assert rank[i] == w[:i % 32].sum() and size[i] == w.sum()
        else:
            assert rank[i] == -1 and size[i] == 0


# ---------------------------------------------------------------------------------------------
# calls.cu

def _local_array_permute(variant="sm80"):
    n = 100
    x = RNG.random(n, dtype=F32) * F32(10)
    perm = RNG.integers(0, 1000, 16, dtype=np.int32)
    out = np.zeros(n, F32)
    kernel("calls", "local_array_permute", variant)(1, 128, (x, perm, out, n))
    for i in range(n):
        buf = [x[i] * F32(k + 1) for k in range(16)]
        acc = F32(0)
        for k in range(16):
            acc = F32(acc + buf[perm[(i + k) & 15] & 15])
        assert out[i] == acc, i


def test_local_array_permute():
    _local_array_permute()


def test_local_histogram():
    n = 70
    data = _rand_u32(n * 32)
    counts = np.zeros(n * 8, np.int32)
    kernel("calls", "local_histogram")(1, 128, (data, counts, n))
    expect = np.stack([np.bincount(r & 7, minlength=8) for r in data.reshape(n, 32)])
    assert np.array_equal(counts.reshape(n, 8), expect)




def test_function_pointers():
    n = 100
    x = (RNG.random(n, dtype=F32) - F32(0.5)) * F32(10)
    sel = RNG.integers(0, 100, n, dtype=np.int32)
    out = np.zeros(n, F32)
    kernel("calls", "function_pointers")(1, 128, (x, sel, out, n))
    ops = [lambda v: v * v, lambda v: -v, lambda v: F32(0.5) * v, lambda v: v + F32(1)]
    assert np.array_equal(out, np.array([ops[s & 3](v) for s, v in zip(sel, x)], F32))


def test_virtual_shapes():
    n = 90
    k = RNG.integers(0, 100, n, dtype=np.int32)
    x = RNG.random(n, dtype=F32) * F32(5)
    out = np.zeros(n, F32)
    kernel("calls", "virtual_shapes")(1, 128, (k, x, out, n))
    pi = F32(3.14159265)
    for i in range(n):
        v = x[i]
        w = v + F32(1)
        # from the PTX: Circle::area = x * (x * pi); perimeter = x * (2pi folded, exact); describe =
        # fma.rn.f32(perimeter, 0.001f, area)
        area, per = [(v * v, v * F32(4)), (v * (v * pi), v * (F32(2) * pi)), (v * w, (v + w) + (v + w))][k[i] % 3]
        assert out[i] == _fma32(per, F32(0.001), area), i


# ---------------------------------------------------------------------------------------------
# directed rounding over the rationals (independent of numpy's float arithmetic)

def _round_q(q: Fraction, p: int, emin: int, mode: str = "rn") -> Fraction:
    """Round the rational q to a binary float with p significand bits and minimum normal exponent
    emin (subnormals included; no overflow handling), in mode rn (ties to even), rz, rd or ru."""
    if q == 0:
        return Fraction(0)
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    ulp = Fraction(2) ** (e - p + 1)
    m = a / ulp
    lo = m.numerator // m.denominator
    if mode == "rn":
        rem = m - lo
        up = rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1)
    elif mode == "rz":
        up = False
    else:
        up = m != lo and ((mode == "ru") == (q > 0))
    r = (lo + up) * ulp
    return r if q > 0 else -r


def _r32(q, mode="rn") -> np.float32:
    return F32(float(_round_q(Fraction(q), 24, -126, mode)))


def _r16(q, mode="rn") -> np.float16:
    return np.float16(float(_round_q(Fraction(q), 11, -14, mode)))


def _rbf16(q, mode="rn") -> np.float32:
    return F32(float(_round_q(Fraction(q), 8, -126, mode)))


def _q(x) -> Fraction:
    return Fraction(float(x))


# ---------------------------------------------------------------------------------------------
# math_fast.cu — bounds from the PTX ISA (sections 9.7.3.x) for the .approx instructions:
#   sin/cos.approx.f32: absolute error <= 2^-20.9 on [-pi, pi]; lg2.approx.f32: absolute <= 2^-22;
#   ex2.approx.f32: <= 2 ulp; rsqrt.approx.f32: relative <= 2^-22.9;
#   div.approx.f32: <= 2 ulp for 2^-126 <= |divisor| <= 2^126.

def _ulp32(x) -> np.ndarray:
    x = np.abs(np.asarray(x, np.float32))
    return (np.nextafter(x, F32(np.inf)) - x).astype(np.float64)


def test_fast_intrinsics_within_ptx_approx_bounds():
    n = 200
    x = ((RNG.random(n) * 2 - 1) * math.pi).astype(F32)
    x[:3] = [0, F32(math.pi) * F32(0.999), -F32(math.pi) * F32(0.999)]
    y = ((RNG.random(n) + 0.1) * np.where(RNG.random(n) < 0.5, -3, 3)).astype(F32)
    out = np.zeros(8 * n, F32)
    kernel("math_fast", "fast_intrinsics")(2, 128, (x, y, out, n))
    o = out.reshape(n, 8).astype(np.float64)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    e_sc = 2.0 ** -20.9
    assert (np.abs(o[:, 0] - np.sin(xd)) <= e_sc).all()
    assert (np.abs(o[:, 1] - np.cos(xd)) <= e_sc).all()
    # __expf = ex2.approx(x * log2(e) rounded to f32): 2 ulp of 2^t for the exactly modelled t
    t = (x * F32(1.44269502162933349609375)).astype(np.float64)          # mul.f32 0f3FB8AA3B
    assert (np.abs(o[:, 2] - 2.0 ** t) <= 2 * _ulp32(2.0 ** t)).all()
    # __logf(y) = lg2.approx(y) * ln2 (f32 constant 0f3F317218, one more f32 rounding)
    ln2f = float(F32(0.693147182464599609375))
    yy = (np.abs(x) + F32(1)).astype(np.float64)                          # exact in f32 here
    ref = np.log2(yy) * ln2f
    assert (np.abs(o[:, 3] - ref) <= 2.0 ** -22 * ln2f + _ulp32(ref) / 2).all()
    # __powf(y, 0.5) = ex2.approx(0.5 * lg2.approx(y)): exponent off by <= 2^-23 (abs), then 2 ulp
    ref = np.sqrt(yy)
    assert (np.abs(o[:, 4] / ref - 1) <= 2.0 ** -23 * math.log(2) * 1.001 + 2 * 2.0 ** -23 * 1.001).all()
    ref = xd / yd
    assert (np.abs(o[:, 5] - ref) <= 2 * _ulp32(ref)).all()
    assert (np.abs(o[:, 6] * np.sqrt(yy) - 1) <= 2.0 ** -22.9).all()
    # __tanf = div.approx(sin.approx, cos.approx): the quotient of the perturbed pair, then 2 ulp
    ok = np.abs(np.cos(xd)) > 0.05
    s, c = np.sin(xd), np.cos(xd)
    corners = np.stack([(s + ds) / (c + dc) for ds in (-e_sc, e_sc) for dc in (-e_sc, e_sc)])
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    slack = 2 * np.maximum(_ulp32(lo), _ulp32(hi))
    assert ((o[:, 7] >= lo - slack) & (o[:, 7] <= hi + slack))[ok].all()


def test_rounding_intrinsics_exact():
    n = 150
    x = ((RNG.random(n) - 0.5) * 10).astype(F32)
    y = ((RNG.random(n) - 0.5) * 10).astype(F32)
    x[:4] = [-0.5, 1.5, 0.25, 2.0]
    out = np.zeros(8 * n, F32)
    kernel("math_fast", "rounding_intrinsics")(2, 128, (x, y, out, n))
    o = out.reshape(n, 8)
    for i in range(n):
        a, b = _q(x[i]), _q(y[i])
        expect = [_r32(1 / b), np.sqrt(np.abs(x[i])), _r32(a + b, "rz"), _r32(a * b, "rd"), _r32(a * b, "ru"),
                  _r32(a / b), _r32(a * b + 1, "rz"), F32(min(max(x[i], 0), 1))]
        assert list(o[i]) == expect, i


def test_double_rounding_intrinsics_exact():
    n = 120
    x, y = (RNG.random((2, n)) - 0.5) * 1e3
    out = np.zeros(5 * n)
    kernel("math_fast", "double_rounding_intrinsics")(1, 128, (x, y, out, n))
    o = out.reshape(n, 5)
    for i in range(n):
        a, b = _q(x[i]), _q(y[i])
        r64 = lambda q, m: float(_round_q(q, 53, -1022, m))  # noqa: E731
        expect = [float(1 / b), math.sqrt(abs(x[i])), r64(a + b, "rz"), r64(a * b, "ru"), float(a * b + Fraction(1, 2))]
        assert list(o[i]) == expect, i


def test_conversion_intrinsics_exact():
    n = 150
    x = ((RNG.random(n) - 0.5) * 2e6).astype(F32)
    x[:6] = [0.5, 1.5, 2.5, -0.5, -2.5, -1.25]
    iv = RNG.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    uv = _rand_u32(n)
    iout, uout = np.zeros(4 * n, np.int32), np.zeros(n, np.uint32)
    fout, bits = np.zeros(2 * n, F32), np.zeros(n, np.uint32)
    kernel("math_fast", "conversion_intrinsics")(2, 128, (x, iv, uv, iout, uout, fout, bits, n))
    for i in range(n):
        q = _q(x[i])
        fl = math.floor(q)
        rn = fl + (1 if q - fl > Fraction(1, 2) or (q - fl == Fraction(1, 2) and fl % 2) else 0)
        assert list(iout[4 * i:4 * i + 4]) == [rn, math.trunc(q), fl, math.ceil(q)], i
        aq = abs(q)
        fa = math.floor(aq)
        assert uout[i] == fa + (1 if aq - fa > Fraction(1, 2) or (aq - fa == Fraction(1, 2) and fa % 2) else 0)
        assert fout[2 * i] == _r32(int(iv[i])) and fout[2 * i + 1] == _r32(int(uv[i]), "rz")
    assert np.array_equal(bits, x.view(np.uint32))


def test_warp_softmax_fast_within_bounds():
    rows = 12
    x = ((RNG.random((rows, 32)) - 0.5) * 8).astype(F32)
    y = np.zeros_like(x)
    kernel("math_fast", "warp_softmax_fast")(3, (32, 4), (x, y, rows))
    m = x.max(axis=1, keepdims=True)
    t = ((x - m) * F32(1.44269502162933349609375)).astype(np.float64)   # sub.f32 exact; mul.f32 modelled
    e = 2.0 ** t
    ref = e / e.sum(axis=1, keepdims=True)
    # each e: ex2.approx 2 ulp (rel <= 2^-22); the f32 butterfly sum adds <= 31 roundings (rel 2^-24 each);
    # div.approx 2 ulp: total relative error comfortably below 2^-22 * 2 + 32 * 2^-24 + 2^-22
    assert (np.abs(y / ref - 1) <= 2 * 2.0 ** -22 + 32 * 2.0 ** -24 + 2.0 ** -22).all()


# ---------------------------------------------------------------------------------------------
# math_precise.cu — libdevice sequences: maximum ulp errors from the CUDA C++ Programming Guide,
# appendix "Mathematical Functions" (single precision): tanhf 2, atan2f 3, exp2f 2, log2f 1,
# log10f 2, cbrtf 1, erff 2, hypotf 3 (here checked against float64 references rounded to f32,
# so one more ulp of slack for that rounding).

def test_float_math_more_within_cuda_ulp_bounds():
    n = 200
    x = ((RNG.random(n) - 0.5) * 12).astype(F32)
    y = ((RNG.random(n) - 0.5) * 12).astype(F32)
    out = np.zeros(8 * n, F32)
    kernel("math_precise", "float_math_more")(2, 128, (x, y, out, n))
    o = out.reshape(n, 8)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    a1 = (np.abs(x) + F32(1)).astype(np.float64)          # fabsf(a) + 1.0f, rounded in f32
    refs = [np.tanh(xd), np.arctan2(xd, yd), np.exp2(xd), np.log2(a1), np.log10(a1), np.cbrt(xd),
            np.array([math.erf(v) for v in xd]), np.hypot(xd, yd)]
    bounds = [2, 3, 2, 1, 2, 1, 2, 3]
    for k, (ref, ulps) in enumerate(zip(refs, bounds)):
        assert ulp_distance(o[:, k], ref.astype(F32)).max() <= ulps + 1, k


def test_rounding_conversions_exact():
    n = 200
    x = ((RNG.random(n) - 0.5) * 100).astype(F32)
    x[:8] = [0.5, 1.5, 2.5, -0.5, -2.5, -3.4, 1.7, -1.7]
    out, iout, dout = np.zeros(6 * n, F32), np.zeros(3 * n, np.int32), np.zeros(n)
    kernel("math_precise", "rounding_conversions")(2, 128, (x, out, iout, dout, n))
    o, io = out.reshape(n, 6), iout.reshape(n, 3)
    for i in range(n):
        q = _q(x[i])
        fl = math.floor(q)
        rint = fl + (1 if q - fl > Fraction(1, 2) or (q - fl == Fraction(1, 2) and fl % 2) else 0)
        rnd = math.floor(abs(q) + Fraction(1, 2)) * (1 if q >= 0 else -1)     # half away from zero
        c = _q(F32(1.7))
        fm = q - c * math.trunc(q / c)                                        # fmodf: exact
        expect = [fl, math.ceil(q), rnd, math.trunc(q), rint, fm]
        assert [_q(v) for v in o[i]] == [Fraction(v) for v in expect], i
        # signs of zero results follow the operand
        assert all(math.copysign(1, float(v)) == math.copysign(1, float(x[i])) for v in o[i][:5] if v == 0)
        assert list(io[i]) == [math.trunc(q), rint, math.trunc(abs(q))], i
    assert np.array_equal(dout, x.astype(np.float64) / 3.0)


def test_classify_special_values():
    tiny = np.array([1], np.uint32).view(F32)[0]
    x = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, -np.nan, tiny, -tiny,
                  np.finfo(F32).max, -np.finfo(F32).max], F32)
    cls = np.zeros(x.size, np.int32)
    kernel("math_precise", "classify")(1, 32, (x, cls, x.size))
    expect = np.isnan(x) * 1 | np.isinf(x) * 2 | np.signbit(x) * 4 | np.isfinite(x) * 8
    assert np.array_equal(cls, expect)


# ---------------------------------------------------------------------------------------------
# int_intrinsics.cu

def _s(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def _edge_ints(n):
    a = RNG.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    a[:6] = [0, -1, 2**31 - 1, -2**31, 0x7FFFFF, -0x800000]
    return a


def _mul_high(variant="sm80"):
    n = 120
    a, b = _edge_ints(n), _edge_ints(n)[::-1].copy()
    out = np.zeros(6 * n, np.int32)
    kernel("int_intrinsics", "mul_high", variant)(1, 128, (a, b, out, n))
    for i in range(n):
        x, y = int(a[i]), int(b[i])
        ux, uy = x % 2**32, y % 2**32
        x64, y64 = x * 0x10001, y * -0x1000003
        expect = [_s(_s(x, 24) * _s(y, 24), 32), _s((ux & 0xFFFFFF) * (uy & 0xFFFFFF), 32), _s((x * y) >> 32, 32),
                  _s((ux * uy) >> 32, 32), _s((x64 * y64) >> 64, 32),
                  _s(((x64 % 2**64) * (y64 % 2**64)) >> 64, 32)]
        assert [int(v) for v in out[6 * i:6 * i + 6]] == expect, i


def test_mul_high():
    _mul_high()


def test_sad_dp4a():
    n = 120
    a, b, c = _edge_ints(n), _edge_ints(n)[::-1].copy(), RNG.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    out = np.zeros(6 * n, np.int32)
    kernel("int_intrinsics", "sad_dp4a")(1, 128, (a, b, c, out, n))
    for i in range(n):
        x, y, z = int(a[i]), int(b[i]), int(c[i])
        ux, uy, uz = x % 2**32, y % 2**32, z % 2**32
        sb = lambda v, k: _s(v >> (8 * k), 8)      # noqa: E731
        ub = lambda v, k: (v >> (8 * k)) & 0xFF    # noqa: E731
        sh = lambda v, k: _s(v >> (16 * k), 16)    # noqa: E731
        uh = lambda v, k: (v >> (16 * k)) & 0xFFFF  # noqa: E731
        expect = [abs(x - y) + uz, abs(ux - uy) + uz, sum(sb(ux, k) * sb(uy, k) for k in range(4)) + z,
                  sum(ub(ux, k) * ub(uy, k) for k in range(4)) + uz,
                  sh(ux, 0) * sb(uy, 0) + sh(ux, 1) * sb(uy, 1) + z,
                  uh(ux, 0) * ub(uy, 2) + uh(ux, 1) * ub(uy, 3) + uz]
        assert [int(v) for v in out[6 * i:6 * i + 6]] == [_s(e, 32) for e in expect], i


def test_average_simd():
    n = 120
    a, b = _edge_ints(n), _edge_ints(n)[::-1].copy()
    out = np.zeros(6 * n, np.uint32)
    kernel("int_intrinsics", "average_simd")(1, 128, (a, b, out, n))
    for i in range(n):
        x, y = int(a[i]), int(b[i])
        ux, uy = x % 2**32, y % 2**32
        byte = lambda v, k: (v >> (8 * k)) & 0xFF      # noqa: E731
        half = lambda v, k: (v >> (16 * k)) & 0xFFFF   # noqa: E731
        expect = [(x + y) >> 1, (x + y + 1) >> 1, (ux + uy) >> 1,
                  sum(((byte(ux, k) + byte(uy, k)) & 0xFF) << (8 * k) for k in range(4)),
                  sum(abs(byte(ux, k) - byte(uy, k)) << (8 * k) for k in range(4)),
                  sum(max(half(ux, k), half(uy, k)) << (16 * k) for k in range(2))]
        assert [int(v) for v in out[6 * i:6 * i + 6]] == [e % 2**32 for e in expect], i


def test_bitfield_rotate():
    n = 150
    a, b = _rand_u32(n), _rand_u32(n)
    c = RNG.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    out, rot = np.zeros(n, np.uint32), np.zeros(n, np.uint64)
    kernel("int_intrinsics", "bitfield_rotate")(2, 128, (a, b, c, out, rot, n))
    assert np.array_equal(out, ((a >> 7) & 0x1F) | ((b & 0xFF) << 12))
    m = 2**64 - 1
    assert [int(v) for v in rot] == [((int(z) << (i % 64)) | (int(z) >> (64 - i % 64))) & m if i % 64 else int(z)
                                     for i, z in enumerate(c)]


# ---------------------------------------------------------------------------------------------
# sync_primitives.cu (the mbarrier kernels are out of scope)

def test_release_acquire_flag_named_barrier():
    B, blocks = 128, 2
    payload = RNG.integers(-10**6, 10**6, blocks * B // 2, dtype=np.int32)
    out = np.zeros_like(payload)
    kernel("sync_primitives", "release_acquire_flag")(blocks, B, (payload, out))
    assert np.array_equal(out, 3 * payload + 1)


def test_atomic_ref_orders():
    n = 200
    c, winners = np.array([5, -1, -1, 0], np.int32), np.zeros(n, np.int32)
    kernel("sync_primitives", "atomic_ref_orders")(2, 128, (c, winners, n))
    # thread order: exchange leaves the last thread's i; the first CAS (thread 0) wins
    assert list(c) == [5 + n, n - 1, n - 1, 1]
    assert winners.sum() == 1 and winners[0] == 1


def test_fences():
    n = 200
    out = np.zeros(n, np.int32)
    kernel("sync_primitives", "fences")(2, 128, (out, n))
    assert np.array_equal(out, 3 * np.arange(n))


def _cluster_pair_sum(variant):
    blocks = 4
    x = RNG.random(blocks * 256, dtype=F32)
    out = np.zeros(blocks, F32)
    kernel("sync_primitives", "cluster_pair_sum", variant)(blocks, 256, (x, out))
    s = tree_sum(x.reshape(blocks, 256))
    if variant == "sm90":           # clusters of 2: own sum + peer's sum through DSMEM
        assert np.array_equal(out, s + s.reshape(-1, 2)[:, ::-1].reshape(-1))
    else:
        assert np.array_equal(out, F32(2) * s)


def test_cluster_pair_sum_sm80():
    _cluster_pair_sum("sm80")


# ---------------------------------------------------------------------------------------------
# half_bf16.cu — numpy float16 add/sub/mul are correctly rounded (computed in f32, and f32 has
# 24 >= 2*11 + 2 bits, so the double rounding is innocuous); fma and directed roundings use
# _round_q over the rationals.

def _halves(n, scale=4.0):
    return ((RNG.random(n) - 0.5) * 2 * scale).astype(np.float16)




def test_half_scalar():
    n = 200
    a, b, c = _halves(n), _halves(n), _halves(n)
    b[np.abs(b) < 0.05] = np.float16(0.5)
    out, f = np.zeros(n, np.float16), np.zeros(3 * n, F32)
    kernel("half_bf16", "half_scalar")(2, 128, (a, b, c, out, f, n))
    fma = np.array([_r16(_q(p) * _q(q) + _q(r)) for p, q, r in zip(a, b, c)], np.float16)
    assert np.array_equal(out, fma) and np.array_equal(f[0::3], fma.astype(F32))
    assert np.array_equal(f[1::3], ((a + b) * (a - c)).astype(F32))
    # __hdiv: cuda_fp16.h documents round-to-nearest-even half division
    assert np.array_equal(f[2::3], np.array([_r16(_q(p) / _q(q)) for p, q in zip(a, b)], np.float16).astype(F32))


def _half2_ops(variant="sm80"):
    n = 150
    a, b, c = (_halves(2 * n).reshape(n, 2) for _ in range(3))
    out, m = np.zeros((n, 2), np.float16), np.zeros((n, 2), np.float16)
    kernel("half_bf16", "half2_ops", variant)(2, 128, (a, b, c, out, m, n))
    t = np.array([[_r16(_q(p) * _q(q) + _q(r)) for p, q, r in zip(*row)] for row in zip(a, b, c)], np.float16)
    assert np.array_equal(out, t + (a + b) * (b * c))
    assert np.array_equal(m, np.maximum(np.abs(a), -b))


def test_half2_ops():
    _half2_ops()


def test_half_conversions():
    n = 150
    x = ((RNG.random(2 * n) - 0.5) * 200).astype(F32)
    x[:6] = [0.5, 1.5, 2.5, -2.5, 1e-6, 65519.0]
    h, back = np.zeros((n, 2), np.float16), np.zeros(2 * n, F32)
    r, iv = np.zeros(4 * n, F32), np.zeros(n, np.int32)
    kernel("half_bf16", "half_conversions")(2, 128, (x, h, back, r, iv, n))
    hx = np.array([_r16(_q(v)) for v in x], np.float16).reshape(n, 2)
    assert np.array_equal(h, hx) and np.array_equal(back, hx.reshape(-1).astype(F32))
    for i in range(n):
        q = _q(x[2 * i])
        assert list(r[4 * i:4 * i + 4]) == [F32(_r16(q, m)) for m in ("rn", "rz", "rd", "ru")], i
        lo, hi = _q(hx[i, 0]), _q(hx[i, 1])
        fl = math.floor(lo)
        rn = fl + (1 if lo - fl > Fraction(1, 2) or (lo - fl == Fraction(1, 2) and fl % 2) else 0)
        assert iv[i] == rn + math.trunc(hi), i


def test_bf16_ops():
    n = 150
    bf = lambda v: (np.asarray(v, F32).view(np.uint32) >> 16).astype(np.uint16)  # noqa: E731
    fl = lambda u: (np.asarray(u, np.uint16).astype(np.uint32) << 16).view(F32)  # noqa: E731
    src = [fl(bf(((RNG.random(n) - 0.5) * 20).astype(F32))) for _ in range(3)]
    pa, pb = (fl(bf(((RNG.random(2 * n) - 0.5) * 20).astype(F32))).reshape(n, 2) for _ in range(2))
    x = ((RNG.random(n) - 0.5) * 100).astype(F32)
    out, p = np.zeros(n, np.uint16), np.zeros((n, 2), np.uint16)
    f, rb = np.zeros(2 * n, F32), np.zeros(n, F32)
    kernel("half_bf16", "bf16_ops")(2, 128, (bf(src[0]), bf(src[1]), bf(src[2]), out, bf(pa), bf(pb), p, f, x, rb, n))
    assert np.array_equal(fl(out), [_rbf16(_q(a) * _q(b) + _q(c)) for a, b, c in zip(*src)])
    t = np.array([[_rbf16(_q(u) + _q(v)) for u, v in zip(ra, rb_)] for ra, rb_ in zip(pa, pb)], F32)
    q = np.array([[_rbf16(_q(u) * _q(v) + _q(w)) for u, v, w in zip(ra, rb_, rt)]
                  for ra, rb_, rt in zip(pa, pb, t)], F32)
    assert np.array_equal(fl(p), q) and np.array_equal(f, q.reshape(-1))
    rn, rz = (np.array([_rbf16(_q(v), m) for v in x], F32) for m in ("rn", "rz"))
    assert np.array_equal(rb, rn + rz)


def test_half2_dot_rows():
    rows, k2 = 70, 9
    A = _halves(rows * k2 * 2, 2.0).reshape(rows, k2, 2)
    B = _halves(k2 * 2, 2.0).reshape(k2, 2)
    out = np.zeros(rows, F32)
    kernel("half_bf16", "half2_dot_rows")(1, 128, (A, B, out, rows, k2))
    # a.x*b.x + a.y*b.y: fma(a.x, b.x, a.y*b.y) where both half products are exact in f32, so one
    # f32 rounding of the exact sum; then acc += in f32
    Af, Bf = A.astype(F32), B.astype(F32)
    expect = []
    for r in range(rows):
        acc = F32(0)
        for k in range(k2):
            acc = F32(acc + (Af[r, k, 0] * Bf[k, 0] + Af[r, k, 1] * Bf[k, 1]))
        expect.append(acc)
    assert np.array_equal(out, np.array(expect, F32))


def test_half_compare_math():
    n = 100
    a, b = _halves(n), _halves(n)
    a[:4] = [np.nan, 1.0, -2.0, 0.0]
    b[:4] = [1.0, 1.0, -1.0, -0.0]
    cmp, e, s = np.zeros(n, np.int32), np.zeros(n, np.float16), np.zeros(n, np.float16)
    kernel("half_bf16", "half_compare_math")(1, 128, (a, b, cmp, e, s, n))
    assert np.array_equal(cmp, (a < b) * 1 | (a == b) * 2 | np.isnan(a) * 4)
    # hexp: within 1 half ulp of the exact value (from float64); hsqrt correctly rounded
    ref = np.exp(a.astype(np.float64))
    ok = ~np.isnan(a)
    assert (np.abs(e.astype(np.float64) - ref) <= np.spacing(ref.astype(np.float16)).astype(np.float64))[ok].all()
    assert np.array_equal(s[ok], np.array([_r16(Fraction(math.sqrt(abs(float(v))))) for v in a[ok]], np.float16))


# ---------------------------------------------------------------------------------------------
# The same cases on every nvcc variant (sm80, sm90, -lineinfo, -G): the variants must agree.

@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case", [_block_sum_dynamic, _stencil_7pt, _matmul_naive, _warp_compact, _atomic_add_types,
                                  _conv1d_constant, _half2_ops], ids=lambda f: f.__name__.strip("_"))
def test_variants_agree(case, variant):
    case(variant)


@pytest.mark.parametrize("variant", [
    v for v in VARIANTS])
def test_tile_reduce_ops_variants(variant):
    _tile_reduce_ops(variant)


@pytest.mark.xfail(strict=True, raises=ptxvm.UnsupportedError,
                   reason="sm_90 clusters: `barrier.cluster.arrive` (cluster.sync) is not supported yet")
def test_cluster_pair_sum_sm90_distributed_shared_memory():
    _cluster_pair_sum("sm90")


def _round_bf16(x: float) -> np.uint16:
    """float -> bf16 bits, round to nearest even (x is exactly representable in f64)."""
    q = Fraction(x)
    if q == 0:
        return np.uint16(0x8000 if str(x).startswith("-") else 0)
    f32 = np.float32(x)                          # exact for the values used here (halves -> f32)
    u = int(np.asarray(f32).view(np.uint32))
    lower, rest = u >> 16, u & 0xFFFF
    up = rest > 0x8000 or (rest == 0x8000 and lower & 1)
    return np.uint16(lower + up)


def test_half_atomics_in_thread_order():
    # atomicAdd on __half2 / __nv_bfloat162 / __half: each add rounds once; colliding adds apply in
    # thread order, so the model is a sequential sum with one rounding per step.
    n = 40
    v = _halves(2 * n, scale=2.0)
    acc2, acc1 = np.zeros(2, np.float16), np.zeros(1, np.float16)
    accb = np.zeros(2, np.uint16)
    kernel("half_bf16", "half_atomics")(1, 64, (v, acc2, accb, acc1, n))
    pairs = v.reshape(n, 2)
    e2 = [np.float16(0), np.float16(0)]
    eb = [0.0, 0.0]
    e1 = np.float16(0)
    for i in range(n):
        for k in range(2):
            e2[k] = np.float16(float(e2[k]) + float(pairs[i, k]))          # exact sum, rounded once
            bv = int(_round_bf16(float(pairs[i, k])))
            addend = float(np.asarray(np.uint32(bv << 16)).view(np.float32))
            eb[k] = float(np.asarray(np.uint32(int(_round_bf16(eb[k] + addend)) << 16)).view(np.float32))
        e1 = np.float16(float(e1) + float(pairs[i, 0]))
    assert list(acc2) == e2 and acc1[0] == e1
    assert [float(np.asarray(np.uint32(int(x) << 16)).view(np.float32)) for x in accb] == eb
