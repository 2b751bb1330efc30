"""emu:<target>: translated code objects proven by execution on the AMD ISA emulator.

The emulator (../shared/tools/amdgpu-emu, needs clang) is slow Python: the default run has one
small launch (skipped without the tool) and the registration checks; everything else is
``-m slow``:

* every fixture kernel the interpreter tests launch, repeated on emu:gfx90a / gfx942 / gfx1100
  with the interpreter's inputs (tests/emu_shadow.py), bit for bit equal except ``.approx``
  kernels (within bounds) and the documented emulator limits (tests/emu_limits.py), skipped by
  reason; the counts and reasons are printed at the end;
* the fuzzer's kernels on interp vs emu:gfx942 and emu:gfx1100 (200 and 2,000);
* ``ptxvm difftest --executors interp,emu:gfx90a``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from collections import Counter
from importlib.util import find_spec
from pathlib import Path

import emu_limits
import numpy as np
import pytest
from models.fixtures import FIXTURES

import ptxvm
from ptxvm.driver import executors
from ptxvm.driver.executors import emu

ROOT = Path(__file__).resolve().parent.parent
MISSING = emu.why_unavailable() or next(
    (f"{p} is not installed" for p in ("llvmlite", "ziglang") if find_spec(p) is None), None)
needs_emulator = pytest.mark.skipif(MISSING is not None, reason=f"emu executors unavailable: {MISSING}")
ELEMENTWISE = FIXTURES / "nvcc" / "sm80" / "elementwise.ptx"


def _vector_add():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.Module.from_file(ELEMENTWISE).get_function("vector_add")


# ------------------------------------------------------------------ registration (no emulator needed)

def test_every_emulated_target_is_registered_and_opt_in():
    for target in emu.TARGETS:
        e = executors.get(f"emu:{target}")
        assert e.capabilities.opt_in and not e.capabilities.host_cpu
        assert e.name not in executors.defaults()          # difftest without -e does not run it


def test_without_the_tool_the_executors_say_so_in_one_line(monkeypatch):
    monkeypatch.setenv("PTXVM_EMU_TOOL", "/nonexistent/amdgpu-emu")
    for target in emu.TARGETS:
        name = f"emu:{target}"
        why = executors.why_unavailable(executors.get(name))
        assert why == "the AMD ISA emulator tool is not at $PTXVM_EMU_TOOL (/nonexistent/amdgpu-emu)"
        assert name in executors.names() and name not in executors.available()
    with pytest.raises(executors.Unavailable) as e:
        _vector_add()(1, 32, (np.zeros(32, np.float32),) * 3 + (np.int32(32),), device="emu:gfx942")
    assert e.value.message == ("device `emu:gfx942` is unavailable here: the AMD ISA emulator tool is not at "
                               "$PTXVM_EMU_TOOL (/nonexistent/amdgpu-emu)")


def test_without_clang_the_executors_say_so(monkeypatch):
    if emu.tool_dir() is None:
        pytest.skip("the emulator tool is not here")
    monkeypatch.setenv("EMU_CLANG", "no-such-clang-binary")
    assert "clang is not on PATH" in executors.why_unavailable(executors.get("emu:gfx90a"))


# ------------------------------------------------------------------ one small launch (default run)

@needs_emulator
def test_vector_add_on_gfx942_equals_numpy():
    n = 300
    rng = np.random.default_rng(7)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    c = np.full(n + 4, -1, np.float32)
    k = _vector_add()
    stats = k(3, 128, (a, b, c, np.int32(n)), device="emu:gfx942")
    assert np.array_equal(c[:n], a + b)                  # f32 add is exact-rounded on both sides
    assert np.all(c[n:] == -1)                           # the guard beyond n is untouched
    assert k.stats is stats


@needs_emulator
@pytest.mark.slow
def test_faults_and_limits_are_ptxvm_errors():
    k = _vector_add()
    a = np.ones(64, np.float32)
    out = np.zeros(64, np.float32)
    out.flags.writeable = False
    with pytest.raises(ptxvm.LaunchError, match="read-only"):
        k(1, 64, (a, a, out, np.int32(64)), device="emu:gfx1100")
    clock = ptxvm.Module(".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry c(.param .u64 p)\n{\n"
                         ".reg .b64 %rd<3>;\nld.param.u64 %rd1, [p];\nmov.u64 %rd2, %clock64;\n"
                         "st.global.u64 [%rd1], %rd2;\nret;\n}\n")
    with pytest.raises(ptxvm.PtxError) as e:
        clock["c"](1, 1, (np.zeros(1, np.uint64),), device="emu:gfx942")
    assert emu_limits.classify_error(e.value, clock, "c", (1, 1, 1)) == "s_memtime", e.value


CONST_PTX = """
.version 7.0
.target sm_80
.address_size 64
.const .align 4 .b32 scale[1] = {3};
.visible .entry k(.param .u64 p)
{
  .reg .b64 %rd<2>; .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.const.u32 %r1, [scale];
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


@needs_emulator
def test_module_variables_changed_from_the_host_are_refused_not_ignored():
    """cudaMemcpyToSymbol-style writes live in the driver's device; the code object on the emulator
    starts from its initialisers: a launch that would read the stale value is refused."""
    from ptxvm.driver.api import default_device
    m = ptxvm.Module(CONST_PTX)
    out = np.zeros(1, np.uint32)
    m["k"](1, 1, (out,), device="emu:gfx1100")
    assert out[0] == 3                                   # the initialiser
    dev = default_device()
    addr = dev.image(m).addresses["scale"]
    alloc = dev.memory.find(addr)
    alloc.data[addr - alloc.base:addr - alloc.base + 4] = np.frombuffer(np.uint32(7).tobytes(), np.uint8)
    m["k"](1, 1, (out,), device="interp")
    assert out[0] == 7
    with pytest.raises(emu.EmulatorLimit, match=r"reads module variable\(s\) `scale`, changed since") as e:
        m["k"](1, 1, (out,), device="emu:gfx1100")
    assert e.value.reason == "module_state"


# ------------------------------------------------------------------ every fixture kernel (slow)

SHADOWED = ["tests/interp/test_interp_kernels.py", "tests/interp/test_interp_cases.py"]


@needs_emulator
@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx90a", "gfx942", "gfx1100"])
def test_fixture_kernels_agree_with_the_interpreter(target, tmp_path):
    report = tmp_path / "report.json"
    env = {**os.environ, "EMU_SHADOW_TARGETS": target, "EMU_SHADOW_REPORT": str(report),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PTXVM_EMU_TIMEOUT": os.environ.get("PTXVM_EMU_TIMEOUT", "300")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "emu_shadow", "-p", "no:cacheprovider",
                        *SHADOWED], cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600, check=False)
    summary = r.stdout[r.stdout.find("emulator shadow run"):]
    print(summary)
    assert report.exists(), r.stdout[-3000:] + r.stderr[-3000:]
    s = json.loads(report.read_text())
    assert s["counts"][target]["ok"] > 0
    assert not s["failures"], summary


# ------------------------------------------------------------------ the fuzzer's kernels (slow)

def _fuzz(n: int, targets=("gfx942", "gfx1100")):
    """Run ``n`` generated kernels on interp and each emu target. Every outcome is counted (agree,
    a documented limit by reason, a translator refusal); disagreements and unexplained errors are
    collected, printed with the kernel and how to rerun it, and fail the test at the end (the
    shrunk ones found so far are the regression tests below). $EMU_FUZZ_TARGETS (comma-separated)
    runs a subset of the targets (one process each: the draws do not depend on the target);
    $EMU_FUZZ_LOG gets one line per kernel and target as the campaign goes (a long run's progress)."""
    targets = tuple(os.environ.get("EMU_FUZZ_TARGETS", ",".join(targets)).split(","))
    log = os.environ.get("EMU_FUZZ_LOG")
    from hypothesis import HealthCheck, given, settings

    from ptxvm.testing.ptxgen import kernels, run_on

    seen: Counter = Counter()
    failures: list[str] = []

    def rerun(gk) -> str:
        return (f"launch: grid={gk.grid} block={gk.block}; to rerun: kernel_from_ptx(ptx, {gk.grid}, {gk.block}, "
                f"seed={gk.seed}, approx_ops={gk.approx_ops})\n{gk.listing()}")

    def one(gk, t: str, ref, module) -> str:
        # The classification is emu_limits.judge_on_emulator's (shared with tests/emu_classify.py,
        # which sorts a `ptxvm fuzz` campaign's verdicts the same way).
        outcome = emu_limits.judge_on_emulator(gk, t, ref, module)
        if outcome.startswith("FAIL"):
            failures.append(f"interp and emu:{t}: {outcome}\n{rerun(gk)}")
            return outcome.split(":")[0]
        return outcome

    @settings(deadline=None, derandomize=True, database=None, print_blob=False, max_examples=n,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(kernels(max_instructions=24))
    def campaign(gk):
        ref = run_on(gk, "interp")
        module = ptxvm.Module(gk.ptx)
        for t in targets:
            outcome = one(gk, t, ref, module)
            seen[t, outcome] += 1
            if log:
                with open(log, "a") as f:
                    f.write(f"{sum(seen.values())} emu:{t} {outcome}\n")

    campaign()
    print(f"fuzz {n} kernels: " + "; ".join(f"emu:{t} {k} x{c}" for (t, k), c in sorted(seen.items())))
    for f in failures:                       # one line each (the kernels: in the assertion below)
        print("  FAIL", " | ".join(f.splitlines()[:2])[:300])
    if os.environ.get("EMU_FUZZ_FAILURES"):
        Path(os.environ["EMU_FUZZ_FAILURES"]).write_text("\n\n====\n\n".join(failures))
    assert not failures, f"{len(failures)} failures; the first:\n" + "\n\n".join(failures[:3])
    for t in targets:
        assert seen[t, "agree"] > n // 2, seen


@needs_emulator
@pytest.mark.slow
def test_fuzz_200_interp_vs_emu():
    _fuzz(200)


@needs_emulator
@pytest.mark.slow
def test_fuzz_2000_interp_vs_emu():
    _fuzz(2000)


# ------------------------------------------------------------------ the CLI (slow)

@needs_emulator
@pytest.mark.slow
def test_difftest_cli_interp_vs_emu_gfx90a(capsys):
    from ptxvm.cli import main
    rc = main(["difftest", str(ELEMENTWISE), "--kernel", "vector_add", "--grid", "2", "--block", "128",
               "--arg", "f32[250]=random(seed=1)", "--arg", "f32[250]=arange", "--arg", "f32[250]=zeros",
               "--arg", "250", "--executors", "interp,emu:gfx90a", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["ok"] and doc["differ"] == 0
    assert {b["executor"] for c in doc["cases"] for b in c["buffers"]} == {"emu:gfx90a"}


# ------------------------------------------------------------------ regressions from the fuzz campaign
# Shrunk kernels (tests/data/emu_regressions) of the disagreements found; launched as the fuzzer
# does (kernel_from_ptx, seed 0). Strict xfails: each turns into an XPASS failure when fixed.

REGRESSIONS = Path(__file__).resolve().parent / "data" / "emu_regressions"


def _regression(name: str):
    from ptxvm.testing.ptxgen import kernel_from_ptx
    return kernel_from_ptx((REGRESSIONS / name).read_text(), (1, 1, 1), (32, 1, 1), seed=0)


@pytest.mark.parametrize("target", ["gfx90a", "gfx942", "gfx1100"])
def test_regression_red_relaxed_cta_translates(target):
    """`red.relaxed.cta` (any atom/red with a memory-order qualifier) was an internal error: the
    ordering rewrite looked for it among loads and stores, but the native atomic already carries
    its ordering and scope. It is one native RMW at workgroup scope."""
    pytest.importorskip("llvmlite")
    pytest.importorskip("ziglang")
    obj = ptxvm.compile((REGRESSIONS / "red_relaxed_cta_codegen.ptx").read_text(), target=target)
    assert "global_atomic_and" in obj.asm
    rmw = [line for line in obj.llvm_ir.splitlines() if "atomicrmw" in line]
    assert len(rmw) == 1 and 'atomicrmw and i32' in rmw[0] and 'syncscope("workgroup") monotonic' in rmw[0]


@pytest.mark.parametrize("target", ["gfx90a", "gfx942", "gfx1030", "gfx1100"])
def test_regression_red_relaxed_float_add_translates(target):
    """`red.relaxed.gpu.global.add.f64/.f32` was an internal error on every target: a float
    atomic's address has a per-lane zero offset the ordering check did not follow. Each is one
    RMW at agent scope, relaxed (monotonic); gfx1030/gfx1100 have no f64 atomic add (a CAS loop)."""
    pytest.importorskip("llvmlite")
    pytest.importorskip("ziglang")
    obj = ptxvm.compile((REGRESSIONS / "red_relaxed_f32_f64_add_codegen.ptx").read_text(), target=target)
    rmw = sorted(line.split("atomicrmw fadd ")[1].split(" ")[0] for line in obj.llvm_ir.splitlines()
                 if "atomicrmw fadd" in line and 'syncscope("agent") monotonic' in line)
    assert rmw == ["double", "float"] or rmw == ["double*", "float*"], obj.llvm_ir


@needs_emulator
@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
def test_regression_red_relaxed_float_add_agrees_with_numpy_on_the_emulator(target):
    """Small integers in f64/f32: every order of the adds gives the same exact sum. (gfx1100's f64
    add is the 64-bit CAS loop, which never stores on the emulator: limit cas64.)"""
    m = ptxvm.Module((REGRESSIONS / "red_relaxed_f32_f64_add_codegen.ptx").read_text())
    inp = np.arange(1, 65, dtype=np.float64)
    for device in ("interp", f"emu:{target}"):
        out = np.zeros(2, np.float64)
        m["k"](1, 64, (inp, out), device=device)
        assert out[0] == inp.sum() and out[1:].view(np.float32)[0] == np.float32(inp.sum()), device


@needs_emulator
@pytest.mark.slow
def test_regression_red_relaxed_cta_agrees_on_the_emulator():
    from ptxvm.testing.ptxgen import run_on
    from ptxvm.testing.ptxgen.compare import compare_runs
    gk = _regression("red_relaxed_cta_codegen.ptx")
    runs = {"interp": run_on(gk, "interp"), "gfx942": run_on(gk, "emu:gfx942")}
    assert compare_runs(gk, runs) == []


@needs_emulator
@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx90a", "gfx942"])
@pytest.mark.xfail(strict=True, reason="emulator bug: ds_bpermute_b32 under EXEC = lane 0 (redux.sync with "
                                        "membermask 1) writes the other lanes' destination VGPR too")
def test_regression_bpermute_leaves_inactive_lanes(target):
    from ptxvm.testing.ptxgen import run_on
    from ptxvm.testing.ptxgen.compare import compare_runs
    gk = _regression("wave64_bpermute_inactive_lanes.ptx")
    runs = {"interp": run_on(gk, "interp"), target: run_on(gk, f"emu:{target}")}
    assert compare_runs(gk, runs) == []


@needs_emulator
@pytest.mark.slow
@pytest.mark.xfail(strict=True, raises=ptxvm.KernelFault,
                   reason="emulator bug: SIGSEGV in ds_bpermute_b32 (no memory access) on gfx942; gfx90a, gfx1100 "
                          "and cpu agree with interp")
def test_regression_bpermute_does_not_crash_on_gfx942():
    from ptxvm.testing.ptxgen import run_on
    gk = _regression("gfx942_bpermute_crash.ptx")
    run_on(gk, "emu:gfx942")


def _d16_launch(device: str):
    """The ds_d16 regression on ``device``: 32 threads, in[2t] and in[2t+1] are %h0 and %h1."""
    m = ptxvm.Module((REGRESSIONS / "ds_load_d16_keeps_high_half.ptx").read_text())
    inp = (np.arange(64, dtype=np.uint32) * 0x0101 + 0x0203).astype(np.uint16)
    out = np.zeros(64, np.uint16)
    m["k"](1, 32, (inp.copy(), out), device=device)
    return m, inp, out


@needs_emulator
@pytest.mark.slow
def test_regression_ds_load_d16_zeroes_the_other_half_on_the_emulator():
    """Emulator bug, not the translator's: gfx1100 code keeps %h0/%h1 in one VGPR's halves and
    loads the shared byte with ds_load_u8_d16, which the RDNA3 ISA defines as writing
    RETURN_DATA[15:0] and preserving [31:16]; the emulator writes all 32 bits, so %h1 comes out 0.
    Expected values from the PTX by hand: each thread gets its own low byte back (two swaps with
    tid ^ 1) and %h1 unchanged. gfx942's code (ds_read_u8, no d16) gives them exactly."""
    want = np.zeros(64, np.uint16)
    _, inp, _ = _d16_launch("interp")
    want[0::2], want[1::2] = inp[0::2] & 0xFF, inp[1::2]
    for device in ("interp", "emu:gfx942"):
        assert np.array_equal(_d16_launch(device)[2], want), device
    m, _, got = _d16_launch("emu:gfx1100")
    asm = emu.code_object(m, "gfx1100").asm
    assert "ds_load_u8_d16" in asm
    assert np.array_equal(got[0::2], want[0::2]) and not got[1::2].any()
    assert emu_limits.explains_mismatch(m, "k", want, got, asm) == "ds_d16"


@needs_emulator
@pytest.mark.slow
def test_regression_u16_shared_loop_is_two_emulator_bugs():
    """The fuzz kernel the d16 regression was shrunk from: on gfx1100 its one difference (%h1 0,
    ds_load_u8_d16) is the ds_d16 bug; on gfx942 it crashes the emulator in ds_bpermute_b32
    (match.all.sync's permute), the bpermute_exec bug."""
    from ptxvm.testing.ptxgen import kernel_from_ptx, run_on
    from ptxvm.testing.ptxgen.compare import compare_runs
    src = (REGRESSIONS / "u16_shared_loop_ds_d16.ptx").read_text()
    gk = kernel_from_ptx(src, (2, 1, 1), (32, 1, 1), seed=2)
    module = ptxvm.Module(src)
    ref, got = run_on(gk, "interp"), run_on(gk, "emu:gfx1100")
    assert compare_runs(gk, {"interp": ref, "emu:gfx1100": got})
    asm = emu.code_object(module, "gfx1100").asm
    why = {emu_limits.explains_mismatch(module, gk.kernel, ref[i], got[i], asm)
           for i in gk.outputs if not np.array_equal(ref[i], got[i])}
    assert why == {"ds_d16"}
    with pytest.raises(ptxvm.KernelFault) as e:
        run_on(gk, "emu:gfx942")
    assert emu_limits.classify_error(e.value, module, gk.kernel, gk.grid) == "bpermute_exec"


def _tiny_division(device: str) -> tuple[int, int, int]:
    """(numpy's quotient, div.rn's, div.approx's) bits; numpy's is exact (a power-of-two divisor)."""
    m = ptxvm.Module((REGRESSIONS / "f32_div_tiny_numerator.ptx").read_text())
    buf = np.array([0x0400C2C8, 0x33800000, 0, 0], np.uint32)
    want = int((buf[:1].view(np.float32) / buf[1:2].view(np.float32)).view(np.uint32)[0])
    m["k"](1, 1, (buf,), device=device)
    return want, int(buf[2]), int(buf[3])


def test_tiny_numerator_division_on_the_interpreter():
    assert _tiny_division("interp") == (0x1000C2C8,) * 3


@needs_emulator
@pytest.mark.slow
@pytest.mark.parametrize("target", ["gfx942", "gfx1100"])
@pytest.mark.xfail(strict=True, reason="emulator bug: LLVM's f32 division sequence (v_div_scale/v_div_fmas/"
                                        "v_div_fixup) gives 0 for a tiny numerator whose quotient is normal")
def test_regression_f32_division_of_a_tiny_numerator(target):
    assert _tiny_division(f"emu:{target}") == (0x1000C2C8,) * 3
