"""ptxvm without llvmlite (issue 13): `check`, `fmt`, `isa`, `--help`, `--version`, `info` and
`cache` work and never import it; `run --device cpu` and `translate` say which package is
missing and how to install it. Each command runs in a subprocess where a meta path finder
refuses every `llvmlite` import, as if it were not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "tests" / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx"

# Runs `ptxvm ARGS...` with llvmlite unimportable; reports on stderr whether anything loaded it.
WRAPPER = r"""
import sys

class RefuseLlvmlite:
    def find_spec(self, name, path=None, target=None):
        if name == "llvmlite" or name.startswith("llvmlite."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, RefuseLlvmlite())
from ptxvm.cli import main
try:
    code = main(sys.argv[1:])
finally:
    loaded = sorted(m for m in sys.modules if m.split(".")[0] == "llvmlite")
    sys.stderr.write(f"\nLLVMLITE-MODULES: {loaded}\n")
sys.exit(code)
"""


def ptxvm_without_llvmlite(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PTXVM_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", WRAPPER, *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=env, check=False)


def test_the_wrapper_really_hides_llvmlite():
    r = subprocess.run([sys.executable, "-c", WRAPPER.replace("from ptxvm.cli import main", "import llvmlite")],
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode != 0 and "No module named 'llvmlite'" in r.stderr


@pytest.mark.parametrize("args", [
    ["--help"], ["--version"], ["check", str(VADD)], ["check", "--json", str(VADD)], ["fmt", str(VADD)],
    ["isa"], ["isa", "--status", "parsed-only"], ["isa", "--coverage", str(VADD)], ["info"], ["info", "--json"],
    ["cache", "info"], ["run", "--help"], ["difftest", "--help"], ["record", "--help"], ["translate", "--help"],
], ids=lambda a: " ".join(a).replace(str(ROOT) + "/", ""))
def test_commands_work_without_llvmlite(args):
    r = ptxvm_without_llvmlite(*args)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()
    assert "LLVMLITE-MODULES: []" in r.stderr
    assert "internal error" not in r.stderr


def test_version_and_info_say_llvmlite_is_missing():
    r = ptxvm_without_llvmlite("--version")
    assert "llvmlite not installed (needed by --device cpu and translate: pip install llvmlite)" in r.stdout
    r = ptxvm_without_llvmlite("info")
    assert "cpu (unavailable: llvmlite is not installed)" in r.stdout


def test_run_on_the_interpreter_needs_no_llvmlite():
    r = ptxvm_without_llvmlite("run", str(VADD), "-k", "vector_add", "-g", "1", "-b", "8", "-a", "f32[8]=arange",
                               "-a", "f32[8]=ones", "-a", "f32[8]=zeros", "-a", "8", "-q")
    assert r.returncode == 0, r.stderr
    assert "LLVMLITE-MODULES: []" in r.stderr


def test_run_on_the_host_jit_names_the_missing_package():
    r = ptxvm_without_llvmlite("run", str(VADD), "-k", "vector_add", "-a", "f32[8]=arange", "-a", "f32[8]=ones",
                               "-a", "f32[8]=zeros", "-a", "8", "--device", "cpu")
    assert r.returncode == 1
    assert ("ptxvm: error: --device cpu compiles the kernel with LLVM, which needs the Python package "
            "`llvmlite`; it is not installed: pip install llvmlite") in r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def test_difftest_without_llvmlite_compares_what_it_can():
    r = ptxvm_without_llvmlite("difftest", str(VADD), "-k", "vector_add", "-a", "f32[8]=arange", "-a", "f32[8]=ones",
                               "-a", "f32[8]=zeros", "-a", "8", "-e", "interp,cpu")
    assert r.returncode == 1 and "which needs the Python package `llvmlite`" in r.stderr


@pytest.mark.lld     # with ziglang absent too, translate names that one first
def test_translate_names_the_missing_package(tmp_path):
    r = ptxvm_without_llvmlite("translate", str(VADD), "--arch", "gfx90a", "-o", str(tmp_path))
    assert r.returncode == 1, r.stderr
    assert "needs the Python package `llvmlite`, which is not installed: pip install llvmlite" in r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
