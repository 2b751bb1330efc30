"""The wheel carries grammar/ and isa/ and finds them when installed (not from the checkout)."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_installs_into_fresh_venv_and_finds_its_data(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(wheels), str(ROOT)],
                   check=True)
    wheel = next(wheels.glob("ptxvm-*.whl"))
    env_dir = tmp_path / "venv"
    # System site-packages provide lark/numpy/llvmlite without a download; ptxvm itself
    # comes from the wheel, which the venv's own site-packages put first on sys.path.
    venv.EnvBuilder(with_pip=True, system_site_packages=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)], check=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    fixture = ROOT / "tests" / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PTXVM_NO_CACHE"] = "1"
    where = subprocess.run(
        [str(py), "-c", "import ptxvm, ptxvm.resources as r; print(ptxvm.__file__); print(r.data_dir('grammar'))"],
        cwd=outside, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert str(env_dir) in where[0], f"ptxvm imported from {where[0]}, not from the wheel"
    assert where[1].endswith(os.path.join("ptxvm", "_data", "grammar")), where[1]
    out = subprocess.run([str(env_dir / "bin" / "ptxvm"), "check", str(fixture)], cwd=outside, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
