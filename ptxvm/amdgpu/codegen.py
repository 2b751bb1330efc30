"""PTX -> AMD GPU code object: lift, optimise and compile (LLVM worker), link, verify.

    obj = compile(ptx_text, target="gfx90a")
    obj.hsaco, obj.asm, obj.llvm_ir, obj.metadata, obj.save("k.hsaco")

Each step fails with a ptxvm error, never a wrong object: an instruction the target cannot
translate is an ``UnsupportedError`` naming it and its source line; an LLVM failure or
crash, a link error, or a code object that does not match the module (kernels, argument
layout, machine, code-object version) is a ``CodegenError``.
"""

from __future__ import annotations

from pathlib import Path

from ..ir import nodes as ptx
from ..jit.toolchain import compile_ir, emit_later
from .check import check_code_object
from .codeobject import CodeObject, kernel_metadata
from .layout import place_params
from .link import link
from .lowering import lift_module
from .targets import Target, load_target


def _module(source: str | bytes | Path | ptx.Module, filename: str | None) -> ptx.Module:
    if isinstance(source, ptx.Module):
        return source
    if isinstance(source, Path):
        from .. import load
        return load(source)
    from .. import parse
    return parse(source, filename=filename)


def compile(source: str | bytes | Path | ptx.Module, target: str | Target = "gfx90a", *,
            filename: str | None = None, opt: int = 3, use_cache: bool | None = None) -> CodeObject:
    """Translate every kernel of a PTX module (text, a ``Path`` or a parsed module) into one
    code object for ``target`` (a name from ``isa/targets``: gfx90a, gfx1030, ...)."""
    tgt = target if isinstance(target, Target) else load_target(target)
    module = _module(source, filename)
    llvm_ir = lift_module(module, tgt)
    # The assembly listing is a second code generation: made only when asked for (obj.asm).
    res = compile_ir(llvm_ir, triple=tgt.triple, cpu=tgt.cpu, features=tgt.llvm_features, opt=opt,
                     emit=("obj",), later=("asm",), use_cache=use_cache)
    assert res.obj is not None
    hsaco = link(res.obj, use_cache=use_cache)
    params = {name: place_params(k) for name, k in module.kernels.items()}
    note = check_code_object(hsaco, tgt, params)
    by_name = {k.get(".name"): k for k in note["amdhsa.kernels"]}
    metadata = {name: kernel_metadata(by_name[name], [d.name for d in k.params])
                for name, k in module.kernels.items()}
    return CodeObject(tgt, hsaco, lambda: str(emit_later(res, "asm")), llvm_ir, metadata, note)
