"""Formula register values (ptxvm/interp/lanevalues.py) and the fast paths built on them.

The interpreter keeps uniform and thread-linear integer values as ``(c + a*tid + q*cta) mod 2^w``
and touches memory through such addresses as slices. Expected values here come from numpy models
of the kernels (int32/int64 wraparound written out in numpy) and from brute-force evaluation of
the formulas; every kernel also runs with the formulas switched off ($PTXVM_INTERP_FORMULAS=0,
the plain array interpreter) and must give the same memory and the same fault reports.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptxvm
from ptxvm.interp.lanevalues import Affine, bounds, extend, linear_stride, materialize

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


# --------------------------------------------------------------------------- the formulas

def _brute(v: Affine, n: int, tpc: int) -> list[int]:
    return [(v.c + v.a * (lane % tpc) + v.q * (lane // tpc)) % (1 << v.bits) for lane in range(n)]


def _geometry_and_formula(draw_bits=st.sampled_from([8, 16, 32, 64])):
    @st.composite
    def strat(draw):
        bits = draw(draw_bits)
        tpc = draw(st.integers(1, 70))
        ctas = draw(st.integers(1, 9))
        coef = st.one_of(st.integers(-40, 40), st.integers(0, (1 << bits) - 1),
                         st.sampled_from([(1 << (bits - 1)) - 3, 1 << (bits - 1), (1 << bits) - 1]))
        c, a = draw(coef), draw(coef)
        q = draw(st.one_of(coef, st.just(a * tpc)))          # often linear in the flat lane index
        return Affine.make(bits, c, a, q), tpc, ctas
    return strat()


@settings(max_examples=300, deadline=None)
@given(_geometry_and_formula())
def test_materialize_matches_brute_force(case) -> None:
    v, tpc, ctas = case
    n = tpc * ctas
    lane = np.arange(n)
    got = materialize(v, n, tpc, lambda: lane % tpc, lambda: lane // tpc)
    assert got.dtype == np.dtype(f"uint{v.bits}")
    assert got.tolist() == _brute(v, n, tpc)
    stride = linear_stride(v, tpc)
    if stride is not None:
        assert got.tolist() == [(v.c + stride * i) % (1 << v.bits) for i in range(n)]


@settings(max_examples=300, deadline=None)
@given(_geometry_and_formula(st.sampled_from([8, 16, 32])), st.booleans())
def test_extend_and_bounds_are_exact_or_refused(case, signed) -> None:
    v, tpc, ctas = case
    n = tpc * ctas
    vals = np.array(_brute(v, n, tpc), dtype=np.uint64)
    as_int = vals.astype(np.int64)
    if signed:
        as_int = np.where(as_int >> (v.bits - 1), as_int - (1 << v.bits), as_int)
    e = extend(v, 64, signed, tpc, ctas)
    if e is not None:
        assert [x - (1 << 64) if x >> 63 else x for x in _brute(e, n, tpc)] == as_int.tolist()
    r = bounds(v, tpc, ctas, signed)
    if r is not None:
        assert r == (int(as_int.min()), int(as_int.max()))
    # A formula whose values do not wrap always extends.
    span = (v.a if v.a < 1 << (v.bits - 1) else v.a - (1 << v.bits)) * (tpc - 1)
    if v.q == 0 and abs(span) < 4 and (1 << (v.bits - 1)) + 8 < v.c < (1 << v.bits) - 8 and not signed:
        assert e is not None


def test_extension_across_the_sign_boundary_is_refused() -> None:
    v = Affine.make(32, 0x7FFFFFFE, 1, 0)         # tid 0..3 -> INT_MAX-1 .. INT_MIN+1 as s32
    assert extend(v, 64, True, 4, 1) is None
    assert extend(v, 64, False, 4, 1) == Affine.make(64, 0x7FFFFFFE, 1, 0)


# --------------------------------------------------------------------------- kernels

def _run_both(src: str, grid, block, make_args):
    """Launch kernel ``k`` with formulas on and off; returns both argument lists after the run."""
    results = []
    for setting in ("1", "0"):
        mp = pytest.MonkeyPatch()
        mp.setenv("PTXVM_INTERP_FORMULAS", setting)
        try:
            args = make_args()
            ptxvm.Module(HEAD + src)["k"](grid, block, args, device="interp")
        finally:
            mp.undo()
        results.append(args)
    return results


INDEX = """
.visible .entry k(.param .u64 out, .param .u32 kk)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [kk];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  add.s32 %r6, %r5, %r1;
  mul.wide.s32 %rd2, %r6, 3;
  cvt.u64.u32 %rd3, %r6;
  cvt.s64.s32 %rd4, %r6;
  shl.b64 %rd5, %rd4, 2;
  mul.wide.u32 %rd6, %r6, 5;
  sub.s64 %rd7, %rd2, %rd3;
  cvta.to.global.u64 %rd8, %rd1;
  mul.wide.u32 %rd9, %r5, 48;
  add.s64 %rd10, %rd8, %rd9;
  st.global.u64 [%rd10], %rd2;
  st.global.u64 [%rd10+8], %rd3;
  st.global.u64 [%rd10+16], %rd4;
  st.global.u64 [%rd10+24], %rd5;
  st.global.u64 [%rd10+32], %rd6;
  st.global.u64 [%rd10+40], %rd7;
  ret;
}
"""


def _index_model(n: int, kk: int) -> np.ndarray:
    i = np.arange(n, dtype=np.int64)
    r6 = ((i + kk) & 0xFFFFFFFF).astype(np.uint32)       # add.s32 wraps
    s6 = r6.view(np.int32).astype(np.int64)
    u6 = r6.astype(np.uint64)
    with np.errstate(over="ignore"):
        cols = [s6 * 3, u6.view(np.int64), s6, s6 << 2, (u6 * np.uint64(5)).view(np.int64),
                s6 * 3 - u6.view(np.int64)]
    return np.stack(cols, axis=1).view(np.uint64)


@pytest.mark.parametrize("kk", [0, 5, 0x7FFFFF80, 0xFFFFFF00, 0x80000000])
@pytest.mark.parametrize("grid,block", [(4, 64), ((2, 2), 64), (3, (16, 4))])
def test_index_arithmetic_matches_the_model(kk, grid, block) -> None:
    g = np.prod(grid)
    b_ = np.prod(block)
    n = int(g * b_)
    on, off = _run_both(INDEX, grid, block, lambda: [np.zeros((n, 6), np.uint64), kk])
    # Linear thread id as the kernel computes it (ctaid.x * ntid.x + tid.x): for 2D shapes it is
    # not the flat index, so compare per thread through the kernel's own formula in numpy.
    gx = grid[0] if isinstance(grid, tuple) else grid
    bx = block[0] if isinstance(block, tuple) else block
    lane = np.arange(n)
    tpc = int(b_)
    cta, t = lane // tpc, lane % tpc
    ids = (cta % gx) * bx + (t % bx)
    want = np.zeros((n, 6), np.uint64)
    model = _index_model(int(ids.max()) + 1, kk)
    want[ids] = model[ids]
    np.testing.assert_array_equal(on[0], off[0])
    if isinstance(grid, int) and isinstance(block, int):
        np.testing.assert_array_equal(on[0], _index_model(n, kk))
    else:
        np.testing.assert_array_equal(on[0][ids], model[ids])


def test_index_arithmetic_across_batches(monkeypatch) -> None:
    monkeypatch.setenv("PTXVM_INTERP_BATCH_BYTES", "20000")      # a few CTAs per batch
    n = 16 * 32
    out = np.zeros((n, 6), np.uint64)
    st_ = ptxvm.Module(HEAD + INDEX)["k"](16, 32, [out, 0x7FFFFFF0], device="interp")
    assert st_.batches > 1
    np.testing.assert_array_equal(out, _index_model(n, 0x7FFFFFF0))


LOADS = """
.visible .entry k(.param .u64 src, .param .u64 dst)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mul.wide.u32 %rd3, %r4, 8;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r5, [%rd4+4];
  ld.global.v2.u32 {%r6, %r7}, [%rd4];
  ld.global.u32 %r8, [%rd1+12];
  ld.global.nc.u32 %r9, [%rd1+8];
  mad.lo.s32 %r10, %r6, %r7, %r5;
  add.s32 %r10, %r10, %r8;
  mul.lo.s32 %r11, %r9, 3;
  add.s32 %r10, %r10, %r11;
  mul.wide.u32 %rd5, %r4, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r10;
  ret;
}
"""


def test_strided_vector_and_uniform_loads() -> None:
    n = 256
    src = np.random.default_rng(7).integers(0, 1 << 32, 2 * n, dtype=np.uint64).astype(np.uint32)
    on, off = _run_both(LOADS, 2, 128, lambda: [src.copy(), np.zeros(n, np.uint32)])
    pairs = src.reshape(n, 2).astype(np.uint64)
    want = (pairs[:, 0] * pairs[:, 1] + pairs[:, 1] + np.uint64(src[3]) + np.uint64(src[2]) * np.uint64(3)) \
        & np.uint64(0xFFFFFFFF)
    np.testing.assert_array_equal(on[1], want.astype(np.uint32))
    np.testing.assert_array_equal(off[1], on[1])


SHARED = """
.visible .entry k(.param .u64 dst)
{
  .shared .align 8 .b8 sh[1024];
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [dst];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  mad.lo.s32 %r5, %r3, 7, %r1;
  shl.b32 %r6, %r3, 2;
  mov.u32 %r7, sh;
  add.s32 %r8, %r7, %r6;
  st.shared.u32 [%r8], %r5;
  bar.sync 0;
  ld.shared.u32 %r9, [sh+4];
  ld.shared.u32 %r10, [%r8];
  mov.u64 %rd2, sh;
  cvta.shared.u64 %rd3, %rd2;
  cvt.u64.u32 %rd4, %r6;
  add.s64 %rd5, %rd3, %rd4;
  ld.u32 %r11, [%rd5];
  add.s32 %r9, %r9, %r10;
  add.s32 %r9, %r9, %r11;
  mul.wide.u32 %rd6, %r4, 4;
  add.s64 %rd7, %rd1, %rd6;
  st.global.u32 [%rd7], %r9;
  ret;
}
"""


def test_shared_memory_through_formula_addresses() -> None:
    grid, block = 3, 96
    n = grid * block
    on, off = _run_both(SHARED, grid, block, lambda: [np.zeros(n, np.uint32)])
    cta, t = np.arange(n) // block, np.arange(n) % block
    own = t * 7 + cta
    want = (cta + 7) + 2 * own                # sh[1] of the thread's CTA + its own slot twice
    np.testing.assert_array_equal(on[0], want.astype(np.uint32))
    np.testing.assert_array_equal(off[0], on[0])


GUARDED = """
.visible .entry k(.param .u64 dst, .param .u32 n)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<3>;
  ld.param.u64 %rd1, [dst];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  setp.hi.u32 %p2, %r1, %r5;
  @%p1 bra DONE;
  selp.u32 %r6, 1, 2, %p2;
  mul.wide.s32 %rd2, %r5, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
DONE:
  ret;
}
"""


@pytest.mark.parametrize("n", [0, 1, 255, 256, 300, 512, 600])
def test_bounds_guard_with_uniform_and_partial_outcomes(n) -> None:
    size = 512
    on, off = _run_both(GUARDED, 2, 256, lambda: [np.full(size, 9, np.uint32), n])
    want = np.full(size, 9, np.uint32)
    want[:min(n, size)] = 1
    np.testing.assert_array_equal(on[0], want)
    np.testing.assert_array_equal(off[0], want)


def _fault_message(src: str, grid, block, args) -> str:
    with pytest.raises(ptxvm.KernelFault) as e:
        ptxvm.Module(HEAD + src)["k"](grid, block, args, device="interp")
    return str(e.value)


@pytest.mark.parametrize("case", ["past-the-end", "misaligned"])
def test_faults_through_formula_addresses_are_reported_as_before(case, monkeypatch) -> None:
    n = 256
    dev = ptxvm.to_device(np.zeros(200 if case == "past-the-end" else n + 1, np.uint32))
    ptr = dev.ptr + (2 if case == "misaligned" else 0)
    msgs = []
    for setting in ("1", "0"):
        monkeypatch.setenv("PTXVM_INTERP_FORMULAS", setting)
        msgs.append(_fault_message(GUARDED, 2, 128, [ptr, n]))
    assert msgs[0] == msgs[1]
    if case == "past-the-end":
        assert "block (1, 0, 0), thread (72, 0, 0)" in msgs[0]       # element 200, the first outside
        assert "out-of-bounds" in msgs[0]
    else:
        assert "misaligned" in msgs[0] and "block (0, 0, 0), thread (0, 0, 0)" in msgs[0]


# --------------------------------------------------------------------------- host arrays in place

REVERSE = """
.visible .entry k(.param .u64 src, .param .u64 dst, .param .u32 n)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  .reg .pred %p;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  sub.u32 %r3, %r1, %r2;
  sub.u32 %r3, %r3, 1;
  mul.wide.u32 %rd3, %r3, 2;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u16 %r4, [%rd4];
  add.u32 %r4, %r4, 1;
  mul.wide.u32 %rd5, %r2, 2;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u16 [%rd6], %r4;
DONE:
  ret;
}
"""


def test_host_arrays_alias_only_when_separate(executor) -> None:
    """A read-only input is copied, not shared. (One array passed twice aliases, as device
    memory does: tests/driver/test_driver_safety.py; an in-place reversal would be a race.)"""
    n = 9                                                   # 18 bytes: not a multiple of 16
    mod = ptxvm.Module(HEAD + REVERSE)
    src = np.arange(n, dtype=np.uint16)
    src.flags.writeable = False                             # read-only input: copied, not shared
    dst = np.zeros(n, np.uint16)
    mod["k"](1, 32, [src, dst, n], device=executor)
    np.testing.assert_array_equal(dst, np.arange(n, dtype=np.uint16)[::-1] + 1)


def test_a_write_to_a_read_only_argument_is_an_error(executor) -> None:
    a = np.arange(9, dtype=np.uint16)
    a.flags.writeable = False
    with pytest.raises(ptxvm.LaunchError, match=r"read-only numpy argument\(s\) `dst`"):
        ptxvm.Module(HEAD + REVERSE)["k"](1, 32, [np.arange(9, dtype=np.uint16), a, 9], device=executor)
    np.testing.assert_array_equal(a, np.arange(9, dtype=np.uint16))
