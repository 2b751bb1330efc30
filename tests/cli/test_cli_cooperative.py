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
