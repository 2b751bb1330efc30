"""machine.addressmap: the one device address map is consistent, and every executor lives in it."""

from __future__ import annotations

import numpy as np

import ptxvm
from ptxvm.machine import addressmap as M

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def test_windows_are_ordered_disjoint_and_above_the_null_guard() -> None:
    spans = [(w.base, w.limit) for w in M.WINDOWS]
    assert all(lo < hi for lo, hi in spans)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "windows overlap or are out of order"
    assert M.NULL_LIMIT <= spans[0][0]
    # Global allocations start above every window, function addresses far above them.
    assert M.GLOBAL_BASE >= spans[-1][1]
    assert M.FUNCTION_BASE - M.GLOBAL_BASE >= 1 << 40
    assert M.ALIGN & (M.ALIGN - 1) == 0 and M.GUARD_BYTES > 0
    assert set(M.WINDOW) == {"shared", "local", "param"}


def test_the_documented_numbers() -> None:
    # The values the rest of ptxvm (and users' fault reports) have always shown.
    assert (M.NULL_LIMIT, M.SHARED_BASE, M.LOCAL_BASE, M.PARAM_BASE, M.PARAM_LIMIT, M.GLOBAL_BASE) == (
        0x1_0000, 0x1_0000_0000, 0x2_0000_0000, 0x3_0000_0000, 0x3_0001_0000, 0x7_0000_0000)


def test_window_of() -> None:
    assert M.window_of(0x1_0000_0005) == ("shared", 5)
    assert M.window_of(0x2_0000_0100) == ("local", 0x100)
    assert M.window_of(0x3_0000_0010) == ("param", 0x10)
    assert M.window_of(0x3_0001_0000) == ("global", 0x3_0001_0000)     # limits are exclusive
    assert M.window_of(0x7_0000_0000) == ("global", 0x7_0000_0000)


def test_function_addresses() -> None:
    assert M.function_addresses(["f", "g", "k"]) == {
        "f": 0xF000_0000_0000, "g": 0xF000_0000_0010, "k": 0xF000_0000_0020}


def test_the_jit_page_size_is_the_allocation_alignment() -> None:
    from ptxvm.jit.layout import PAGE_SHIFT       # the JIT's page table assumes it
    assert 1 << PAGE_SHIFT == M.ALIGN


def test_every_executor_shows_the_same_addresses(executor: str) -> None:
    """cvta of a shared and a local variable and a function's address, stored by the kernel:
    the hand-computed generic addresses of the map, on every executor."""
    text = HEAD + """
.func g() { ret; }
.visible .entry k(.param .u64 out)
{
.reg .b64 %rd<8>;
.shared .align 8 .b8 sh[64];
.local .align 8 .b8 lo[16];
ld.param.u64 %rd1, [out];
cvta.to.global.u64 %rd1, %rd1;
mov.u64 %rd2, sh;
cvta.shared.u64 %rd2, %rd2;
st.global.u64 [%rd1], %rd2;
mov.u64 %rd3, lo;
cvta.local.u64 %rd3, %rd3;
st.global.u64 [%rd1+8], %rd3;
mov.u64 %rd4, g;
st.global.u64 [%rd1+16], %rd4;
ret;
}
"""
    out = np.zeros(3, np.uint64)
    ptxvm.Module(text, "map.ptx")["k"](1, 1, (out,), device=executor)
    # sh is the only shared variable (offset 0), lo the only local one; g is function 0, k 1.
    assert out.tolist() == [0x1_0000_0000, 0x2_0000_0000, 0xF000_0000_0000]
