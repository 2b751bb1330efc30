"""ptxvm's pytest plugin (issue 18, item 6): the `executor` fixture over the registry's CPU
executors, --ptxvm-device, and living beside our own conftest without registering twice.
Each test runs pytest in a subprocess with plugin autoloading off and the plugin named by -p,
so the result does not depend on whether this checkout's entry point is installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pytest(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("PTXVM_DEVICE", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "ptxvm.pytest_plugin", "-p", "no:cacheprovider",
                           *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=300)


def test_executor_fixture_and_device_option_in_a_user_project(tmp_path):
    """A project without our conftest gets `executor` (interp, then cpu) from the plugin; with
    --ptxvm-device interp the cpu case skips saying why, and launches default to interp."""
    (tmp_path / "test_user.py").write_text(textwrap.dedent("""
        import os
        def test_names(executor):
            print("RAN", executor, os.environ.get("PTXVM_DEVICE"))
    """))
    all_ = _pytest(["-q", "-s", "test_user.py"], tmp_path)
    assert all_.returncode == 0, all_.stdout + all_.stderr
    assert "RAN interp None" in all_.stdout
    assert "RAN cpu" in all_.stdout or "needs llvmlite" in all_.stdout
    one = _pytest(["-q", "-s", "-rs", "--ptxvm-device", "interp", "test_user.py"], tmp_path)
    assert one.returncode == 0, one.stdout + one.stderr
    assert "RAN interp interp" in one.stdout and "RAN cpu" not in one.stdout
    assert "--ptxvm-device interp leaves out executor `cpu`" in one.stdout


def test_unknown_device_is_refused_listing_the_executors(tmp_path):
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    r = _pytest(["-q", "--ptxvm-device", "nosuch", "test_x.py"], tmp_path)
    assert r.returncode != 0
    assert "nosuch" in r.stderr + r.stdout and "interp" in r.stderr + r.stdout


def test_plugin_beside_our_conftest_registers_once():
    """Our suite with the plugin loaded: collection works (no option or fixture registered
    twice), and --ptxvm-device reaches the conftest's `executor` fixture."""
    r = _pytest(["-rs", "--ptxvm-device", "interp", "tests/interp/test_barrier_warps.py",
                 "-k", "counted_barrier_waits_for_the_whole_warp"], ROOT)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "1 passed" in r.stdout and "leaves out executor `cpu`" in r.stdout
