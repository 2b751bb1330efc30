"""Named, ordered analyses of the IR, shared by the verifier, the executors and the lifter.

    from ptxvm.passes import run_pipeline
    analyses = run_pipeline(module)
    graph = analyses["callgraph"]          # a CallGraph
    graph.reachable(kernel_name), graph.recursive, graph.uses_heap(kernel_name)

This stage imports only ``ir`` and ``isa`` (DESIGN.md's table).
"""

from __future__ import annotations

from .callgraph import CallGraph, CallGraphPass, FunctionFacts, call_target, operand_symbols
from .nan_blind import NanBlindPass, NanBlindRegisters, nan_blind_registers
from .pipeline import Analyses, Pass, run_pipeline

DEFAULT_PIPELINE: tuple[Pass, ...] = (CallGraphPass(),)

__all__ = ["DEFAULT_PIPELINE", "Analyses", "CallGraph", "CallGraphPass", "FunctionFacts", "NanBlindPass",
           "NanBlindRegisters", "Pass", "call_target", "nan_blind_registers", "operand_symbols", "run_pipeline"]
