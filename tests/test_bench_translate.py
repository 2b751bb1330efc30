"""Smoke test: benchmarks/bench_translate.py --quick (one small fixture, one kernel) runs and
reports both tables; the clang-19 comparison is checked only where clang-19 is installed (the
test never installs it)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

# Links code objects: needs ld.lld from the ziglang wheel (the `amdgpu` extra).
pytestmark = pytest.mark.lld

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench_translate.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_translate", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_translate"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="the benchmark times ptxas on the same PTX")
def test_bench_translate_quick(capsys):
    bench = _load()
    rc = bench.main(["--quick", "--json", "--no-install"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    rows = report["translate"]["rows"]
    assert [r["input"] for r in rows] == ["elementwise.ptx"]
    assert rows[0]["skipped"] is None and rows[0]["ptxvm_s"] > 0 and rows[0]["ptxas_s"] > 0
    s = report["translate"]["summary"]
    assert s["files"] == 1 and isinstance(s["goal_met"], bool)
    # issue 16's goal: the median and the largest per-file ratio, and CPU seconds beside wall time
    assert s["median_ratio"] == s["max_ratio"] == rows[0]["ratio"] and s["max_input"] == "elementwise.ptx"
    assert s["goal_met"] == (s["median_ratio"] <= bench.GOAL_MEDIAN and s["max_ratio"] <= bench.GOAL_MAX)
    assert rows[0]["ptxvm_cpu_s"] > 0 and rows[0]["ptxas_cpu_s"] > 0
    if rows[0]["cpu_ratio"] is not None:       # (the LLVM worker's CPU is read from /proc)
        assert rows[0]["cpu_ratio"] == rows[0]["ptxvm_cpu_s"] / rows[0]["ptxas_cpu_s"]
    assert set(report["translate"]["loadavg"]) == {"before", "after"}

    q = report["quality"]
    assert {r["kernel"] for r in q["rows"]} == {"vector_add"}
    assert {r["target"] for r in q["rows"]} == {"gfx90a", "gfx1030"}
    for r in q["rows"]:
        assert r["error"] is None, r["error"]
        assert r["ours"]["instructions"] > 0 and r["ours"]["vgprs"] > 0
        if shutil.which("clang-19"):
            assert r["clang"]["instructions"] > 0 and r["clang"]["vgprs"] > 0
            assert isinstance(r["goal_met"], bool)
        else:
            assert r["clang"] is None and q["skipped"]


def test_counting_is_the_same_on_both_sides():
    bench = _load()
    asm = ("\t.text\nk:                  ; @k\n; %bb.0:\n\ts_load_dword s0, s[4:5], 0x0 ; load\n"
           "\t.p2align 2\n.LBB0_1:\n\tv_add_f32_e32 v0, v1, v2\n\ts_endpgm\n.Lfunc_end0:\n")
    assert bench.count(asm, "k") == 3
    assert bench.count(asm.replace("k:                  ; @k", "k:"), "k") == 3


def test_bench_translate_profile_has_every_phase(capsys):
    bench = _load()
    rc = bench.main(["--profile", "--json", "--files", "stencil2d", "--repeat", "1"])
    rows = json.loads(capsys.readouterr().out)["profile"]
    assert rc == 0 and [r["input"] for r in rows] == ["stencil2d.ptx"]
    ph = rows[0]["phases"]
    assert set(ph) == set(bench.PHASES)
    # every step that must run did (the worker timed its own steps), and they add up to the total
    for name in ("parse", "lift", "llvm_parse", "llvm_opt", "llvm_codegen", "link"):
        assert ph[name] > 0, name
    assert abs(sum(ph.values()) - rows[0]["total_s"]) < 1e-9
