"""Smoke test: benchmarks/bench_campaign.py measures the three configurations on the same kernels."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_campaign.py"


def test_the_benchmark_runs_every_configuration_on_the_same_kernels() -> None:
    spec = importlib.util.spec_from_file_location("bench_campaign", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_campaign"] = mod
    spec.loader.exec_module(mod)
    r = mod.run(count=3, seed=2, jobs=2, executors=("interp",))
    assert r["runs"]["1 process"]["kernels"] == 3 and r["runs"]["2 processes"]["kernels"] == 3
    cluster = r["runs"]["local cluster"]
    assert "skipped" in cluster or cluster["kernels"] == 3
    assert r["ratios"]["1 process"] == 1.0
    assert "kernels/s" in mod.render(r)
