"""Static resource checks: declarations that ask more than ``ptxvm.limits`` allows.

A module may be valid PTX and still ask for a terabyte of `.global` memory or a hundred
million registers; no executor can hold that, and trying costs a MemoryError after minutes.
``check_resources`` refuses such a module *before* anything is allocated or expanded, with a
``ResourceError`` located at the declaration that crosses the limit. It only adds up sizes and
counts (``%r<100000000>`` is one number here, never 10^8 names).

It is separate from ``verify_module`` on purpose: the verifier's diagnostics are cached with
the parsed module, while limits are the running process's (``PTXVM_LIMIT_*``, ``configure``),
so every executor and ``translate`` call this on the module they are about to use.
"""

from __future__ import annotations

from .. import limits as _limits
from ..errors import ResourceError
from .nodes import Function, Module, VarDecl
from .types import StateSpace


def check_resources(module: Module, lines: list[str] | None = None,
                    limits: _limits.Limits | None = None) -> None:
    """Raise ``ResourceError`` (at the declaration's file:line) for the first declaration
    that does not fit ``limits`` (default: ``ptxvm.limits.current()``)."""
    lim = limits or _limits.current()
    ctx = _Checker(lim, lines or [])
    module_shared = 0
    total_global = 0
    for item in module.items:
        if isinstance(item, VarDecl):
            size = item.size_bytes() or 0
            if item.space in (StateSpace.GLOBAL, StateSpace.CONST):
                ctx.check("allocation", size, f"`.{item.space.value}` variable `{item.name}`", item)
                total_global += size
                ctx.check("device_memory", total_global, "the module's `.global`/`.const` memory", item)
            elif item.space is StateSpace.SHARED:
                ctx.check("shared_per_block", size, f"`.shared` variable `{item.name}`", item)
                module_shared += size
                ctx.check("shared_per_block", module_shared, "the module's static `.shared` memory", item)
    for item in module.items:
        if isinstance(item, Function) and item.body is not None:
            _function(ctx, item, module_shared)


class _Checker:
    def __init__(self, limits: _limits.Limits, lines: list[str]) -> None:
        self.limits, self.lines = limits, lines

    def check(self, name: str, asked: int, what: str, decl: VarDecl) -> None:
        try:
            self.limits.check(name, asked, what)
        except ResourceError as e:
            span = decl.span
            line = span.line or None
            src = self.lines[line - 1] if line and 0 < line <= len(self.lines) else None
            raise ResourceError(e.message, filename=span.filename, line=line,
                                column=span.column if line else None, source_line=src) from None


def _function(ctx: _Checker, f: Function, module_shared: int) -> None:
    """Registers, `.local` frame and `.shared` of one function body (every nested scope)."""
    regs = local = 0
    shared = module_shared
    # A kernel's `.local` variables are its thread's own frame; a `.func`'s live on the call stack.
    local_limit = "local_per_thread" if f.is_kernel else "stack_per_thread"
    kind = "kernel" if f.is_kernel else "function"
    for st in f.body.walk():
        if not isinstance(st, VarDecl):
            continue
        if st.space is StateSpace.REG:
            regs += st.count if st.count is not None else 1
            ctx.check("registers_per_function", regs, f"the register file of {kind} `{f.name}` (`.reg` count)", st)
            continue
        size = st.size_bytes() or 0
        if st.space is StateSpace.LOCAL:
            ctx.check(local_limit, size, f"`.local` variable `{st.name}`", st)
            local += size
            ctx.check(local_limit, local, f"the `.local` frame of {kind} `{f.name}`", st)
        elif st.space is StateSpace.SHARED:
            ctx.check("shared_per_block", size, f"`.shared` variable `{st.name}`", st)
            shared += size
            ctx.check("shared_per_block", shared, f"the static `.shared` memory of {kind} `{f.name}`", st)
        elif st.space in (StateSpace.GLOBAL, StateSpace.CONST):
            ctx.check("allocation", size, f"`.{st.space.value}` variable `{st.name}`", st)
