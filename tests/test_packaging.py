"""The wheel installs into a plain venv (no system site packages), with the dependencies it
declares, and finds its data folders there (not in the checkout).

Slow: it builds a wheel and lets pip install its dependencies into a fresh venv (from pip's
cache when this machine has installed them before, else from the package index).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx"

pytestmark = pytest.mark.slow


def _plain_venv(where: Path) -> Path:
    # No system site packages: only what the wheel declares may be importable, as for a user.
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(where)
    return where / "bin" / "python"


def _outside_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PTXVM_NO_CACHE"] = "1"
    return env


def test_wheel_installs_into_a_plain_venv_with_its_dependencies_and_finds_its_data(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(ROOT)],
                   check=True)
    wheel = next(wheels.glob("ptxvm-*.whl"))
    env_dir = tmp_path / "venv"
    py = _plain_venv(env_dir)
    # The base install, without the `amdgpu` extra: running kernels must not need ziglang.
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
                   check=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = _outside_env()
    where = subprocess.run(
        [str(py), "-c", "import ptxvm, ptxvm.resources as r; print(ptxvm.__file__); print(r.data_dir('grammar'))"],
        cwd=outside, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert str(env_dir) in where[0], f"ptxvm imported from {where[0]}, not from the wheel"
    assert where[1].endswith(os.path.join("ptxvm", "_data", "grammar")), where[1]
    ptxvm_exe = str(env_dir / "bin" / "ptxvm")
    out = subprocess.run([ptxvm_exe, "check", str(FIXTURE)], cwd=outside, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    # Both executors run from the installed wheel: c = a + b with a = b = arange(8).
    for device in ("interp", "cpu"):
        out = subprocess.run([ptxvm_exe, "run", str(FIXTURE), "--kernel", "vector_add", "--grid", "1", "--block", "32",
                              "--arg", "f32[8]=arange", "--arg", "f32[8]=arange", "--arg", "f32[8]=zeros",
                              "--arg", "8", "--device", device],
                             cwd=outside, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "[ 0.,  2.,  4.,  6.,  8., 10., 12., 14.]" in out.stdout.replace("\n", ""), out.stdout
    has_zig = subprocess.run([str(py), "-c", "import importlib.util as u; print(u.find_spec('ziglang') is not None)"],
                             env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert has_zig == "False", "ziglang must be an optional extra (ptxvm[amdgpu]), not a dependency"
