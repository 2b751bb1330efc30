"""Execution cases: fixture kernels (tests/cuda/*.cu, compiled by nvcc) run on the interpreter,
checked against numpy models written from the CUDA sources' comments."""

from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np
import pytest

import ptxvm

from models.fixture_kernels import VARIANTS, round_f32, tree_sum, ulp_distance, warp_bits, kernel

RNG = np.random.default_rng(12345)


@pytest.mark.parametrize("variant", VARIANTS)
def test_vector_add(variant):
    n = 1000
    a, b = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    kernel("elementwise", "vector_add", variant)((n + 127) // 128, 128, (a, b, c, np.int32(n)))
    assert np.array_equal(c, a + b)


def test_saxpy_numba_style_launch_fused_multiply_add():
    n = 777
    x, y = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    y_run = y.copy()
    kernel("elementwise", "saxpy")[4, 256](n, 2.5, x, y_run)     # nvcc fuses alpha*x+y: fma.rn.f32
    expect = [round_f32(Fraction(2.5) * Fraction(float(xi)) + Fraction(float(yi))) for xi, yi in zip(x, y)]
    assert np.array_equal(y_run, np.array(expect, dtype=np.float32))


def test_poly_int_bounded_grid_stride():
    n = 5000
    v = RNG.integers(-3000, 3000, n, dtype=np.int32)
    out = np.zeros(n, np.int32)
    kernel("elementwise", "poly_int_bounded")(3, 256, (v, out, n))
    assert np.array_equal(out, (v * v - 3 * v + 2).astype(np.int32))


def test_clamp_relu():
    n = 300
    x = (RNG.random(n, dtype=np.float32) - 0.5) * 4
    out = np.zeros(n, np.float32)
    kernel("elementwise", "clamp_relu")(3, 128, (x, out, np.float32(-1.0), np.float32(1.5), n))
    v = np.minimum(np.maximum(x, np.float32(-1.0)), np.float32(1.5))
    assert np.array_equal(out, np.where(v > 0, v, np.float32(0)))


def test_affine_struct_param_by_value():
    n, stride = 100, 2
    src = RNG.random(n * stride, dtype=np.float32)
    out = np.zeros(n, np.float32)
    p = struct.pack("<ffiid", 1.5, -0.25, n, stride, 0.125)
    kernel("elementwise", "affine_struct_param")(1, 128, (p, src, out))
    # nvcc: fma.rn.f32(scale, x, shift), then add.f32 of (float)bias
    fused = np.array([round_f32(Fraction(1.5) * Fraction(float(v)) + Fraction(-0.25)) for v in src[::stride]],
                     dtype=np.float32)
    assert np.array_equal(out, fused + np.float32(0.125))


def test_splitmix64_64bit_integers():
    n = 257
    seed = 0x1234_5678_9ABC_DEF0
    h, m, sh = np.zeros(n, np.uint64), np.zeros(n, np.uint64), np.zeros(n, np.int64)
    kernel("elementwise", "splitmix64")(3, 128, (seed, h, m, sh, n))
    mask = (1 << 64) - 1
    for i in range(n):
        z = (seed + i * 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z = z ^ (z >> 31)
        assert int(h[i]) == z and int(m[i]) == z % 1000003
        assert int(sh[i]) == (z - (1 << 64) if z >> 63 else z) >> 33


def test_matrix_add_2d_grid():
    rows, cols = 37, 53
    A, B = RNG.random((rows, cols), dtype=np.float32), RNG.random((rows, cols), dtype=np.float32)
    C = np.zeros_like(A)
    kernel("grids", "matrix_add_2d")(((cols + 15) // 16, (rows + 15) // 16), (16, 16), (A, B, C, rows, cols))
    assert np.array_equal(C, A + np.float32(2) * B)


def test_index_3d():
    nx, ny, nz = 10, 7, 5
    out = np.zeros((nz, ny, nx), np.int32)
    kernel("grids", "index_3d")((2, 2, 3), (8, 4, 2), (out, nx, ny, nz))
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    assert np.array_equal(out, x + 1000 * y + 1000000 * z)


def test_transpose_tiled_shared_memory_and_barriers():
    rows, cols = 70, 45
    a = RNG.random((rows, cols), dtype=np.float32)
    out = np.zeros((cols, rows), np.float32)
    kernel("grids", "transpose_tiled")(((cols + 31) // 32, (rows + 31) // 32), (32, 8), (a, out, rows, cols))
    assert np.array_equal(out, a.T)


def test_block_sum_static():
    n, blocks = 1000, 4
    x = RNG.random(n, dtype=np.float32)
    out = np.zeros(blocks, np.float32)
    kernel("reductions", "block_sum_static")(blocks, 256, (x, out, n))
    padded = np.zeros(blocks * 256, np.float32)
    padded[:n] = x
    assert np.array_equal(out, tree_sum(padded.reshape(blocks, 256)))


def test_warp_shuffles():
    n = 256
    x = RNG.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    kernel("warp_shuffle", "shfl_rotate")(2, 128, (x, out, 5))
    w = x.reshape(-1, 32)
    assert np.array_equal(out.reshape(-1, 32), np.roll(w, -5, axis=1))

    sums = np.zeros(n // 32, np.float32)
    kernel("warp_shuffle", "warp_sum_down")(2, 128, (x, sums))
    v = w.copy()
    for off in (16, 8, 4, 2, 1):
        shifted = np.concatenate([v[:, off:], v[:, -off:] * 0 + v[:, -off:]], axis=1)[:, :32]
        # lanes past the end read their own value (shfl.down clamps at 31), which lane 0 never uses
        v = v + shifted
    assert np.array_equal(sums, v[:, 0])

    ints = RNG.integers(0, 100, n, dtype=np.int32)
    scan = np.zeros(n, np.int32)
    kernel("warp_shuffle", "warp_scan_up")(2, 128, (ints, scan))
    assert np.array_equal(scan.reshape(-1, 32), np.cumsum(ints.reshape(-1, 32), axis=1))


def test_atomic_ticket_return_values_in_lane_order():
    n = 500
    counter = np.array([7], np.int32)
    old = np.zeros(n, np.int32)
    kernel("atomics", "atomic_ticket")(2, 256, (counter, old, n))
    assert counter[0] == 7 + n
    assert np.array_equal(old, 7 + np.arange(n))


def test_histogram_shared_atomics():
    n = 3000
    x = RNG.integers(0, 1 << 20, n, dtype=np.uint32)
    hist = np.zeros(64, np.uint32)
    kernel("atomics", "histogram_shared")(4, 128, (x, hist, n))
    assert np.array_equal(hist, np.bincount(x & 63, minlength=64).astype(np.uint32))


def test_launch_statistics():
    n = 64
    a = np.ones(n, np.float32)
    k = kernel("elementwise", "vector_add")
    stats = k(1, 64, (a, a, np.zeros(n, np.float32), n))
    assert stats is k.stats and stats.batches == 1 and stats.instructions > n * 5


def test_noinline_calls_and_recursion():
    import math
    n = 70
    a = RNG.integers(-500, 500, n, dtype=np.int32)
    bb = RNG.integers(1, 500, n, dtype=np.int32)
    x = RNG.random(n, dtype=np.float32)
    out, g = np.zeros(n, np.float32), np.zeros(n, np.int32)
    kernel("calls", "noinline_calls")(2, 64, (x, out, a, bb, g, n))
    assert np.array_equal(g, [math.gcd(int(p), int(q)) for p, q in zip(a, bb)])
    # poly3 = ((a*x + b)*x + c)*x with a=1, b=-2, c=3: nvcc fuses the first two steps into fma.rn.f32
    t = np.array([round_f32(Fraction(float(v)) + Fraction(-2)) for v in x], dtype=np.float32)
    t = np.array([round_f32(Fraction(float(p)) * Fraction(float(v)) + Fraction(3)) for p, v in zip(t, x)],
                 dtype=np.float32)
    assert np.array_equal(out, t * x)

    fact, fibs = np.zeros(n, np.uint64), np.zeros(n, np.int32)
    kernel("calls", "recursion")(2, 64, (fact, fibs, n))
    fib = [0, 1]
    while len(fib) < 20:
        fib.append(fib[-1] + fib[-2])
    assert [int(v) for v in fact[:21]] == [math.factorial(i) for i in range(21)]
    assert list(fibs) == [fib[i % 20] for i in range(n)]


def test_printf_in_thread_order(capsys):
    out = np.zeros(64, np.int32)
    kernel("printf_assert", "printf_basic")(2, 32, (out, np.float32(0.5)))
    lines = capsys.readouterr().out.splitlines()
    expect = [f"block {i // 32} thread {i % 32}: i={i} scale*i={0.5 * i:f} id64={i << 33} tag {chr(65 + i % 26)}"
              for i in range(64)]
    assert lines == expect
    assert np.array_equal(out, np.arange(64) * 2)


def test_device_assert_reports_message_and_location():
    inp = np.arange(8, dtype=np.int32)
    d = np.ones(8, np.int32)
    d[5] = 0
    with pytest.raises(ptxvm.TrapError, match=r"device-side assert failed: `d\[i\] != 0`") as e:
        kernel("printf_assert", "assert_nonzero")(1, 8, (inp, d, np.zeros(8, np.int32), 8))
    assert e.value.thread == (5, 0, 0)


def test_vote_ballot_any_all():
    n = 128
    x = RNG.integers(-5, 5, n, dtype=np.int32)
    x[32:64] = 1          # a warp where all hold
    x[64:96] = -1         # a warp where none holds
    ballot, any_, all_ = np.zeros(4, np.uint32), np.zeros(4, np.int32), np.zeros(4, np.int32)
    kernel("warp_vote", "vote_ballot_any_all")(1, 128, (x, ballot, any_, all_))
    p = (x > 0).reshape(-1, 32)
    assert np.array_equal(ballot, warp_bits(x > 0))
    assert np.array_equal(any_, p.any(axis=1)) and np.array_equal(all_, p.all(axis=1))


def test_match_any_all():
    n = 64
    keys = RNG.integers(0, 4, n, dtype=np.int32)
    keys[32:] = 7
    keys64 = (keys.astype(np.int64) << 40) + 3
    peers, leader, allsame, peers64 = (np.zeros(n, np.uint32), np.zeros(n, np.int32), np.zeros(2, np.int32),
                                       np.zeros(n, np.uint32))
    kernel("warp_vote", "match_keys")(1, 64, (keys, keys64, peers, leader, allsame, peers64))
    for i in range(n):
        w = i // 32 * 32
        expect = sum(1 << (j - w) for j in range(w, w + 32) if keys[j] == keys[i])
        assert peers[i] == expect and peers64[i] == expect
        assert leader[i] == int((expect & -expect).bit_length() - 1 == i % 32)
    assert list(allsame) == [int(len(set(keys[:32])) == 1), 1]


def test_warp_redux():
    n = 64
    u = RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    s = RNG.integers(-1000, 1000, n, dtype=np.int32)
    out_u, out_s = np.zeros(12, np.uint32), np.zeros(4, np.int32)
    kernel("warp_vote", "warp_redux")(1, 64, (u, s, out_u, out_s))
    for w in range(2):
        a, b = u[32 * w:32 * w + 32], s[32 * w:32 * w + 32]
        expect = [int(a.astype(np.uint64).sum()) & 0xFFFFFFFF, a.min(), a.max(),
                  np.bitwise_and.reduce(a), np.bitwise_or.reduce(a), np.bitwise_xor.reduce(a)]
        assert [int(v) for v in out_u[6 * w:6 * w + 6]] == [int(v) for v in expect]
        assert list(out_s[2 * w:2 * w + 2]) == [b.min(), b.max()]


def test_float_math_library_within_cuda_ulp_bounds():
    # The interpreter runs libdevice's instruction sequences exactly; the results must lie within
    # the maximum ULP errors the CUDA C Programming Guide documents for these functions.
    n = 200
    x = ((RNG.random(n) - 0.5) * 20).astype(np.float32)
    out = np.zeros(7 * n, np.float32)
    kernel("math_precise", "float_math")(2, 128, (x, out, n))
    o = out.reshape(n, 7)
    xd = x.astype(np.float64)
    refs = [np.sin(xd), np.cos(xd), np.tan(xd), np.exp(xd), np.log(np.abs(xd) + 1), np.sqrt(np.abs(xd)),
            np.abs(xd) ** 1.5]
    bounds = [2, 2, 4, 2, 1, 0, 4]      # sinf cosf tanf expf logf sqrtf powf
    for k, (ref, ulps) in enumerate(zip(refs, bounds)):
        ref32 = ref.astype(np.float32)
        if k == 4:
            ref32 = np.log(np.abs(x) + np.float32(1)).astype(np.float64).astype(np.float32)
        assert ulp_distance(o[:, k], ref32).max() <= ulps + 1, k


def test_division_reciprocal_fma_exactly():
    n = 150
    a, b, c = ((RNG.random((3, n)) - 0.5) * 100).astype(np.float32)
    q, r, f, cs = (np.zeros(n, np.float32) for _ in range(4))
    dq, df = np.zeros(n, np.float64), np.zeros(n, np.float64)
    kernel("math_precise", "div_fma")(2, 128, (a, b, c, q, r, f, dq, df, cs, n))
    assert np.array_equal(q, a / b)                       # div.rn.f32: correctly rounded
    assert np.array_equal(r, np.float32(1) / b)           # rcp.rn.f32
    assert np.array_equal(f, [round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                              for x, y, z in zip(a, b, c)])
    assert np.array_equal(dq, a.astype(np.float64) / b.astype(np.float64))
    assert np.array_equal(df, [float(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                               for x, y, z in zip(a, b, c)])        # float(Fraction) rounds correctly
    assert np.array_equal(cs, np.copysign(np.maximum(a - c, np.float32(0)), b))


def test_integer_intrinsics():
    n = 100
    a = RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    a[:3] = [0, 1, 0x80000000]
    b64 = RNG.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    b64[0] = 0
    out = np.zeros(8 * n, np.int32)
    kernel("int_intrinsics", "bit_ops")(1, 128, (a, b64, out, n))
    o = out.reshape(n, 8).astype(np.int64)
    for i in range(n):
        x, y = int(a[i]), int(b64[i])
        ffs = lambda v: (v & -v).bit_length()  # noqa: E731
        brev32 = int(f"{x:032b}"[::-1], 2)
        expect = [bin(x).count("1"), 32 - x.bit_length(), brev32 - (1 << 32) * (brev32 >> 31), ffs(x),
                  bin(y).count("1"), 64 - y.bit_length(), ffs(y)]
        brev64_hi = int(f"{y:064b}"[::-1], 2) >> 32
        expect.append(brev64_hi - (1 << 32) * (brev64_hi >> 31))
        assert list(o[i]) == expect, i


def test_byte_perm_and_funnel_shifts():
    n = 80
    x, y = (RNG.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    s = RNG.integers(0, 1 << 16, n, dtype=np.uint64).astype(np.uint32)
    s[:4] = [0, 31, 32, 40]
    out = np.zeros(4 * n, np.uint32)
    kernel("int_intrinsics", "permute_funnel")(1, 128, (x, y, s, out, n))
    o = out.reshape(n, 4)
    for i in range(n):
        xi, yi, si = int(x[i]), int(y[i]), int(s[i])
        src = (yi << 32) | xi
        perm = 0
        for k in range(4):
            sel = (si >> (4 * k)) & 7
            perm |= ((src >> (8 * sel)) & 0xFF) << (8 * k)
        w = (yi << 32) | xi
        fl = ((w << (si & 31)) >> 32) & 0xFFFFFFFF
        fr = (w >> (si & 31)) & 0xFFFFFFFF
        flc = ((w << min(si, 32)) >> 32) & 0xFFFFFFFF
        assert [int(v) for v in o[i]] == [perm, fl, fr, flc], i


def test_syncthreads_count_and_or_via_bar_red():
    n, blocks = 300, 2
    x = RNG.integers(-3, 10, n, dtype=np.int32)
    flags = np.zeros(3 * blocks, np.int32)
    kernel("reductions", "sync_predicates")(blocks, 256, (x, flags, n))
    v = np.ones(blocks * 256, np.int32)
    v[:n] = x
    v = v.reshape(blocks, 256)
    expect = np.stack([(v > 0).sum(1), (v > 0).all(1), (v < 0).any(1)], axis=1).reshape(-1)
    assert np.array_equal(flags, expect)


def test_double_math_library_within_cuda_ulp_bounds():
    # CUDA C Programming Guide, double-precision functions: sin/cos 2 ulp, exp 1, log 1, sqrt 0
    # (IEEE), pow 2; libdevice's sequences use rcp.approx.ftz.f64 as a seed, refined exactly.
    n = 150
    x = (RNG.random(n) - 0.5) * 20
    out = np.zeros(6 * n, np.float64)
    kernel("math_precise", "double_math")(2, 128, (x, out, n))
    o = out.reshape(n, 6)
    refs = [np.sin(x), np.cos(x), np.exp(x), np.log(np.abs(x) + 1.0), np.sqrt(np.abs(x)), np.abs(x) ** 0.3]
    for k, (ref, ulps) in enumerate(zip(refs, [2, 2, 1, 1, 0, 2])):
        assert ulp_distance(o[:, k], ref).max() <= ulps + 1, k      # +1: numpy's own rounding
