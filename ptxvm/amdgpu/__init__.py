"""Translating PTX to AMD GPU code objects (``.hsaco``) for gfx90a, gfx1030 and more.

    import ptxvm
    obj = ptxvm.compile(ptx_text, target="gfx90a")
    obj.save("kernels.gfx90a.hsaco")

Pipeline: ``lowering`` (the shared lifter with ``hooks.AmdgpuHooks``) -> LLVM O3 and
codegen in the isolated worker (``ptxvm.jit.toolchain``) -> ``link`` (ld.lld) -> ``check``
(ELF header, metadata note, kernel descriptors, argument layout) -> ``CodeObject``.
Targets are data: ``isa/targets/<name>.toml``, loaded by ``targets``.
"""

from __future__ import annotations

from .codegen import compile
from .codeobject import CodeObject
from .targets import Target, available, load_target

__all__ = ["CodeObject", "Target", "available", "compile", "load_target"]
