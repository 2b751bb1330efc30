"""The call-graph pass: one rule for callees, reachability, recursion and what a kernel's reach
does. The golden summary (tests/golden/passes/callgraph.txt) was checked by hand against the PTX
beside it: each line follows from the instructions written there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import ptxvm
from ptxvm.passes import CallGraph, CallGraphPass, run_pipeline

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "passes"


def _module(body: str) -> ptxvm.ir.Module:
    return ptxvm.parse(".version 8.0\n.target sm_80\n.address_size 64\n" + body)


def test_callgraph_summary_matches_the_hand_checked_golden() -> None:
    module = ptxvm.load(GOLDEN / "callgraph.ptx", cache=False)
    text = run_pipeline(module)["callgraph"].describe()
    golden = GOLDEN / "callgraph.txt"
    if os.environ.get("PTXVM_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_queries_on_the_golden_module() -> None:
    graph = CallGraph.of(ptxvm.load(GOLDEN / "callgraph.ptx", cache=False))
    assert graph.recursive == {"f", "g"}
    assert graph.address_taken == {"h", "j"}
    assert graph.any_in_reach("k", "cta_sync") and not graph.any_in_reach("k", "warp_sync")
    assert graph.any_in_reach("k2", "warp_sync")        # h, through the vtable
    assert graph.any_in_reach("k2", "atomics")          # j, through its address
    assert not graph.uses_heap("k") and graph.externals("k") == {"vprintf"}


def test_self_recursion_and_the_heap() -> None:
    graph = CallGraph.of(_module("""
.extern .func (.param .b64 p) malloc (.param .b64 n);
.func r () { call r, (); ret; }
.func m () { .reg .b64 %rd<2>;
  { .param .b64 a; .param .b64 p; st.param.b64 [a], 8; call (p), malloc, (a); ld.param.b64 %rd1, [p]; }
  ret; }
.visible .entry k () { call r, (); call m, (); ret; }
"""))
    assert graph.recursive == {"r"}
    assert graph.reachable("k") == ("k", "r", "m")
    assert graph.uses_heap("k") and not graph.uses_heap("r")


def test_a_chain_of_thousands_of_calls_needs_no_recursion_in_python() -> None:
    n = 3000
    funcs = "".join(f".func f{i} () {{ call f{i + 1}, (); ret; }}\n" for i in range(n))
    graph = CallGraph.of(_module(f".func f{n} ();\n{funcs}.func f{n} () {{ call f0, (); ret; }}\n"
                                 ".visible .entry k () { call f0, (); ret; }\n"))
    assert len(graph.reachable("k")) == n + 2
    assert len(graph.recursive) == n + 1                 # f0 -> ... -> fn -> f0 is one cycle


def test_the_pipeline_names_its_results_and_refuses_duplicates() -> None:
    module = _module(".visible .entry k () { ret; }\n")
    analyses = run_pipeline(module)
    assert list(analyses) == ["callgraph"]
    with pytest.raises(KeyError, match="no pass named 'nan_blind' ran"):
        analyses["nan_blind"]
    with pytest.raises(ValueError, match="two passes are named 'callgraph'"):
        run_pipeline(module, (CallGraphPass(), CallGraphPass()))
