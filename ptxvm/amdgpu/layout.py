"""Where a PTX module's variables live in an AMD GPU code object.

Unlike the interpreter's launch layout (one flat window per state space), a code object
gives every variable its own LLVM global so the compiler sees what each kernel uses:

* kernel `.param`s are kernel arguments in the kernarg segment, at the offsets PTX gives
  them (each aligned to its `.align` or element size, which is also LLVM's rule for
  ``byref`` arguments; the metadata check after linking confirms it);
* `.shared` variables are LDS globals (addrspace 3), one per name, so each kernel's
  LDS size counts only what it reaches; every `.extern .shared` array is the one dynamic
  LDS block that follows the static ones;
* `.global` / `.const` variables are addrspace(1) / addrspace(4) globals;
* `.local` variables are a per-function frame in private memory (addrspace 5), so a
  recursive `.func` gets a fresh copy per activation, as in the interpreter.
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass, field

from ..ir import nodes as ptx
from ..ir.types import StateSpace


def _align_of(d: ptx.VarDecl) -> int:
    return d.align or max(d.element_bytes(), 1)


@dataclass(frozen=True)
class Frame:
    """A function's `.local` variables: offsets in its private frame."""

    offsets: dict[str, int]
    size: int
    align: int


@dataclass
class KernelParams:
    """One kernel's `.param` list placed as PTX (and the kernarg segment) lays it out."""

    decls: list[ptx.VarDecl]
    offsets: dict[str, int]
    size: int

    def containing(self, offset: int) -> tuple[ptx.VarDecl, int] | None:
        """The parameter holding byte ``offset`` and the offset inside it."""
        for d in self.decls:
            at = self.offsets[d.name]
            if at <= offset < at + max(d.size_bytes() or 0, 1):
                return d, offset - at
        return None


def place_params(kernel: ptx.Function) -> KernelParams:
    offsets: dict[str, int] = {}
    at = 0
    for d in kernel.params:
        a = _align_of(d)
        at = (at + a - 1) // a * a
        offsets[d.name] = at
        at += d.size_bytes() or 0
    return KernelParams(list(kernel.params), offsets, at)


@dataclass
class ModuleLayout:
    """Module-wide placement; ``for_kernel`` gives the object the lifter reads (``.params``)."""

    shared: dict[str, ptx.VarDecl] = field(default_factory=dict)     # static `.shared`
    extern_shared: set[str] = field(default_factory=set)              # `.extern .shared` names
    variables: dict[str, ptx.VarDecl] = field(default_factory=dict)  # module `.global` / `.const`
    frames: dict[str, Frame] = field(default_factory=dict)            # function name -> locals
    module_locals: set[str] = field(default_factory=set)              # module-scope `.local` (refused)

    def for_kernel(self, kernel: ptx.Function) -> KernelLayout:
        return KernelLayout(self, place_params(kernel))


@dataclass
class KernelLayout:
    module: ModuleLayout
    kernel_params: KernelParams

    # The names the shared lowering reads from a layout object.
    @property
    def params(self) -> dict[str, int]:
        return self.kernel_params.offsets

    @property
    def globals(self) -> dict[str, ptx.VarDecl]:
        return self.module.variables

    @property
    def functions(self) -> dict[str, int]:
        return {}


def module_layout(module: ptx.Module) -> ModuleLayout:
    lay = ModuleLayout()

    def shared(d: ptx.VarDecl) -> None:
        if d.size_bytes() is None or (d.linkage is not None and d.linkage.value == "extern"):
            lay.extern_shared.add(d.name)
        else:
            # Function-scope `.shared` arrays of one name in several kernels share one LDS global:
            # it must be the largest of them (the last one seen could be smaller).
            known = lay.shared.get(d.name)
            if known is not None:
                big = d if (d.size_bytes() or 0) > (known.size_bytes() or 0) else known
                align = max(_align_of(d), _align_of(known))
                d = big if _align_of(big) == align else dataclasses.replace(big, align=align)
            lay.shared[d.name] = d

    for d in module.items:
        if not isinstance(d, ptx.VarDecl):
            continue
        if d.space is StateSpace.SHARED:
            shared(d)
        elif d.space in (StateSpace.GLOBAL, StateSpace.CONST):
            lay.variables[d.name] = d
        elif d.space is StateSpace.LOCAL:
            lay.module_locals.add(d.name)
    for f in module.functions.values():
        if f.body is None:
            continue
        offsets: dict[str, int] = {}
        end, align = 0, 16
        for st in f.body.walk():
            if not isinstance(st, ptx.VarDecl):
                continue
            if st.space is StateSpace.SHARED:
                shared(st)
            elif st.space is StateSpace.LOCAL:
                a = _align_of(st)
                end = (end + a - 1) // a * a
                offsets[st.name] = end
                end += st.size_bytes() or 0
                align = max(align, a)
            elif st.space in (StateSpace.GLOBAL, StateSpace.CONST):
                lay.variables[st.name] = st
        lay.frames[f.name] = Frame(offsets, (end + align - 1) // align * align, align)
    return lay
