"""Translating PTX to AMD GPU code objects (``.hsaco``) for gfx90a, gfx1030 and more.

    import ptxvm
    obj = ptxvm.compile(ptx_text, target="gfx90a")
    obj.save("kernels.gfx90a.hsaco")

Pipeline: ``lowering`` (the shared lifter with ``hooks.AmdgpuHooks``) -> LLVM O3 and
codegen in the isolated worker (``ptxvm.backend.toolchain``) -> ``link`` (ld.lld) -> ``check``
(ELF header, metadata note, kernel descriptors, argument layout) -> ``CodeObject``.
Targets are data: ``isa/targets/<name>.toml``, loaded by ``targets``.

The package is lazy: ``ptxvm.amdgpu.targets`` (listing targets, for ``--help`` and
``--version``) needs no llvmlite; ``compile`` and ``CodeObject`` load codegen on first use.
"""

from __future__ import annotations

from .targets import Target, available, load_target

__all__ = ["CodeObject", "Target", "available", "compile", "load_target"]


def __getattr__(name: str):
    # Codegen imports llvmlite: only what translates pays for it.
    if name == "compile":
        from .codegen import compile
        return compile
    if name == "CodeObject":
        from .codeobject import CodeObject
        return CodeObject
    raise AttributeError(f"module 'ptxvm.amdgpu' has no attribute {name!r}")
