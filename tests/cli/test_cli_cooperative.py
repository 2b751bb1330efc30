"""`ptxvm run --cooperative` (issue 14 item 3): the launch provides cooperative groups' grid
workspace; a grid that cannot be resident, and a grid sync without the flag, fail with the message."""

from __future__ import annotations

import json
import subprocess
import sys

from models.devrt import NOT_COOPERATIVE
from models.fixtures import FIXTURES

PTX = str(FIXTURES / "nvcc" / "sm80" / "grid_sync.ptx")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxvm", "run", PTX, *args], capture_output=True, text=True)


def test_cooperative_flag_provides_the_grid_workspace():
    base = ("-k", "grid_is_valid", "-g", "2", "-b", "4", "-a", "i32[8]=full(-1)", "--json")
    coop, plain = (json.loads(_run(*base, *extra).stdout) for extra in (("--cooperative",), ()))
    assert coop["args"][0]["values"] == [1] * 8 and plain["args"][0]["values"] == [0] * 8


def test_grid_sum_with_and_without_the_flag():
    base = ("-k", "grid_sum", "-g", "3", "-b", "32", "-a", "i32[96]=ones", "-a", "i32[3]=zeros",
            "-a", "i32[1]=zeros", "-a", "90", "--json")
    got = json.loads(_run(*base, "--cooperative", "-d", "cpu").stdout)
    assert got["args"][1]["values"] == [32, 32, 26] and got["args"][2]["values"] == [90]
    r = _run(*base[:-1])
    assert r.returncode == 1 and f"grid_sync.ptx:86:2: error: {NOT_COOPERATIVE}\n" in r.stderr


def test_a_grid_too_large_to_be_resident():
    r = _run("-k", "grid_is_valid", "-g", "2000", "-b", "4", "-a", "i32[8000]=zeros", "--cooperative")
    assert r.returncode == 1
    assert "grid (2000, 1, 1) has 2,000 blocks, more than the 1,024 ptxvm's device holds" in r.stderr


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxvm", *args], capture_output=True, text=True)


GRID_SUM = ("-k", "grid_sum", "-g", "3", "-b", "32", "-a", "i32[96]=ones", "-a", "i32[3]=zeros",
            "-a", "i32[1]=zeros", "-a", "90")


def test_difftest_cooperative_runs_the_grid_sync_on_both_executors():
    r = _cli("difftest", PTX, *GRID_SUM, "--cooperative", "-e", "interp,cpu", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["ok"] and report["cases"][0]["launch"].endswith("(cooperative)")
    plain = _cli("difftest", PTX, *GRID_SUM, "-e", "interp,cpu")
    assert plain.returncode == 1 and NOT_COOPERATIVE in plain.stdout + plain.stderr


def test_record_cooperative_keeps_the_flag_in_the_golden(tmp_path):
    out = tmp_path / "grid_sum.npz"
    r = _cli("record", PTX, *GRID_SUM, "--cooperative", "-o", str(out), "--json")
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    assert rec["cooperative"] is True and rec["launch"].endswith("(cooperative)")
    from ptxvm.testing.golden import load_golden
    g = load_golden(out)
    assert g.launch.cooperative and list(g.outputs[1]) == [32, 32, 26] and list(g.outputs[2]) == [90]
    # The replay is cooperative too, on each executor; --cooperative with --golden is a usage error.
    r = _cli("difftest", "--golden", str(out), "-e", "interp,cpu")
    assert r.returncode == 0, r.stdout + r.stderr
    r = _cli("difftest", "--golden", str(out), "--cooperative", "-e", "interp")
    assert r.returncode == 2 and "--cooperative" in r.stderr


def test_record_without_the_flag_refuses_the_grid_sync(tmp_path):
    r = _cli("record", PTX, *GRID_SUM, "-o", str(tmp_path / "g.npz"))
    assert r.returncode == 1 and NOT_COOPERATIVE in r.stderr
