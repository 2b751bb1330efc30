"""Lifting a PTX module (one kernel and the functions it reaches) to an llvmlite module.

``lift_kernel`` is the entry point: it lowers the kernel and every `.func` it can call,
records a *site* for every instruction that can stop a thread (a fault, a barrier, a
warp exchange, a trap) so an executor can map a site id back to the instruction and its
source line, and returns the module text plus that table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from llvmlite import ir

from ..errors import UnsupportedError
from ..ir import nodes as ptx
from ..ir.calls_check import check_calls
from ..machine.mbarrier import WAIT_OPCODES as MBARRIER_WAITS
from ..passes import CallGraph, NanBlindRegisters
from .function import I8P, I32, FunctionLowering
from .hooks import TargetHooks


@dataclass(frozen=True)
class Site:
    """One instruction that can stop a thread, with where it came from."""

    index: int
    function: str
    instruction: ptx.Instruction
    loc: tuple[int, int, int] | None      # (.file index, line, column) of the nearest .loc


@dataclass
class LiftedModule:
    llvm_ir: str
    kernel: str                            # PTX name
    entry: str                             # LLVM name of the lowered kernel
    sites: list[Site] = field(default_factory=list)
    symbols: list[str] = field(default_factory=list)
    atomics: bool = False                  # atom/red present: their order is observable


class ModuleLowering:
    """Module-wide state: the llvmlite module, lowered functions, the site table."""

    def __init__(self, module: ptx.Module, hooks: TargetHooks, layout) -> None:
        self.module, self.hooks, self.layout = module, hooks, layout
        self.llmod = ir.Module(name=module.filename or "ptx")
        if hooks.triple:
            self.llmod.triple = hooks.triple
        if hooks.data_layout:
            self.llmod.data_layout = hooks.data_layout
        self.sites: list[Site] = []
        self.functions: dict[str, ir.Function] = {}
        # ``module.functions`` builds a new dict per use: look functions up in one copy (a
        # module of 20,000 kernels made every call site a pass over all of them).
        self.ptx_functions: dict[str, ptx.Function] = module.functions
        self._calls_checked: set[str] = set()
        self._synchronises: dict[str, bool] = {}
        self._pending: list[tuple[ptx.Function, ir.Function]] = []
        self.current: FunctionLowering | None = None
        self.symbols: list[str] = []            # module symbols whose addresses the launch supplies
        self.may_spin = _may_spin(module)        # could a thread wait for another without a barrier?
        self.nan_blind = NanBlindRegisters(self.ptx_functions)    # per function, on first use
        self._atomics: bool | None = None

    def symbol_index(self, name: str) -> int | None:
        """Index of a global/const variable or function in the launch's symbol-address table."""
        if name not in self.layout.globals and name not in self.layout.functions:
            return None
        if name not in self.symbols:
            self.symbols.append(name)
        return self.symbols.index(name)

    # ------------------------------------------------------------------ errors
    def unsupported(self, ins: ptx.Instruction | None, why: str) -> UnsupportedError:
        if ins is None:
            return UnsupportedError(why)
        span = ins.span
        return UnsupportedError(f"`{ins}` {why} (target {self.hooks.name})", filename=span.filename,
                                line=span.line or None, column=span.column or None)

    def site(self, fl: FunctionLowering, ins: ptx.Instruction) -> int:
        self.sites.append(Site(len(self.sites) + 1, fl.fn.name, ins, fl.loc))
        return len(self.sites)

    # ------------------------------------------------------------------ functions
    def device_function(self, name: str, ins: ptx.Instruction) -> ir.Function:
        """The LLVM function for `.func name`, declared now and lowered later."""
        fn = self.functions.get(name)
        if fn is not None:
            return fn
        f = self.ptx_functions.get(name)
        if f is None or f.body is None:
            raise self.unsupported(ins, f"calls `{name}`, which has no body in this module")
        ptrs = [I8P] * (len(f.returns) + len(f.params))
        fty = ir.FunctionType(I32, self.hooks.function_prefix_args() + ptrs)
        fn = ir.Function(self.llmod, fty, name=f"ptx_func_{_mangle(name)}")
        fn.linkage = "internal"
        self.functions[name] = fn
        self._pending.append((f, fn))
        return fn

    def check_calls(self, f: ptx.Function) -> None:
        """Refuse a call in ``f`` whose arguments do not match its callee (a located
        PtxSemanticError, the verifier's own check), once per function."""
        if f.name not in self._calls_checked:
            check_calls(self.module, only=(f,), functions=self.ptx_functions)
            self._calls_checked.add(f.name)

    def synchronises(self, f: ptx.Function) -> bool:
        """Whether ``f`` (or anything it may call, ``passes.CallGraph``'s rule) stops threads: a
        CTA or warp synchronisation, or a builtin the target stops threads for (the host JIT:
        printf). Such functions are inlined on targets that run threads as state machines."""
        if self.hooks.inline_synchronising is False:
            return False
        known = self._synchronises.get(f.name)
        if known is None:
            graph = self.callgraph
            known = f.name in graph.facts and (
                graph.any_in_reach(f.name, "cta_sync") or graph.any_in_reach(f.name, "warp_sync")
                or bool(graph.externals(f.name) & self.hooks.stopping_builtins))
            self._synchronises[f.name] = known
        return known

    @cached_property
    def callgraph(self) -> CallGraph:
        return CallGraph.of(self.module)

    def return_from(self, fl: FunctionLowering) -> None:
        """`ret` in a device function: status 0 (continue in the caller)."""
        done = getattr(self.hooks, "function_return", None)
        if done is not None:
            done(fl)
        fl.b.ret(I32(0))

    def lower(self, kernel: ptx.Function, *, text: bool = True) -> LiftedModule:
        """Lower ``kernel`` and what it calls. ``text=False``: leave ``llvm_ir`` empty (a caller
        lowering several kernels into one module prints the module once, at the end)."""
        entry = ir.Function(self.llmod, self.hooks.kernel_signature(), name=f"ptx_kernel_{_mangle(kernel.name)}")
        fl = FunctionLowering(self, kernel, entry, {})
        self.current = fl
        fl.lower_body()
        while self._pending:
            f, fn = self._pending.pop()
            nprefix = len(self.hooks.function_prefix_args())
            args = fn.args[nprefix:]
            names = [d.name for d in (*f.returns, *f.params)]
            sub = FunctionLowering(self, f, fn, dict(zip(names, args)))
            self.current = sub
            sub.lower_body()
        finish = getattr(self.hooks, "finish_module", None)
        if finish is not None:
            finish(self, entry)
        if self._atomics is None:            # the same for every kernel lowered with this object
            self._atomics = any(i.opcode in ("atom", "red") for f in self.ptx_functions.values()
                                if f.body is not None for i in f.body.instructions())
        if text:
            shorten_local_names(self.llmod)
        return LiftedModule(str(self.llmod) if text else "", kernel.name, entry.name, self.sites, self.symbols,
                            self._atomics)


def _may_spin(module: ptx.Module) -> bool:
    """Whether a thread could busy-wait on another thread's write: only through volatile,
    atomic or acquiring accesses (or nanosleep); anything else waiting on a plain load is a
    data race the ISA leaves undefined."""
    for f in module.functions.values():
        if f.body is None:
            continue
        for ins in f.body.instructions():
            if ins.opcode in ("atom", "red", "nanosleep") or ins.opcode in MBARRIER_WAITS:
                return True
            if ins.opcode in ("ld", "ldu") and any(m in ins.modifiers for m in ("volatile", "relaxed", "acquire")):
                return True
    return False


# LLVM truncates the names of local values (registers, blocks, arguments) to 1,024 characters
# (NonGlobalValueMaxNameSize), so two PTX registers that differ after that point would be one
# name twice ("multiple definition of local value"). Local names are only a reading aid: keep
# their start and let llvmlite's per-function scope make them unique. Globals keep their names.
LOCAL_NAME_MAX = 64


def shorten_local_names(llmod: ir.Module, limit: int = LOCAL_NAME_MAX) -> None:
    """Give every local value of ``llmod`` named beyond ``limit`` characters a short unique
    name (run before the module is printed)."""
    for fn in llmod.functions:
        renamed = False
        for v in _locals(fn):
            if len(v.name) > limit:
                v.name = v.name[:limit]        # the setter deduplicates within the function
                renamed = True
        if renamed:                            # llvmlite caches printed text: drop what is stale
            for v in _locals(fn):
                v.__dict__.pop("_StringReferenceCaching__cached_refstr", None)
                v.__dict__.pop("_StrCaching__cached_str", None)


def _locals(fn: ir.Function):
    yield from fn.args
    for block in fn.blocks:
        yield block
        yield from block.instructions


def _mangle(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else f"_{ord(c):x}_" for c in name)


def lift_kernel(module: ptx.Module, kernel: str, hooks: TargetHooks, layout) -> LiftedModule:
    f = module.kernels[kernel]
    return ModuleLowering(module, hooks, layout).lower(f)
