"""The host JIT's warp-as-SIMD path (ptxvm.jit.simd): corpus kernels it takes run bit for bit as
the interpreter runs them (the interpreter is the reference), divergence and faults included;
kernels it does not take fall back to the per-thread path with the reason in the driver mode."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ptxvm
from ptxvm.driver.api import default_device
from ptxvm.jit.simd import MODE
from ptxvm.jit.simd.accept import refusal
from ptxvm.machine.symbols import layout

from models.fixture_kernels import kernel

RNG = np.random.default_rng(19)


def _f32(n):
    return RNG.random(n, dtype=np.float32) - np.float32(0.5)


def _i32(n):
    return RNG.integers(-1000, 1000, n, dtype=np.int32)


# (fixture, kernel name, grid, block, argument maker): launched on both executors.
CASES = [
    ("elementwise", "vector_add", (5,), (256,), lambda: (_f32(1200), _f32(1200), np.zeros(1200, np.float32), np.int32(1200))),
    ("reductions", "block_sum_static", (4,), (256,), lambda: (_f32(1000), np.zeros(4, np.float32), np.int32(1000))),
    ("warp_shuffle", "warp_sum_down", (4,), (256,), lambda: (_f32(1024), np.zeros(32, np.float32))),
    ("warp_shuffle", "warp_max_xor", (2,), (128,), lambda: (_i32(256), np.zeros(256, np.int32))),
    ("warp_shuffle", "warp_scan_up", (2,), (128,), lambda: (_i32(256), np.zeros(256, np.int32))),
    ("warp_shuffle", "shfl_broadcast", (2,), (64,), lambda: (_i32(128), np.zeros(128, np.int32))),
    # a partial last warp (tpc 48): the lanes past the block never run
    ("reductions", "block_sum_static", (3,), (48,), lambda: (_f32(100), np.zeros(3, np.float32), np.int32(100))),
]


def _run(k, grid, block, args, device):
    k(grid, block, args, device=device)
    return k.stats


@pytest.mark.parametrize("stem,name,grid,block,make", CASES, ids=[f"{c[1]}-{c[3][0]}" for c in CASES])
def test_simd_kernels_match_the_interpreter_bit_for_bit(stem, name, grid, block, make):
    k = kernel(stem, name)
    lay = layout(k.module.ir, k.ir, default_device().image(k.module), 0)
    assert refusal(k.ir, lay) is None                   # the vector path takes it
    want, got = make(), None
    got = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in want)
    _run(k, grid, block, want, "interp")
    stats = _run(k, grid, block, got, "cpu")
    assert stats.host_driver == MODE
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            assert np.array_equal(w.view(np.uint8), g.view(np.uint8))


DIVERGE = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<4>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r9, [n];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 7;          // a per-lane trip count
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
LOOP:
  setp.ge.u32 %p1, %r4, %r2;
  @%p1 bra DONE;
  and.b32 %r5, %r4, 1;
  setp.eq.u32 %p2, %r5, 0;
  @%p2 bra EVEN;
  mul.lo.s32 %r3, %r3, 3;       // odd iterations
  bra NEXT;
EVEN:
  add.s32 %r3, %r3, %r1;        // even iterations
NEXT:
  add.s32 %r4, %r4, 1;
  bra LOOP;
DONE:
  shfl.sync.bfly.b32 %r6, %r3, 5, 31, -1;    // after reconvergence: every lane takes part
  setp.lt.u32 %p3, %r1, %r9;
  @!%p3 bra END;
  add.s32 %r7, %r6, %r3;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
END:
  ret;
}
"""


def test_divergent_loops_and_branches_reconverge_as_in_the_interpreter():
    k = ptxvm.Module(DIVERGE, "diverge.ptx")["k"]
    want, got = np.zeros(96, np.int32), np.zeros(96, np.int32)
    _run(k, (1,), (96,), (want, np.int32(90)), "interp")
    stats = _run(k, (1,), (96,), (got, np.int32(90)), "cpu")
    assert stats.host_driver == MODE
    assert np.array_equal(want, got)
    # an independent model of the same program
    model = np.zeros(96, np.int64)
    for t in range(96):
        acc = 0
        for i in range(t & 7):
            acc = acc * 3 if i & 1 else acc + t
        model[t] = acc
    wrapped = model.astype(np.int32)
    expect = (wrapped + wrapped[np.arange(96) ^ 5]).astype(np.int32)
    expect[90:] = 0
    assert np.array_equal(got, expect)


OOB = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [x];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def test_an_out_of_bounds_lane_reports_as_in_the_interpreter():
    k = ptxvm.Module(OOB, "oob.ptx")["k"]
    msgs = []
    x = ptxvm.to_device(np.zeros(40, np.uint32))       # one allocation: the reports name one address
    for dev in ("interp", "cpu"):
        with pytest.raises(ptxvm.KernelFault) as e:
            k((1,), (64,), (x,), device=dev)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert "thread (40, 0, 0)" in msgs[1]


def test_a_kernel_the_vector_path_refuses_runs_per_thread_and_says_why():
    k = kernel("atomics", "histogram_shared")
    x = RNG.integers(0, 1 << 20, 512, dtype=np.uint32)
    stats = _run(k, (2,), (256,), (x, np.zeros(64, np.uint32), np.int32(512)), "cpu")
    assert "simd path not taken: `atom" in stats.host_driver or "simd path not taken: `red" in stats.host_driver


def test_ptxvm_simd_0_turns_the_path_off(monkeypatch):
    monkeypatch.setenv("PTXVM_SIMD", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = ptxvm.Module(OOB.replace("ld.global.u32 %r2, [%rd3];\n", "mov.u32 %r2, 1;\n"), "off.ptx")["k"]
    stats = _run(k, (1,), (32,), (np.zeros(32, np.uint32),), "cpu")
    assert stats.host_driver != MODE and "PTXVM_SIMD=0" in stats.host_driver


STRIDED = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 x, .param .u64 y)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd4, [y];
  mov.u32 %r1, %tid.x;
  mul.lo.s32 %r2, %r1, 3;
  and.b32 %r2, %r2, 63;              // a permuted, non-contiguous lane order
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r3, [%rd3];
  setp.lt.u32 %p1, %r1, 50;
  @%p1 bra SKIP;                     // a partial warp stores
  add.s64 %rd5, %rd4, %rd2;
  st.global.u32 [%rd5], %r3;
SKIP:
  ret;
}
"""


def test_gathers_and_partial_scatters_match_the_interpreter():
    k = ptxvm.Module(STRIDED, "strided.ptx")["k"]
    x = _i32(64)
    want, got = np.zeros(64, np.int32), np.zeros(64, np.int32)
    _run(k, (1,), (64,), (x, want), "interp")
    stats = _run(k, (1,), (64,), (x, got), "cpu")
    assert stats.host_driver == MODE
    expect = np.zeros(64, np.int32)
    for t in range(50, 64):
        expect[(3 * t) & 63] = x[(3 * t) & 63]
    assert np.array_equal(want, expect) and np.array_equal(got, expect)
