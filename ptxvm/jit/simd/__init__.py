"""The host JIT's warp-as-SIMD path (issue 19): one LLVM function runs a whole warp, its PTX
registers ``<32 x T>`` vectors, divergence as per-lane PCs with the interpreter's lowest-PC
rule, shuffles as lane permutations, ``bar.sync`` as a return of the warp function (the CTA's
warps run in turn between barriers).  Kernels whose instructions it does not lower take the
per-thread path; ``lift_simd`` returns the reason then (``accept.refusal``).

``PTXVM_SIMD=0`` turns the path off (every kernel takes the per-thread path)."""

from __future__ import annotations

import os

from llvmlite import ir

from ...ir import nodes as ptx
from ...lift.module import LiftedModule, shorten_local_names
from .. import layout as L
from .accept import refusal
from .driver import add_simd_driver
from .lower import WarpLowering

MODE = "simd (a warp's 32 lanes as vector lanes, warps in turn between barriers)"


def enabled() -> bool:
    return os.environ.get("PTXVM_SIMD", "1") != "0"


def lift_simd(module: ptx.Module, kernel: ptx.Function, layout, triple: str) -> tuple[LiftedModule | None, str]:
    """(the lifted module, "") when the vector path takes ``kernel``, else (None, why not)."""
    if not enabled():
        return None, "PTXVM_SIMD=0"
    why = refusal(kernel, layout)
    if why:
        return None, why
    llmod = ir.Module(name=module.filename or "ptx")
    llmod.triple = triple
    sites: list = []
    warp = WarpLowering(llmod, kernel, layout, sites)
    fn = warp.build()
    add_simd_driver(llmod, fn, warp.state_bytes)
    shorten_local_names(llmod)
    return LiftedModule(str(llmod), kernel.name, "ptxvm_run", sites, [], False), ""


RECORD_BYTES = L.THREAD_HEADER
