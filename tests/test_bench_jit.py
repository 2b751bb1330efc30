"""Smoke test: benchmarks/bench_jit.py runs in --quick mode and every output checks out.

Two cheap kernels only (the n-body kernel alone takes seconds of LLVM time): one without
synchronisation and one that exercises the C build, numpy, the interpreter and the JIT's
compile-time measurement the same way.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench_jit.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_jit", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_jit"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(shutil.which("gcc") is None, reason="the benchmark compiles its C versions with gcc")
def test_bench_jit_quick(capsys):
    bench = _load()
    rc = bench.main(["--quick", "--json", "--repeat", "1", "--cases", "vector_add", "mandelbrot"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    rows = {r["case"]: r for r in report["rows"]}
    assert set(rows) == {"vector_add", "mandelbrot"}
    for r in rows.values():
        assert all(r["ok"].values()), r["ok"]
        assert r["compile_cold_s"] >= 0 and r["llvm_s"] > 0
        assert {"c", "numpy", "jit", "interp"} <= set(r["ns_per_unit"])
        assert r["ratio"]["jit_vs_c"] > 0
    assert report["meta"]["jit_threads_max"] >= 1


def test_bench_jit_c_versions_match_numpy(tmp_path):
    """The C reference of every case agrees with its numpy model (a wrong baseline would make
    every ratio meaningless)."""
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    bench = _load()
    lib, _ = bench.build_c("gcc", ["-O2"], tmp_path)
    small = {"matmul_tiled": 32, "nbody": 256, "mandelbrot": 1024}
    for name, make in bench.CASES.items():
        case = make(small.get(name, 4096))
        arrays = {k: v.copy() for k, v in case.arrays.items()}
        case.c_call(lib, lambda k, arrays=arrays: arrays[k].ctypes.data)
        assert case.check(arrays[case.out], case.model()), name
