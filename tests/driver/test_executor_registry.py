"""The executor registry (issue 13, item 5): registration, capabilities, unknown names, a light
import (no llvmlite, no numpy), and a third-party executor reached by every front door:
``Kernel.__call__(device=...)``, ``ptxvm run --device``, ``ptxvm difftest --executors`` and
``ptxvm record --device``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.cli import main
from ptxvm.driver import executors
from ptxvm.driver.executors import Capabilities, Executor, LaunchRequest

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "tests" / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx"
N = 8
# vector_add(a, b, c, n): c = a + b with a = arange(8), b = ones(8); expected c = 1..8 by hand.
EXPECTED = np.arange(1, N + 1, dtype=np.float32)
CLI_ARGS = ["-k", "vector_add", "-g", "1", "-b", str(N), "-a", f"f32[{N}]=arange", "-a", f"f32[{N}]=ones",
            "-a", f"f32[{N}]=zeros", "-a", str(N)]


def _vadd_args():
    return (np.arange(N, dtype=np.float32), np.ones(N, np.float32), np.zeros(N, np.float32), np.int32(N))


def _llvmlite() -> bool:
    from importlib.util import find_spec
    return find_spec("llvmlite") is not None


# ------------------------------------------------------------------ built-ins and capabilities

def test_builtins_are_registered_reference_first():
    names = executors.names()
    assert names[0] == "interp" and "cpu" in names       # cpu is registered with or without llvmlite
    assert executors.get("interp").capabilities.reference
    assert ("cpu" in executors.available()) == _llvmlite()


def test_capabilities_are_frozen():
    with pytest.raises(FrozenInstanceError):
        executors.get("interp").capabilities.trace = False


def test_capabilities_say_what_each_needs():
    assert executors.get("interp").capabilities.packages == ()
    assert executors.get("cpu").capabilities.packages == ("llvmlite",)
    assert all(executors.get(n).capabilities.host_cpu for n in ("interp", "cpu"))


def test_every_cpu_executor_adds_vectors(executor):
    a, b, c, n = _vadd_args()
    ptxvm.Module.from_file(VADD)["vector_add"](1, N, (a, b, c, n), device=executor)
    assert np.array_equal(c, EXPECTED)


def test_measures_steps_is_what_the_launch_reports(executor):
    """The capability is checked against the launch: steps counted exactly where it says so."""
    stats = ptxvm.Module.from_file(VADD)["vector_add"](1, N, _vadd_args(), device=executor)
    assert stats.instructions > 0
    assert (stats.steps > 0) == executors.get(executor).capabilities.measures_steps


def test_trace_is_refused_exactly_where_the_capability_is_false(executor):
    import io
    k = ptxvm.Module.from_file(VADD)["vector_add"]
    if executors.get(executor).capabilities.trace:
        out = io.StringIO()
        k(1, N, _vadd_args(), device=executor, trace=[(0, 1)], trace_out=out)
        assert out.getvalue().startswith("trace block (0, 0, 0) thread (1, 0, 0) ")
    else:
        with pytest.raises(ptxvm.LaunchError, match=r"--trace/trace= needs device='interp'"):
            k(1, N, _vadd_args(), device=executor, trace=[(0, 1)])


# ------------------------------------------------------------------ names

def test_unknown_name_lists_the_registered_ones():
    k = ptxvm.Module.from_file(VADD)["vector_add"]
    with pytest.raises(executors.UnknownExecutor) as e:
        k(1, N, _vadd_args(), device="nosuch")
    assert isinstance(e.value, ptxvm.LaunchError)
    assert e.value.message == f"device `nosuch` is not available; this build has: {', '.join(executors.names())}"


def test_unknown_name_on_the_command_line_is_a_usage_error(capsys):
    assert main(["run", str(VADD), *CLI_ARGS, "--device", "nosuch"]) == 2
    assert "--device `nosuch`: no such executor; registered: interp, cpu" in capsys.readouterr().err
    assert main(["record", str(VADD), *CLI_ARGS, "--device", "nosuch", "-o", "never.npz"]) == 2
    assert "executor `nosuch` is not available in this build; it has interp, cpu" in capsys.readouterr().err
    assert not Path("never.npz").exists()


@pytest.mark.parametrize("name", ["Interp", "two words", "emu:", ":gfx942", "cpu!", ""])
def test_badly_formed_names_are_refused(name):
    with pytest.raises(ValueError, match="must match"):
        executors.register(Executor(name, "x", Capabilities(host_cpu=True), executors.get("interp").launch))


def test_a_taken_name_needs_replace():
    with pytest.raises(ValueError, match="an executor named `interp` is already registered"):
        executors.register(replace(executors.get("interp"), summary="another"))


def test_family_names_fit():
    """`emu:gfx942`-style names: a family of executors, one per target."""
    e = executors.register(Executor("demo:gfx942", "test", Capabilities(host_cpu=True),
                                    executors.get("interp").launch))
    try:
        assert executors.get("demo:gfx942") is e and "demo:gfx942" in executors.names()
    finally:
        executors.unregister("demo:gfx942")
    assert "demo:gfx942" not in executors.names()


# ------------------------------------------------------------------ the registry's import is light

LIGHT = r"""
import sys
{hide}
import ptxvm.driver.executors as e
names, available = tuple(n for n in e.names() if e.get(n).capabilities.host_cpu), e.available()  # emu:*, hip: not host
caps = e.get("cpu").capabilities
print(names, available, caps.packages)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("llvmlite", "numpy")))
"""

HIDE = r"""
class RefuseLlvmlite:
    def find_spec(self, name, path=None, target=None):
        if name == "llvmlite" or name.startswith("llvmlite."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, RefuseLlvmlite())
"""


def _python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=env, check=False)


def test_importing_the_registry_imports_neither_llvmlite_nor_numpy():
    r = _python(LIGHT.format(hide=""))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("('interp', 'cpu')")
    assert lines[1] == "[]"


def test_without_llvmlite_cpu_is_registered_but_not_available():
    r = _python(LIGHT.format(hide=HIDE))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["('interp', 'cpu') ('interp',) ('llvmlite',)", "[]"]


def test_without_llvmlite_a_cpu_launch_names_the_package():
    code = HIDE.replace("class", "import sys\nclass", 1) + r"""
import numpy as np, ptxvm
k = ptxvm.Module.from_file(sys.argv[1])["vector_add"]
try:
    k(1, 1, (np.zeros(1, np.float32),) * 3 + (1,), device="cpu")
except ptxvm.LaunchError as e:
    print(type(e).__name__, e.message)
print(sorted(m for m in sys.modules if m.split(".")[0] == "llvmlite"))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", code, str(VADD)], capture_output=True, text=True, timeout=120,
                       env=env, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "MissingPackage device `cpu` compiles the kernel with LLVM, which needs the Python package `llvmlite`; "
        "it is not installed: pip install llvmlite", "[]"]


# ------------------------------------------------------------------ a third-party executor

class Plugin:
    """Delegates to the interpreter, counts its launches and, when ``skew``, adds 1.0 to every
    float array afterwards (so a comparison that really ran it must see a difference)."""

    def __init__(self, skew: bool) -> None:
        self.calls, self.skew = 0, skew

    def launch(self, request: LaunchRequest):
        self.calls += 1
        stats = executors.get("interp").launch(request)
        if self.skew:
            for a in request.args:
                if isinstance(a, np.ndarray) and a.dtype.kind == "f":
                    a += 1
        return stats


@pytest.fixture(params=[False, True], ids=["faithful", "skewed"])
def plugin(request):
    p = Plugin(skew=request.param)
    # measures_steps False: `ptxvm run` must then say "steps n/a", though interp counted them.
    executors.register(Executor("test:plugin", "a test executor delegating to interp",
                                Capabilities(host_cpu=True, measures_steps=False), p.launch))
    try:
        yield p
    finally:
        executors.unregister("test:plugin")


def test_plugin_through_kernel_call(plugin):
    a, b, c, n = _vadd_args()
    ptxvm.Module.from_file(VADD)["vector_add"](1, N, (a, b, c, n), device="test:plugin")
    assert plugin.calls == 1
    assert np.array_equal(c, EXPECTED + plugin.skew)


def test_plugin_through_run_device(plugin, capsys):
    assert main(["run", str(VADD), *CLI_ARGS, "--device", "test:plugin", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert plugin.calls == 1 and doc["device"] == "test:plugin"
    assert doc["stats"]["steps"] is None                    # the capability, not the name, decides
    assert doc["args"][2]["values"] == (EXPECTED + plugin.skew).tolist()
    assert main(["run", str(VADD), *CLI_ARGS, "-d", "test:plugin"]) == 0
    assert "steps n/a" in capsys.readouterr().out and plugin.calls == 2


def test_plugin_through_difftest_executors(plugin, capsys):
    code = main(["difftest", str(VADD), *CLI_ARGS, "--executors", "interp,test:plugin", "--no-writers"])
    out = capsys.readouterr().out
    assert plugin.calls == 1
    if plugin.skew:
        assert code == 1 and "test:plugin" in out and "MISMATCH" in out
    else:
        assert code == 0 and "difftest: all agree" in out


def test_plugin_through_record_device(plugin, tmp_path, capsys):
    g = tmp_path / "g.npz"
    assert main(["record", str(VADD), *CLI_ARGS, "--device", "test:plugin", "-o", str(g), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert plugin.calls == 1 and doc["provenance"]["executor"] == "test:plugin"
    from ptxvm.testing import load_golden
    assert np.array_equal(load_golden(g).outputs[2], EXPECTED + plugin.skew)


def test_the_old_record_spelling_still_works(tmp_path, capsys):
    g = tmp_path / "g.npz"
    assert main(["record", str(VADD), *CLI_ARGS, "--executor", "interp", "-o", str(g), "-q"]) == 0
    from ptxvm.testing import load_golden
    assert load_golden(g).provenance["executor"] == "interp"
    assert main(["record", str(VADD), *CLI_ARGS, "-e", "interp", "-o", str(g), "-q"]) == 0
    assert main(["record", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--device NAME, -d NAME" in text and "--executor" not in text      # hidden, not advertised


def test_info_lists_every_registered_executor(plugin, capsys):
    assert main(["info", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["executors"]["test:plugin"] == "available"
    assert doc["executor_capabilities"]["test:plugin"]["measures_steps"] is False
    assert doc["executor_capabilities"]["interp"]["reference"] is True


def test_a_plugins_statistics_become_the_kernels():
    """An executor that shares nothing with the host ones: what its launch returns is k.stats."""
    mine = object()
    executors.register(Executor("test:null", "returns at once", Capabilities(host_cpu=True), lambda request: mine))
    try:
        k = ptxvm.Module.from_file(VADD)["vector_add"]
        assert k(1, N, _vadd_args(), device="test:null") is mine and k.stats is mine
    finally:
        executors.unregister("test:null")
