"""benchmarks/bench_tensor.py: its loop finder on hand-written listings, and a --quick run whose
outputs all check out (slow: it compiles a tensor-core kernel for the host)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "bench_tensor.py"


def _load():
    spec = importlib.util.spec_from_file_location("bench_tensor", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_tensor"] = mod
    spec.loader.exec_module(mod)
    return mod


LISTING = """\
k:
\ts_load_dwordx2 s[0:1], s[4:5], 0x0
.LBB0_1:
\tv_add_u32_e32 v1, v2, v3
.LBB0_2:
\tds_bpermute_b32 v4, v5, v6
\ts_cbranch_scc1 .LBB0_2
\tv_mfma_f32_16x16x16f16 a[0:3], v[0:1], v[2:3], a[0:3] ; a comment
\ts_cbranch_vccnz .LBB0_1
\ts_branch .LBB0_4
.LBB0_3:
\tv_mov_b32_e32 v0, 0
\ts_cbranch_execz .LBB0_3
.LBB0_4:
\ts_endpgm
.Lfunc_end0:
"""


def test_outer_loops_from_backward_branches():
    loops = {d["header"]: d for d in _load().outer_loops(LISTING, "k")}
    # .LBB0_2 is nested in .LBB0_1; the forward branch to .LBB0_4 closes no loop
    assert set(loops) == {".LBB0_1", ".LBB0_3"}
    assert loops[".LBB0_1"] == {"header": ".LBB0_1", "instructions": 5, "inner_loops": 1, "mfma": 1}
    assert loops[".LBB0_3"]["instructions"] == 2 and loops[".LBB0_3"]["inner_loops"] == 0


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gcc") is None, reason="the benchmark compiles its C baseline with gcc")
def test_bench_tensor_quick(capsys):
    bench = _load()
    rc = bench.main(["--quick", "--json", "--kernels", "wmma", "--no-amd"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0
    (row,) = report["rows"]
    assert row["kernel"] == "wmma" and row["n"] == 64
    assert row["ok"] == {"jit": True, "c": True, "interp": True, "jit_eq_interp": True}
