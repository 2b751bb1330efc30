"""Kernels that never stop run their threads in one record per host thread (jit.compact): the
same results and the same fault reports as the interpreter, whichever chunk faults; and the
host thread count is PTXVM_NUM_THREADS, else the CPUs this process may use."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import ptxvm
from ptxvm.jit.threads import host_threads

pytest.importorskip("llvmlite")

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
# c[i] = a[i] + i for i < n (a guard the test may set past the arrays' end to fault).
ADD = HEAD + """.visible .entry add(.param .u64 pa, .param .u64 pc, .param .u32 n)
{
.reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f32 %f<4>;
ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pc]; ld.param.u32 %r1, [n];
mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mov.u32 %r4, %tid.x;
mad.lo.s32 %r5, %r2, %r3, %r4;
setp.ge.s32 %p1, %r5, %r1;
@%p1 bra DONE;
mul.wide.s32 %rd3, %r5, 4;
add.s64 %rd4, %rd1, %rd3;
ld.global.f32 %f1, [%rd4];
cvt.rn.f32.s32 %f2, %r5;
add.f32 %f3, %f1, %f2;
add.s64 %rd5, %rd2, %rd3;
st.global.f32 [%rd5], %f3;
DONE:
ret;
}
"""
BARRIER = HEAD + """.visible .entry k(.param .u64 p)
{
.reg .b32 %r<2>;
bar.sync 0;
ret;
}
"""


def _program(src: str, name: str):
    k = ptxvm.Module(src, "t.ptx")[name]
    k(1, 32, (np.zeros(64, np.float32), np.zeros(64, np.float32), 0) if name == "add" else (0,), device="cpu")
    return next(p for key, p in k.module._programs.items() if key[0] == k.name and key[-1] == "cpu")


def test_a_kernel_without_stops_is_compact_and_one_with_a_barrier_is_not(monkeypatch):
    monkeypatch.setenv("PTXVM_SIMD", "0")         # the per-thread drivers (jit.simd takes both otherwise)
    assert _program(ADD, "add").compact
    assert not _program(BARRIER, "k").compact


@pytest.mark.parametrize("threads", ["1", "3"])
def test_compact_results_equal_the_interpreter(monkeypatch, threads):
    monkeypatch.setenv("PTXVM_NUM_THREADS", threads)
    k = ptxvm.Module(ADD, "t.ptx")["add"]
    n = 77 * 64 + 5
    a = np.random.default_rng(3).random(n, dtype=np.float32)
    out = {}
    for dev in ("interp", "cpu"):
        c = np.full(n, -1, np.float32)
        k((n + 63) // 64, 64, (a, c, n), device=dev)
        out[dev] = c
    assert np.array_equal(out["interp"].view(np.uint32), out["cpu"].view(np.uint32))


@pytest.mark.parametrize("threads", ["1", "2", "5"])
@pytest.mark.parametrize("bad_cta", [0, 3, 40])
def test_compact_fault_report_equals_the_interpreter(monkeypatch, threads, bad_cta):
    # The guard lets CTA ``bad_cta``'s threads read past the end of ``a``: each executor reports
    # the first thread out of bounds, whichever host thread ran its chunk.
    monkeypatch.setenv("PTXVM_NUM_THREADS", threads)
    k = ptxvm.Module(ADD, "t.ptx")["add"]
    grid, block = 48, 32
    size = bad_cta * block + 7
    msgs = {}
    for dev in ("interp", "cpu"):
        a = np.zeros(size, np.float32)
        c = np.zeros(grid * block, np.float32)
        with pytest.raises(ptxvm.KernelFault) as e:
            k(grid, block, (a, c, grid * block), device=dev)
        msgs[dev] = re.sub(r"0x[0-9a-f]+", "ADDR", str(e.value))     # each launch allocates anew
    assert msgs["cpu"] == msgs["interp"]
    assert f"block ({bad_cta}, 0, 0)" in msgs["cpu"] and "thread (7, 0, 0)" in msgs["cpu"], msgs["cpu"]


def test_host_threads_is_the_environment_or_the_affinity_mask(monkeypatch):
    monkeypatch.delenv("PTXVM_NUM_THREADS", raising=False)
    assert host_threads() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("PTXVM_NUM_THREADS", "3")
    assert host_threads() == 3
    for bad in ("0", "-2", "many"):
        monkeypatch.setenv("PTXVM_NUM_THREADS", bad)
        with pytest.raises(ValueError, match="PTXVM_NUM_THREADS"):
            host_threads()
