"""Faulting kernels: each must raise a precise ptxvm error, never crash or hang."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm

HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _kernel(body: str, params: str = ".param .u64 p0, .param .u32 p1", regs: str = "") -> ptxvm.Kernel:
    text = (HEAD + f".visible .entry k({params})\n{{\n"
            ".reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n.reg .f32 %f<8>;\n" + regs
            + body + "\n}\n")
    return ptxvm.Module(text, "fault.ptx")["k"]


INDEX = ("ld.param.u64 %rd1, [p0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n"
         "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\n")


def test_out_of_bounds_global_store_names_thread_and_allocation():
    # Threads 0..9 store in bounds first; then every thread stores at a[tid + 6]: 10..15 fault.
    k = _kernel(INDEX + "setp.lt.u32 %p1, %r1, 10;\n@%p1 st.global.u32 [%rd4], %r1;\n"
                "st.global.u32 [%rd4+24], %r1;\nret;")
    a = np.zeros(10, np.int32)
    with pytest.raises(ptxvm.KernelFault) as e:
        k(1, 16, (a, 0))
    err = e.value
    assert err.thread == (4, 0, 0) and err.block == (0, 0, 0) and err.kernel == "k"
    assert err.line == 17 and err.space == "global"
    assert "out-of-bounds global access of 4 bytes" in str(err) and "just past the end of" in str(err)
    # The fault-write rule (ptxvm/interp/access.py): what ran before stays visible, and the
    # threads in range (0..3, at a[6..9]) complete the faulting store; threads 4..15 write nothing.
    assert np.array_equal(a, [0, 1, 2, 3, 4, 5, 0, 1, 2, 3])


def test_far_out_of_bounds_and_null_pointer():
    k = _kernel("ld.param.u64 %rd1, [p0];\nld.global.u32 %r2, [%rd1+4096000];\nret;")
    with pytest.raises(ptxvm.KernelFault, match="out-of-bounds global access"):
        k(1, 1, (np.zeros(4, np.int32), 0))
    with pytest.raises(ptxvm.KernelFault, match=r"at 0x0 "):
        k = _kernel("mov.u64 %rd1, 0;\nld.global.u32 %r2, [%rd1];\nret;")
        k(1, 1, (0, 0))


def test_misaligned_access():
    k = _kernel("ld.param.u64 %rd1, [p0];\nld.global.u32 %r2, [%rd1+2];\nret;")
    with pytest.raises(ptxvm.KernelFault, match="misaligned global access: 4-byte access at 0x[0-9a-f]+ is not 4-byte aligned"):
        k(1, 1, (np.zeros(4, np.int32), 0))


def test_shared_out_of_bounds():
    k = _kernel("mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\nst.shared.u32 [s+%r2], %r1;\nret;",
                regs=".shared .align 4 .b8 s[64];\n") if False else _kernel(
        "mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\nmov.u32 %r3, s;\nadd.s32 %r4, %r3, %r2;\n"
        "st.shared.u32 [%r4], %r1;\nret;", regs=".shared .align 4 .b8 s[64];\n")
    with pytest.raises(ptxvm.KernelFault) as e:
        k(1, 32, (0, 0))
    assert e.value.thread == (16, 0, 0) and e.value.space == "shared"
    assert "the shared window holds 64 bytes" in str(e.value)


def test_divergent_barrier_deadlock_is_reported():
    body = ("mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 16;\n@%p1 bra L_skip;\nbar.sync 0;\n"
            "L_skip:\nbar.sync 1;\nret;")
    with pytest.raises(ptxvm.DeadlockError) as e:
        _kernel(body)(1, 64, (0, 0))
    msg = str(e.value)
    assert "deadlock" in msg and "block (0, 0, 0)" in msg and "bar.sync" in msg


def test_endless_loop_hits_the_watchdog():
    with pytest.raises(ptxvm.WatchdogError, match="exceeded its budget of 1,000 steps"):
        _kernel("L:\nbra L;\nret;")(1, 32, (0, 0), max_steps=1000)


def test_trap():
    with pytest.raises(ptxvm.TrapError, match="`trap` executed") as e:
        _kernel("mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 5;\n@%p1 trap;\nret;")(1, 32, (0, 0))
    assert e.value.thread == (5, 0, 0)


def test_launch_errors_name_the_parameter():
    k = _kernel("ret;")
    with pytest.raises(ptxvm.LaunchError, match=r"takes 2 arguments \(p0: \.u64, p1: \.u32\), got 1"):
        k(1, 1, (0,))
    with pytest.raises(ptxvm.LaunchError, match=r"argument `p1` = -1 does not fit \.u32"):
        k(1, 1, (0, -1))
    with pytest.raises(ptxvm.LaunchError, match="argument `p1` is .u32 \\(an integer\\); got float"):
        k(1, 1, (0, 1.5))
    with pytest.raises(ptxvm.LaunchError, match="block .* has 2048 threads; the limit is 1024"):
        k(1, 2048, (0, 0))
    with pytest.raises(ptxvm.LaunchError, match="grid must have 1 to 3 positive dimensions"):
        k((0,), 1, (0, 0))


def test_set_writes_all_ones_or_one_point_zero():
    # set.CmpOp.dtype.stype (PTX ISA §9.7.7.3): 0xffffffff / 0 for integer results, 1.0 / 0.0 for f32.
    body = ("ld.param.u64 %rd1, [p0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n"
            "cvt.rn.f32.u32 %f1, %r1;\nset.lt.u32.f32 %r2, %f1, 0f40000000;\n"      # tid < 2.0
            "set.ge.and.f32.s32 %f2, %r1, 1, %p0;\n"                                  # tid >= 1 and p0
            "mul.wide.u32 %rd3, %r1, 8;\nadd.s64 %rd4, %rd2, %rd3;\n"
            "st.global.u32 [%rd4], %r2;\nst.global.f32 [%rd4+4], %f2;\nret;")
    k = _kernel("setp.ne.u32 %p0, %tid.x, 3;\n" + body)
    out = np.zeros((4, 2), np.uint32)
    k(1, 4, (out, 0))
    assert [hex(v) for v in out[:, 0]] == ["0xffffffff", "0xffffffff", "0x0", "0x0"]
    assert list(out[:, 1].view(np.float32)) == [0.0, 1.0, 1.0, 0.0]


GLOBAL_INIT = """.version 8.0
.target sm_80
.address_size 64
.global .align 4 .u32 g = {v};
.visible .entry k(.param .u64 out)
{{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.global.u32 %r1, [g];
  st.global.u32 [%rd1], %r1;
  ret;
}}
"""


def test_each_module_reads_its_own_globals_after_others_died(executor):
    """The device kept module images by id(module): a new Module that reused a dead one's id
    read the dead module's `.global g` (14 of 30 here). Each module must see its initialiser."""
    import gc
    seen = []
    for v in range(12):
        m = ptxvm.Module(GLOBAL_INIT.format(v=v), f"g{v}.ptx")
        out = np.zeros(1, np.uint32)
        m["k"](1, 1, (out,), device=executor)
        seen.append(int(out[0]))
        del m
        gc.collect()
    assert seen == list(range(12))
