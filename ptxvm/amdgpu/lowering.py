"""Lift every kernel of a PTX module into one LLVM module for an AMD GPU.

The shared lifter (``ptxvm.lift``) lowers one kernel per ``ModuleLowering.lower``.  A code
object holds all of a module's kernels, so one ``ModuleLowering`` lowers them all into the
same llvmlite module and shares the table of lowered `.func`s (a device function is lowered
once, whichever kernel reaches it first; its lowering does not depend on the kernel).
Each kernel function is then renamed to its PTX name, which is the symbol a HIP host
looks up.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from llvmlite import ir

from ..errors import CodegenError
from ..ir import nodes as ptx
from ..lift.module import ModuleLowering, shorten_local_names
from .hooks import AmdgpuHooks
from .layout import module_layout
from .targets import Target


@cache
def data_layout(triple: str, cpu: str, features: str) -> str:
    """LLVM's data layout for the target (the private-space stack ``A5`` must be in the IR
    the worker parses, or allocas in address space 5 fail verification)."""
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features, opt=3, reloc="pic")
    return str(tm.target_data)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off while lifting. llvmlite makes hundreds of thousands of objects
    that all stay alive until the module is printed, so every collection it triggers meanwhile
    (growing full ones too, over the parsed module as well) finds nothing to free: half of the
    lifter's CPU time (thrust_algos.ptx 2.36 -> 1.15 s, tensor_core.ptx 1.44 -> 0.70 s). The
    llvmlite objects, garbage once printed, are cyclic: the collector frees them when it next
    runs after ``gc.enable()``, on its ordinary schedule. A collector already off stays off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def lift_module(module: ptx.Module, target: Target) -> str:
    """LLVM IR text of every kernel in ``module`` (raises UnsupportedError naming the
    first instruction this target cannot translate)."""
    with _collector_paused():
        return _lift_module(module, target)


def _lift_module(module: ptx.Module, target: Target) -> str:
    if not module.kernels:
        raise CodegenError(f"{module.filename or 'the module'} has no kernels (`.entry`) to translate")
    layout = module_layout(module)
    hooks = AmdgpuHooks(target, layout, data_layout(target.triple, target.cpu, target.llvm_features))
    ml: ModuleLowering | None = None
    entries: list[tuple[ir.Function, ptx.Function]] = []
    for kernel in module.kernels.values():
        hooks.kernel = kernel
        # One ModuleLowering for all kernels (its module-wide scans are done once), re-pointed at
        # each kernel's parameter layout.
        if ml is None:
            ml = ModuleLowering(module, hooks, layout.for_kernel(kernel))
        else:
            ml.layout = layout.for_kernel(kernel)
        lifted = ml.lower(kernel, text=False)        # the module is printed once, below
        entries.append((ml.llmod.get_global(lifted.entry), kernel))
    assert ml is not None
    llmod = ml.llmod
    if hooks.accesses or hooks.by_value_reads:
        raise CodegenError("internal error: memory accesses left without their AMDGPU rewrite")
    for fn, kernel in entries:
        fn.name = kernel.name
        # llvmlite caches the text of a value's name when first printed (calls to it, if any).
        fn.__dict__.pop("_StringReferenceCaching__cached_refstr", None)
    version = llmod.add_metadata([ir.IntType(32)(1), "amdhsa_code_object_version",
                                  ir.IntType(32)(target.code_object_version * 100)])
    llmod.add_named_metadata("llvm.module.flags", version)
    if hooks.printf_formats:
        # The code object's amdhsa.printf list, and the hidden_printf_buffer argument (LLVM adds
        # both for a module with llvm.printf.fmts; see amdgpu/printf.py).
        fmts = llmod.add_named_metadata("llvm.printf.fmts")
        for text in hooks.printf_formats:
            fmts.add(llmod.add_metadata([text]))
    shorten_local_names(llmod)
    return str(llmod)
