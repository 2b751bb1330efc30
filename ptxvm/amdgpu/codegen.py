"""PTX -> AMD GPU code object: lift, optimise and compile (LLVM worker), link, verify.

    obj = compile(ptx_text, target="gfx90a")
    obj.hsaco, obj.asm, obj.llvm_ir, obj.metadata, obj.save("k.hsaco")

Each step fails with a ptxvm error, never a wrong object: an instruction the target cannot
translate is an ``UnsupportedError`` naming it and its source line; an LLVM failure or
crash, a link error, or a code object that does not match the module (kernels, argument
layout, machine, code-object version) is a ``CodegenError``; without the optional ziglang
package (``pip install 'ptxvm[amdgpu]'``) linking is a ``LinkerMissingError``, while
``compile_unlinked`` (LLVM IR, assembly) still works.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from collections.abc import Sequence

from ..ir import nodes as ptx
from ..ir.resources import check_resources
from ..backend.toolchain import compile_ir, emit_later
from . import objcache
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


class Unlinked:
    """A module lowered and compiled for a target, before linking: the LLVM IR, the
    relocatable object and (made on first use) the assembly listing."""

    def __init__(self, target: Target, module: ptx.Module, llvm_ir: str, result) -> None:
        self.target, self.module, self.llvm_ir, self._result = target, module, llvm_ir, result

    @property
    def obj(self) -> bytes:
        assert self._result.obj is not None
        return self._result.obj

    def asm(self) -> str:
        return str(emit_later(self._result, "asm"))


def compile_unlinked(source: str | bytes | Path | ptx.Module, target: str | Target = "gfx90a", *,
                     filename: str | None = None, opt: int = 3, use_cache: bool | None = None) -> Unlinked:
    """Lift, optimise and compile every kernel of a PTX module, without linking: what
    ``--emit-llvm``/``--emit-asm`` need, which works without the ziglang package."""
    tgt = target if isinstance(target, Target) else load_target(target)
    module = _module(source, filename)
    check_resources(module)          # absurd declarations: a ResourceError, not a MemoryError in the lifter
    llvm_ir = lift_module(module, tgt)
    # The assembly listing is a second code generation: made only when asked for (obj.asm).
    res = compile_ir(llvm_ir, triple=tgt.triple, cpu=tgt.cpu, features=tgt.llvm_features, opt=opt,
                     emit=("obj",), later=("asm",), use_cache=use_cache)
    return Unlinked(tgt, module, llvm_ir, res)


def link_unlinked(u: Unlinked, *, use_cache: bool | None = None) -> CodeObject:
    """Link and verify a compiled module into its code object (LinkerMissingError without
    the ziglang package)."""
    module, tgt = u.module, u.target
    hsaco = link(u.obj, use_cache=use_cache)
    params = {name: place_params(k) for name, k in module.kernels.items()}
    note = check_code_object(hsaco, tgt, params)
    by_name = {k.get(".name"): k for k in note["amdhsa.kernels"]}
    metadata = {name: kernel_metadata(by_name[name], [d.name for d in k.params])
                for name, k in module.kernels.items()}
    return CodeObject(tgt, hsaco, u.asm, u.llvm_ir, metadata, note)


def compile(source: str | bytes | Path | ptx.Module, target: str | Target | Sequence[str | Target] = "gfx90a", *,
            filename: str | None = None, opt: int = 3, use_cache: bool | None = None):
    """Translate every kernel of a PTX module (text, a ``Path`` or a parsed module) into one
    code object for ``target`` (a name from ``isa/targets``: gfx90a, gfx1030, ...), or, for a
    list of targets, a ``CodeObjectBundle`` of one code object each (an offload bundle)."""
    if not isinstance(target, (str, Target)):
        from .bundle import CodeObjectBundle
        names = [t if isinstance(t, Target) else load_target(t) for t in target]
        if not names:
            raise ValueError("compile(target=[]): give at least one target")
        module = _module(source, filename)
        return CodeObjectBundle({t.name: compile(module, t, opt=opt, use_cache=use_cache) for t in names})
    tgt = target if isinstance(target, Target) else load_target(target)
    key = _object_key(source, filename, tgt, opt, use_cache)
    if key is not None:
        hit = objcache.get(key)
        if hit is not None:
            hsaco, llvm_ir, metadata, note = hit
            # The listing is a second code generation, deferred as on a miss (LLVM's cache has it
            # if it was made before).
            return CodeObject(tgt, hsaco, lambda: compile_unlinked(source, tgt, filename=filename, opt=opt,
                                                                   use_cache=use_cache).asm(),
                              llvm_ir, metadata, note)
    if key is None:
        return link_unlinked(compile_unlinked(source, tgt, filename=filename, opt=opt, use_cache=use_cache),
                             use_cache=use_cache)
    # A translation that warned is not stored: a hit would not warn again.
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            obj = link_unlinked(compile_unlinked(source, tgt, filename=filename, opt=opt, use_cache=use_cache),
                                use_cache=use_cache)
        finally:
            caught = list(said)
    for w in caught:     # now, under the caller's filters
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    if not caught:
        objcache.put(key, obj.hsaco, obj.llvm_ir, obj.metadata, obj.note)
    return obj


def _object_key(source: str | bytes | Path | ptx.Module, filename: str | None, tgt: Target, opt: int,
                use_cache: bool | None) -> str | None:
    """The whole-translation cache key of PTX text (a parsed module has none: not cached)."""
    from ..diskcache import cache_enabled
    if isinstance(source, ptx.Module) or not cache_enabled(use_cache):
        return None
    if isinstance(source, Path):
        try:
            text, filename = source.read_bytes(), str(source)
        except OSError:
            return None             # compile_unlinked reports it
    else:
        text = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else bytes(source)
    # Every field (a test's dataclasses.replace(target, ...) keeps the name), sets in order.
    fields = {f.name: getattr(tgt, f.name) for f in dataclasses.fields(tgt)}
    described = repr({k: sorted(v) if isinstance(v, frozenset) else v for k, v in fields.items()})
    return objcache.key(text, filename, described, opt)
