"""The host JIT (device="cpu") against the interpreter, and its fault reports.

The default run keeps a lean, representative set: fixture kernels with barriers, warp
shuffles, atomics, divergence and calls compared bit for bit with the interpreter, and
every kind of fault.  The slow run replays the interpreter's whole execution-case suite
on the JIT (``PTXVM_DEVICE=cpu``), which is the issue's acceptance criterion.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.testing import assert_executors_agree
from models.fixtures import FIXTURES

RNG = np.random.default_rng(7)
SM80 = FIXTURES / "nvcc" / "sm80"
HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _mangled(path: Path, name: str) -> str:
    mod = ptxvm.Module.from_file(path)
    hits = [k for k in mod.kernels if k.startswith(f"_Z{len(name)}{name}")]
    assert len(hits) == 1, hits
    return hits[0]


CASES = [
    # (file, kernel, grid, block, args factory, shared)
    ("elementwise", "vector_add", 4, 256,
     lambda: (RNG.random(1000, dtype=np.float32), RNG.random(1000, dtype=np.float32), np.zeros(1000, np.float32),
              np.int32(1000)), 0),
    ("reductions", "block_sum_dynamic", 4, 128,
     lambda: (RNG.random(1000, dtype=np.float32), np.zeros(4, np.float32), np.int32(1000)), 512),
    ("reductions", "block_inclusive_scan", 3, 128,
     lambda: (RNG.integers(-50, 50, 300, dtype=np.int32), np.zeros(300, np.int32), np.int32(300)), 0),
    ("atomics", "histogram_shared", 4, 128,
     lambda: (RNG.integers(0, 1 << 20, 2000, dtype=np.uint32), np.zeros(64, np.uint32), np.int32(2000)), 0),
    ("bench_kernels", "matmul_tiled", (2, 2), (16, 16),
     lambda: (RNG.random(32 * 32, dtype=np.float32), RNG.random(32 * 32, dtype=np.float32),
              np.zeros(32 * 32, np.float32), np.int32(32)), 0),
    ("bench_kernels", "mandelbrot", (2, 2), (16, 16),
     lambda: (np.zeros(32 * 32, np.int32), np.int32(32), np.int32(32), np.int32(64)), 0),
]


@pytest.mark.parametrize("stem,name,grid,block,args,shared", CASES, ids=[f"{c[0]}.{c[1]}" for c in CASES])
def test_cpu_agrees_with_interpreter_bit_for_bit(stem, name, grid, block, args, shared):
    path = SM80 / f"{stem}.ptx"
    assert_executors_agree(path.read_text(), _mangled(path, name), grid, block, args(),
                           executors=("interp", "cpu"), shared_mem=shared)


def test_warp_shuffle_and_vote_fixture_kernels_agree():
    path = SM80 / "warp_shuffle.ptx"
    mod = ptxvm.Module.from_file(path)
    name = next(k for k in mod.kernels if "warp_reduce" in k or "shfl" in k.lower())
    params = mod.kernels[name]
    n = 256
    args = [RNG.random(n, dtype=np.float32) if p.type == "u64" and i == 0 else
            np.zeros(n, np.float32) if p.type == "u64" else np.int32(n) for i, p in enumerate(params)]
    assert_executors_agree(path.read_text(), name, 2, 128, args, executors=("interp", "cpu"))


def _kernel(body: str, params: str = ".param .u64 p0") -> ptxvm.Kernel:
    text = (HEAD + f".visible .entry k({params})\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<16>;\n"
            ".reg .b64 %rd<16>;\n" + body + "\n}\n")
    return ptxvm.Module(text, "jit_fault.ptx")["k"]


def test_store_far_outside_the_arena_is_a_fault_and_the_process_lives():
    k = _kernel("ld.param.u64 %rd1, [p0];\nadd.s64 %rd2, %rd1, 1099511627776;\nmov.u32 %r1, 7;\n"
                "st.global.u32 [%rd2], %r1;\nret;")
    a = np.zeros(4, np.int32)
    with pytest.raises(ptxvm.KernelFault) as e:
        k(1, 32, (a,), device="cpu")
    err = e.value
    assert err.kernel == "k" and err.block == (0, 0, 0) and err.thread == (0, 0, 0)
    assert err.line == 12 and err.space == "global" and "out-of-bounds global access of 4 bytes" in str(err)
    assert np.array_equal(a, np.zeros(4, np.int32))
    # the process is alive and the JIT keeps working
    ok = _kernel("ld.param.u64 %rd1, [p0];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\n"
                 "add.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r1;\nret;")
    b = np.zeros(32, np.int32)
    ok(1, 32, (b,), device="cpu")
    assert np.array_equal(b, np.arange(32))


def test_null_pointer_misaligned_and_shared_faults():
    k = _kernel("mov.u64 %rd1, 0;\nld.global.u32 %r1, [%rd1];\nret;")
    with pytest.raises(ptxvm.KernelFault, match="out-of-bounds global access"):
        k(1, 1, (np.zeros(1, np.int32),), device="cpu")
    k = _kernel("ld.param.u64 %rd1, [p0];\nld.global.u32 %r1, [%rd1+2];\nret;")
    with pytest.raises(ptxvm.KernelFault, match="misaligned global access: 4-byte access"):
        k(1, 1, (np.zeros(4, np.int32),), device="cpu")
    k = _kernel(".shared .align 4 .b8 buf[64];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\n"
                "st.shared.u32 [%r2], %r1;\nret;")
    with pytest.raises(ptxvm.KernelFault) as e:
        k(1, 32, (np.zeros(1, np.int32),), device="cpu")
    assert e.value.thread == (16, 0, 0) and "the shared window holds 64 bytes" in str(e.value)


def test_watchdog_trap_and_deadlock():
    with pytest.raises(ptxvm.WatchdogError, match="budget"):
        _kernel("L1:\nbra L1;")(1, 32, (np.zeros(1, np.int32),), device="cpu", max_steps=100_000)
    with pytest.raises(ptxvm.TrapError, match="trap"):
        _kernel("trap;")(1, 1, (np.zeros(1, np.int32),), device="cpu")
    # warp 0 waits at barrier 1, warp 1 at barrier 0: each barrier wants all 64 threads
    k = _kernel("mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra W1;\nbar.sync 0;\nret;\nW1:\n"
                "bar.sync 1;\nret;")
    with pytest.raises(ptxvm.DeadlockError, match="deadlock") as e:
        k(1, 64, (np.zeros(1, np.int32),), device="cpu")
    assert "barrier 0 expects all 64 non-exited threads, has 32" in str(e.value)
    assert "barrier 1 expects all 64 non-exited threads, has 32" in str(e.value)


def test_printf_prints_in_thread_order(capfd):
    path = SM80 / "printf_assert.ptx"
    mod = ptxvm.Module.from_file(path)
    name = next(k for k in mod.kernels if "printf" in k.lower() or "hello" in k.lower())
    args = [np.zeros(64, np.int32) if p.type == "u64" else np.int32(4) for p in mod.kernels[name]]
    mod[name](1, 4, args, device="interp")
    want = capfd.readouterr().out
    mod2 = ptxvm.Module.from_file(path)
    mod2[name](1, 4, [a.copy() if isinstance(a, np.ndarray) else a for a in args], device="cpu")
    assert capfd.readouterr().out == want and want


# Documented differences: after a fault the JIT's memory shows the threads that ran to completion
# before the faulting one (it runs threads one after another, the interpreter one instruction for all);
# its stack-overflow report names its own (smaller) local-memory limit.
KNOWN_DIFFERENT = [
    "test_interp_faults.py::test_out_of_bounds_global_store_names_thread_and_allocation",
    "test_interp_locals.py::test_endless_recursion_overflows_the_stack_with_a_fault",
]


@pytest.mark.slow
def test_interpreter_execution_suite_runs_on_the_jit():
    """Acceptance: every execution case of the interpreter's suite, on device='cpu'."""
    env = dict(os.environ, PTXVM_DEVICE="cpu")
    tests = Path(__file__).parents[1]
    files = ["test_interp_kernels.py", "test_interp_cases.py", "test_interp_instructions.py", "test_interp_half.py",
             "test_interp_barriers.py", "test_interp_locals.py", "test_interp_faults.py", "test_interp_heap.py",
             "test_interp_async_copy.py"]
    deselect = [a for k in KNOWN_DIFFERENT for a in ("--deselect", f"tests/interp/{k}")]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", "addopts=-m 'not slow'", *deselect,
                        *[f"tests/interp/{f}" for f in files]],
                       env=env, capture_output=True, text=True, timeout=3600, cwd=tests.parent)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_cli_run_on_the_jit(tmp_path):
    from ptxvm.cli import main
    path = SM80 / "elementwise.ptx"
    out = tmp_path / "out.npz"
    argv = ["run", str(path), "--kernel", "vector_add", "--grid", "1", "--block", "64", "--device", "cpu",
            "--arg", "f32[64]=arange", "--arg", "f32[64]=arange", "--arg", "f32[64]=zeros", "--arg", "64",
            "-o", str(out)]
    assert main(argv) == 0
    assert np.array_equal(np.load(out)["arg2"], 2 * np.arange(64, dtype=np.float32))


def test_atomic_float_add_follows_the_nan_policy(executor):
    """Found by the fuzzer: a NaN from atom.add.f32 is the canonical f32 NaN (PTX: "unspecified";
    ptxvm: 0x7fffffff like every f32 result), whichever operand was NaN (LLVM may commute a fadd)."""
    k = _kernel("ld.param.u64 %rd1, [p0];\nmov.b32 %r1, 0x7fc1fc00;\nmov.u32 %r2, %tid.x;\n"
                "mul.wide.u32 %rd2, %r2, 4;\nadd.s64 %rd3, %rd1, %rd2;\n"
                "atom.global.add.f32 %r3, [%rd3], %r1;\nret;")
    mem = np.array([0xFFFFFFF8, 0x3F800000], dtype=np.uint32)
    k(1, 2, (mem,), device=executor)
    assert [hex(int(x)) for x in mem] == ["0x7fffffff", "0x7fffffff"]


FUZZ_FOUND = HEAD + """.visible .entry k(.param .u64 p0)
{
.reg .pred %p<4>;
.reg .b32 %r<8>;
.reg .b64 %rd<4>;
ld.param.u64 %rd1, [p0];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
setp.lt.u32 %p1, %r1, 16;
and.b32 %r2, %r1, 1;
@%p1 bra L;
nanosleep.u32 20;
L:
match.any.sync.b32 %r3, %r2, 0xffffffff;
setp.eq.u32 %p0, %r1, 3;
setp.lt.xor.s32 %p0|%p3, %r1, 5, !%p0;
selp.u32 %r4, 1, 0, %p0;
selp.u32 %r5, 2, 0, %p3;
add.u32 %r4, %r4, %r5;
shl.b32 %r4, %r4, 28;
or.b32 %r3, %r3, %r4;
st.global.u32 [%rd3], %r3;
ret;
}
"""


def test_fuzzer_findings(executor):
    """Two JIT disagreements the fuzzer found: a warp instruction after a divergent `nanosleep`
    takes the whole warp (the yielded lanes are not left out), and `setp.op.bool p|q, .., c`
    reads `c` before writing `p` when `c` is `p`."""
    out = np.zeros(32, np.uint32)
    ptxvm.Module(FUZZ_FOUND)["k"](1, 32, (out,), device=executor)
    want = []
    for t in range(32):
        match = 0x55555555 if t % 2 == 0 else 0xAAAAAAAA          # lanes with equal (t & 1)
        c = not (t == 3)
        p, q = (t < 5) != c, (t >= 5) != c
        want.append(match | (int(p) | 2 * int(q)) << 28)
    assert out.tolist() == want


def test_const_space_reaches_only_const_memory(executor):
    """`ld.const` through a global buffer's address is an out-of-bounds const access on both executors."""
    text = HEAD + """.const .align 4 .b32 tab[4] = {7, 8, 9, 10};
.visible .entry k(.param .u64 p)
{
.reg .b32 %r<4>;
.reg .b64 %rd<2>;
ld.param.u64 %rd1, [p];
ld.const.u32 %r1, [tab+4];
st.global.u32 [%rd1], %r1;
ld.const.u32 %r2, [%rd1];
ret;
}
"""
    x = np.zeros(4, np.uint32)
    with pytest.raises(ptxvm.KernelFault, match="out-of-bounds const access of 4 bytes") as e:
        ptxvm.Module(text)["k"](1, 1, (x,), device=executor)
    assert e.value.line == 12 and x[0] == 8


GROUPED = (".shared .align 4 .b8 buf[64];\nmov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\n"
           "st.shared.u32 [%r2], %r1;\nbar.sync 0;\nld.shared.u32 %r3, [%r2];\nadd.u32 %r4, %r3, 1;\n"
           "ld.shared.u32 %r5, [%r2+{a}];\nld.shared.u32 %r6, [%r2+{b}];\nadd.u32 %r7, %r5, %r6;\n"
           "add.u32 %r7, %r7, %r4;\nld.param.u64 %rd1, [p0];\nmul.wide.u32 %rd2, %r1, 4;\n"
           "add.s64 %rd3, %rd1, %rd2;\nst.global.u32 [%rd3], %r7;\nret;")


@pytest.mark.parametrize("a,b", [(8, 36), (2, 60), (8, 60), (8, 32)])
def test_grouped_shared_loads_fault_where_the_interpreter_does(a, b):
    """`ld.shared` through one register with constant offsets are checked as a group on the JIT
    (one range compare); a bad load of the group still faults at its own instruction, with the
    first failing check in program order (misaligned [r2+2] before out-of-bounds [r2+60]), and
    the thread the interpreter names."""
    k = _kernel(GROUPED.format(a=a, b=b))
    got = {}
    for device in ("interp", "cpu"):
        out = np.zeros(8, np.uint32)
        try:
            k(1, 8, (out,), device=device)
            got[device] = out.tolist()
        except ptxvm.KernelFault as e:
            got[device] = (str(e), e.thread, e.line)
    assert got["interp"] == got["cpu"]
    if b == 32:                     # all in bounds: buf[i] = i for the 8 threads' words, else 0
        buf = lambda i: i if i < 8 else 0  # noqa: E731
        assert got["cpu"] == [t + 1 + buf(t + a // 4) + buf(t + b // 4) for t in range(8)]
    else:
        assert isinstance(got["cpu"], tuple)


NAN_CHAIN = HEAD + """.visible .entry k(.param .u64 pin, .param .u64 pout)
{
.reg .pred %p<4>;
.reg .b32 %r<4>;
.reg .f32 %f<16>;
.reg .b64 %rd<8>;
ld.param.u64 %rd1, [pin];
ld.param.u64 %rd2, [pout];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd3, %r1, 12;
add.s64 %rd4, %rd1, %rd3;
ld.global.f32 %f1, [%rd4];
ld.global.f32 %f2, [%rd4+4];
ld.global.f32 %f3, [%rd4+8];
fma.rn.f32 %f4, %f1, %f2, %f3;
mul.rn.f32 %f5, %f4, %f2;
add.f32 %f6, %f5, %f1;
sub.rz.f32 %f7, %f6, %f3;
mad.rn.f32 %f8, %f7, %f1, %f4;
setp.nan.f32 %p1, %f8, %f6;
setp.lt.f32 %p2, %f7, %f5;
selp.b32 %r2, 1, 0, %p1;
selp.b32 %r3, 2, 0, %p2;
or.b32 %r2, %r2, %r3;
neg.f32 %f9, %f5;
abs.f32 %f10, %f7;
mul.wide.u32 %rd5, %r1, 16;
add.s64 %rd6, %rd2, %rd5;
st.global.f32 [%rd6], %f8;
st.global.f32 [%rd6+4], %f9;
st.global.f32 [%rd6+8], %f10;
st.global.u32 [%rd6+12], %r2;
ret;
}
"""


def test_nan_results_are_canonical_where_observed():
    """Registers only f32 arithmetic reads keep raw NaNs on the JIT (no canonicalisation on the
    dependency chain); what is stored, negated or compared is bit for bit the interpreter's."""
    specials = np.array([0x7FA00001, 0xFFC00005, 0x7F800001, 0x7F800000, 0xFF800000, 0, 0x80000000,
                         0x3F800000, 0xBF800000, 0x00000001], np.uint32).view(np.float32)
    rng = np.random.default_rng(11)
    x = rng.choice(specials, size=(128, 3))
    x[::7] = rng.random((x[::7].shape), dtype=np.float32)
    m = ptxvm.Module(NAN_CHAIN)
    out = {}
    for device in ("interp", "cpu"):
        o = np.zeros(128 * 4, np.uint32)
        m["k"](1, 128, (x.reshape(-1), o), device=device)
        out[device] = o
    assert np.array_equal(out["interp"], out["cpu"])
    f8 = out["cpu"].reshape(128, 4)[:, 0]
    assert (f8 == 0x7FFFFFFF).sum() > 20            # NaN results stored canonical


def test_a_launch_starts_from_zeroed_memory_after_another_dirtied_it():
    """Batch buffers are reused between launches (ptxvm/jit/scratch.py): shared memory, local
    memory and registers a kernel reads before writing must read as zero, as on the
    interpreter, even right after a launch of the same shape left other values there."""
    text = HEAD + """.visible .entry dirty(.param .u64 p)
{
.reg .b32 %r<5>;
.local .align 4 .b8 frame[8];
.shared .align 4 .b8 buf[256];
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 2;
add.u32 %r3, %r1, 77;
mov.u32 %r4, buf;
add.u32 %r2, %r2, %r4;
st.shared.u32 [%r2], %r3;
st.local.u32 [frame+4], %r3;
ret;
}
.visible .entry clean(.param .u64 p)
{
.reg .b32 %r<7>;
.reg .b64 %rd<4>;
.local .align 4 .b8 frame[8];
.shared .align 4 .b8 buf[256];
mov.u32 %r1, %tid.x;
shl.b32 %r2, %r1, 2;
mov.u32 %r6, buf;
add.u32 %r2, %r2, %r6;
ld.shared.u32 %r3, [%r2];
ld.local.u32 %r4, [frame+4];
add.u32 %r5, %r3, %r4;
ld.param.u64 %rd1, [p];
mul.wide.u32 %rd2, %r1, 4;
add.s64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r5;
ret;
}
"""
    m = ptxvm.Module(text)
    for device in ("cpu", "interp"):
        out = np.full(64, 5, np.uint32)
        for _ in range(2):
            m["dirty"](4, 64, (out,), device=device)
            m["clean"](4, 64, (out,), device=device)
            assert (out == 0).all(), (device, out)
