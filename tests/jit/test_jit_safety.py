"""The host JIT (device="cpu") stays inside its arena and its limits: Ctrl-C stops a long kernel,
the watchdog says where and how to raise it, the stack budget is ptxvm.limits', and launch
statistics count what the PTX executes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm import limits

pytest.importorskip("llvmlite")

ROOT = Path(__file__).resolve().parents[2]
HEAD = ".version 8.0\n.target sm_80\n.address_size 64\n"
ENDLESS = HEAD + (".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\nmov.u32 %r1, 0;\n"
                  "L:\nadd.u32 %r1, %r1, 1;\nbra L;\nret;\n}\n")


def test_ctrl_c_stops_a_long_kernel_on_the_jit():
    # The child compiles the kernel (a short launch the watchdog ends), says so, then runs it
    # with a budget it would need hours for; SIGINT must end it within seconds.
    code = (f"import ptxvm, sys\nk = ptxvm.Module({ENDLESS!r}, 'endless.ptx')['k']\n"
            "try:\n    k(1, 1, (0,), device='cpu', max_steps=1000)\nexcept ptxvm.WatchdogError:\n    pass\n"
            "print('running', flush=True)\nk(64, 256, (0,), device='cpu', max_steps=1 << 62)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert p.stdout.readline().strip() == "running"
        time.sleep(1.0)
        assert p.poll() is None, "the kernel ended by itself"
        p.send_signal(signal.SIGINT)
        t0 = time.monotonic()
        _out, err = p.communicate(timeout=20)
        took = time.monotonic() - t0
    finally:
        p.kill()
    assert "KeyboardInterrupt" in err, err
    assert took < 5, f"still running {took:.1f} s after SIGINT"


def test_the_watchdog_names_the_instruction_and_how_to_raise_it():
    k = ptxvm.Module(ENDLESS, "endless.ptx")["k"]
    with pytest.raises(ptxvm.WatchdogError) as e:
        k(1, 32, (0,), device="cpu", max_steps=100_000)
    msg = str(e.value)
    assert msg.startswith("endless.ptx:9:"), msg           # the loop's first instruction, line 9
    assert "`add.u32 %r1, %r1, 1;`" in msg and "budget of 100,000 steps" in msg
    assert "--max-steps N" in msg and "max_steps=N" in msg


def test_thread_instruction_count_is_the_hand_count():
    # vector_add of elementwise.ptx, grid 4 x 256, n = 1000: 10 instructions up to the `@%p1 bra`,
    # 11 more for the 1000 threads in range, then `ret`: 1000 * 22 + 24 * 11 = 22,264.
    m = ptxvm.Module.from_file(str(ROOT / "tests/fixtures/nvcc/sm80/elementwise.ptx"))
    k = m["_Z10vector_addPKfS0_Pfi"]
    a, b, c = np.ones(1000, np.float32), np.ones(1000, np.float32), np.zeros(1000, np.float32)
    stats = k(4, 256, (a, b, c, 1000), device="cpu")
    assert stats.instructions == 1000 * 22 + 24 * 11
    assert np.all(c == 2)


def _recursion(depth: int, size: int = 4) -> ptxvm.Kernel:
    text = HEAD + (
        f".func (.param .b32 r) f(.param .b32 d, .param .b8 n[{size}])\n{{\n.reg .pred %p1;\n.reg .b32 %r<4>;\n"
        "ld.param.b32 %r1, [d];\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra DONE;\nsub.u32 %r2, %r1, 1;\n"
        f"{{\n.param .b32 rr;\n.param .b32 dd;\n.param .b8 nn[{size}];\nst.param.b32 [dd], %r2;\n"
        "call (rr), f, (dd, nn);\nld.param.b32 %r3, [rr];\n}\nDONE:\nst.param.b32 [r], %r1;\nret;\n}\n"
        ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r<4>;\n"
        f"mov.u32 %r1, {depth};\n{{\n.param .b32 rr;\n.param .b32 dd;\n.param .b8 nn[{size}];\n"
        "st.param.b32 [dd], %r1;\ncall (rr), f, (dd, nn);\nld.param.b32 %r3, [rr];\n}\nret;\n}\n")
    return ptxvm.Module(text, "recursion.ptx")["k"]


def test_call_depth_is_the_configured_limit():
    try:
        limits.configure(call_depth=50)
        _recursion(48)(1, 1, (0,), device="cpu")            # 49 nested calls: within the limit
        with pytest.raises(ptxvm.KernelFault) as e:
            _recursion(50)(1, 1, (0,), device="cpu")        # 51 nested calls
    finally:
        limits.reset()
    msg = str(e.value)
    assert "call depth 51 is more than ptxvm's limit of 50 nested calls (call_depth" in msg
    assert e.value.line == 17 and "call (rr), f, (dd, nn);" in msg      # the call that went too deep


def test_stack_budget_is_the_configured_limit_and_counts_by_value_params():
    try:
        limits.configure(stack_per_thread=256 << 10)
        _recursion(2, 65536)(1, 1, (0,), device="cpu")      # 3 frames of 64 KiB fit in 256 KiB
        with pytest.raises(ptxvm.KernelFault) as e:
            _recursion(4, 65536)(8, 4, (0,), device="cpu")  # 5 do not, in any of 8 blocks
    finally:
        limits.reset()
    assert "more than ptxvm's limit of 262,144 bytes (256 KiB) (stack_per_thread" in str(e.value)
    assert e.value.thread == (0, 0, 0) and e.value.block == (0, 0, 0)


@pytest.mark.slow
def test_hostile_offsets_and_sizes_fuzzed_on_both_executors():
    """Offsets around and far past each window's ends, and by-value param sizes and depths,
    drawn at random: both executors in child processes, the same outcome and place."""
    import random

    from models import hostile as th
    rng = random.Random(12)
    cases = {}
    for i in range(60):
        off = rng.choice([-(1 << rng.randrange(2, 30)), rng.randrange(-64, 128), 1 << rng.randrange(4, 29)]) // 4 * 4
        n = rng.choice([4, 16, 64, 256])
        kind = rng.choice(["shared", "local", "param", "generic_shared"])
        if kind == "shared":
            text = th.entry(f"mov.u32 %r3, s;\nld.shared.u32 %r1, [%r3+{off}];", decls=f".shared .align 4 .b8 s[{n}];\n")
        elif kind == "local":
            text = th.entry(f"mov.u64 %rd2, buf;\nld.local.u32 %r1, [%rd2+{off}];",
                             decls=f".local .align 4 .b8 buf[{n}];\n")
        elif kind == "param":
            text = th.entry(f"ld.param.u32 %r1, [pout+{off}];")
        else:
            text = th.entry(f"mov.u64 %rd2, s;\ncvta.shared.u64 %rd3, %rd2;\nld.u32 %r1, [%rd3+{off}];",
                             decls=f".shared .align 4 .b8 s[{n}];\n")
        cases[f"fuzz_{i}_{kind}"] = (text, 1, rng.choice([1, 32]), ("out",), 0)
    for depth in (100, 300, 1000, 3000):
        cases[f"fuzz_recursion_{depth}"] = (th.recursion(rng.choice([1024, 8192, 65536]), depth), 2, 2, ("out",), 0)
    interp = th.run_cases("interp", cases)
    cpu = th.run_cases("cpu", cases)
    wrong = {k: (interp[k], cpu[k]) for k in cases if th.where(interp[k]) != th.where(cpu[k])}
    assert not wrong, wrong
