"""machine.reports: the one builder of fault and deadlock reports, pinned to the text the
interpreter and the host JIT produced before they shared it, and the same on every executor."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from ptxvm.errors import KernelFault, TrapError
from ptxvm.machine.reports import BarrierWait, BlockWait, WaitSite, deadlock_message, kernel_fault

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def test_kernel_fault_header() -> None:
    e = kernel_fault(KernelFault, "bad thing", kernel="_Z3fooi", block=(1, 0, 0), thread=(2, 0, 0),
                     address=0x10, space="global")
    assert e.message == ("bad thing\n  in kernel `foo(int)` (_Z3fooi), block (1, 0, 0), thread (2, 0, 0)\n"
                         "  address 0x10 in the .global state space")
    assert (e.kernel, e.block, e.thread, e.address, e.space) == ("_Z3fooi", (1, 0, 0), (2, 0, 0), 0x10, "global")
    # Only a memory fault (KernelFault itself) names the address.
    t = kernel_fault(TrapError, "trap", kernel="k", block=(0, 0, 0), thread=(0, 0, 0), address=0x10, space="global")
    assert t.message == "trap\n  in kernel `k`, block (0, 0, 0), thread (0, 0, 0)" and isinstance(t, TrapError)


def test_deadlock_message_from_facts() -> None:
    site = WaitSite(((32, 0, 0), (33, 0, 0), (34, 0, 0)), True, 12, "bar.sync 2, 128;")
    blocks = [
        BlockWait((0, 0, 0), 64, 64, 64, (BarrierWait(2, 128, 96, 32, (site,)),)),
        BlockWait((1, 0, 0), 3, 5, 0, (BarrierWait(0, 0, 3, 0, ()),)),
        BlockWait((2, 0, 0), 1, 1, 0, (BarrierWait(1, 96, 64 / 3, 0, ()),)),  # weighted partial warps
    ]
    assert deadlock_message(blocks) == (
        "deadlock: threads wait at a barrier that the rest of their block can never reach\n"
        "  block (0, 0, 0): 64 of 64 non-exited threads wait at barriers, 64 exited\n"
        "    barrier 2 expects 128 threads, has 96 (64 waiting, 32 by `bar.arrive`)\n"
        "      waiting: threads [(32, 0, 0), (33, 0, 0), (34, 0, 0)] ... at line 12: `bar.sync 2, 128;`\n"
        "  block (1, 0, 0): 3 of 5 non-exited threads wait at barriers, 0 exited\n"
        "    barrier 0 expects all 5 non-exited threads, has 3\n"
        "  block (2, 0, 0): 1 of 1 non-exited threads wait at barriers, 0 exited\n"
        "    barrier 1 expects 96 threads, has 21.3333 (21.3333 waiting, 0 by `bar.arrive`)")


def test_deadlock_message_is_cut_at_forty_lines() -> None:
    blocks = [BlockWait((i, 0, 0), 1, 2, 0, (BarrierWait(0, 0, 1, 0, ()),)) for i in range(30)]
    assert deadlock_message(blocks).count("\n") == 40


def _module(body: str, params: str = ".param .u64 pin") -> ptxvm.Module:
    return ptxvm.Module(HEAD + f".visible .entry k({params})\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<8>;\n"
                        ".reg .b64 %rd<8>;\n" + body.strip() + "\n}\n", "reports.ptx")


def test_deadlock_report_is_the_same_on_every_executor(executor: str) -> None:
    """Warp 0 arrives at barrier 2 with count 128, warps 1..2 wait there, warp 3 exits: 96 < 128."""
    m = _module("""
mov.u32 %r1, %tid.x;
setp.ge.u32 %p2, %r1, 96;
@%p2 bra DONE;
setp.lt.u32 %p1, %r1, 32;
@%p1 bra PRODUCER;
bar.sync 2, 128;
DONE:
ret;
PRODUCER:
bar.arrive 2, 128;
ret;
""")
    with pytest.raises(ptxvm.DeadlockError) as e:
        m["k"](1, 128, (np.zeros(1, np.uint32),), device=executor)
    assert e.value.message == (
        "deadlock: threads wait at a barrier that the rest of their block can never reach\n"
        "  block (0, 0, 0): 64 of 64 non-exited threads wait at barriers, 64 exited\n"
        "    barrier 2 expects 128 threads, has 96 (64 waiting, 32 by `bar.arrive`)\n"
        "      waiting: threads [(32, 0, 0), (33, 0, 0), (34, 0, 0)] ... at line 14: `bar.sync 2, 128;`\n"
        "  in kernel `k`, block (0, 0, 0), thread (32, 0, 0)")


def test_window_fault_report_is_the_same_on_every_executor(executor: str) -> None:
    m = _module("""
.shared .align 4 .b8 buf[256];
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 2;
mov.u32 %r3, buf;
add.u32 %r3, %r3, %r2;
ld.shared.u32 %r4, [%r3+252];
ret;
""")
    with pytest.raises(ptxvm.KernelFault) as e:
        m["k"](1, 4, (np.zeros(1, np.uint32),), device=executor)
    assert e.value.message == (
        "out-of-bounds shared access of 4 bytes at offset 0x100; the shared window holds 256 bytes\n"
        "  in kernel `k`, block (0, 0, 0), thread (1, 0, 0)\n"
        "  at `ld.shared.u32 %r4, [%r3+252];`\n"
        "  address 0x100 in the .shared state space")
    assert (e.value.line, e.value.space, e.value.address) == (14, "shared", 0x100)


def test_misaligned_fault_report_is_the_same_on_every_executor(executor: str) -> None:
    m = _module("""
ld.param.u64 %rd1, [pin];
cvta.to.global.u64 %rd1, %rd1;
ld.global.u32 %r1, [%rd1+2];
ret;
""")
    buf = ptxvm.to_device(np.zeros(4, np.uint32))
    with pytest.raises(ptxvm.KernelFault) as e:
        m["k"](1, 1, (buf,), device=executor)
    a = buf.ptr + 2
    assert e.value.message == (
        f"misaligned global access: 4-byte access at 0x{a:x} is not 4-byte aligned\n"
        "  in kernel `k`, block (0, 0, 0), thread (0, 0, 0)\n"
        "  at `ld.global.u32 %r1, [%rd1+2];`\n"
        f"  address 0x{a:x} in the .global state space")
