"""Turn a kernel and the functions it can call into one Program of flat ops.

The kernel's ops come first, then every `.func` with a body; labels become
PCs within their function; registers and per-thread `.param` variables get
function- and scope-unique storage keys.
"""

from __future__ import annotations

from ..ir import nodes as ir
from ..isa import OpClass, opcodes_in
from ..passes import CallGraph
from ..ir.types import ScalarType, StateSpace
from .ops import formulas, load_all
from ..errors import UnsupportedError
from ..machine.symbols import Symbols
from .program import CompileContext, Control, Op, Program, reader


WARP_SYNC = opcodes_in(OpClass.WARP_SYNC)


def compile_kernel(module: ir.Module, kernel: ir.Function, symbols: Symbols) -> Program:
    impls = load_all()
    functions = reachable(module, kernel)
    # Pass 1: entry PCs of every function.
    entries: dict[str, int] = {}
    pc = 0
    for f in functions:
        entries[f.name] = pc
        pc += sum(1 for s in f.body.walk() if isinstance(s, ir.Instruction))
    ops: list[Op] = []
    keys: dict[str, list[tuple[str, str]]] = {}
    for f in functions:
        ctx = CompileContext(module, kernel, symbols, f, entries)
        fpc = entries[f.name]
        for s in f.body.walk():
            if isinstance(s, ir.Label):
                ctx.labels[s.name] = fpc
            elif isinstance(s, ir.BranchTargets):
                ctx.branch_targets[s.name] = s.targets
            elif isinstance(s, ir.Instruction):
                fpc += 1
        for p in (*f.returns, *f.params):
            # A kernel's .param values live in the launch's shared param block, not per thread.
            if f is not kernel or p.space is StateSpace.REG:
                ctx.declare(p)
        loc: list = [None]
        ctx.lenient = f is not kernel
        _block(ctx, impls, f.body, ops, loc, top=True)
        keys[f.name] = _storage_keys(ctx)
    files = {i.index: i.path for i in module.items if isinstance(i, ir.FileDirective)}
    prog = Program(kernel, ops, symbols, files)
    prog.entries = entries
    prog.function_keys = keys
    prog.functions = {f.name: f for f in functions}
    return prog


def reachable(module: ir.Module, kernel: ir.Function) -> list[ir.Function]:
    """The kernel and every function it may call (``passes.CallGraph``'s rule: directly, or
    through an address: any address-taken function behind an indirect call)."""
    graph = CallGraph.of(module)
    return [graph.functions[n] for n in graph.reachable(kernel.name)]


def _block(ctx: CompileContext, impls, block: ir.Block, ops: list[Op], loc: list, top: bool = False) -> None:
    if not top:
        ctx.scopes.append({})
    for s in block.statements:
        if isinstance(s, ir.VarDecl):
            if s.space in (StateSpace.REG, StateSpace.PARAM):
                ctx.declare(s)
        elif isinstance(s, ir.Loc):
            loc[0] = (s.file, s.line, s.column)
        elif isinstance(s, ir.Block):
            _block(ctx, impls, s, ops, loc)
        elif isinstance(s, ir.Instruction):
            ops.append(_op(ctx, impls, s, len(ops), loc[0]))
    if not top:
        ctx.all_scopes.append(ctx.scopes.pop())


def _storage_keys(ctx: CompileContext) -> list[tuple[str, str]]:
    """Every register / param-variable key of a function (what a call must save for recursion)."""
    out = []
    for scope in [*ctx.scopes, *getattr(ctx, "all_scopes", [])]:
        for key, t, count, kind, size in scope.values():
            if kind == "reg" and count is not None:
                out.extend((f"{key}{i}", "reg") for i in range(count))
            else:
                out.append((key, kind))
    return out


def _op(ctx: CompileContext, impls, ins: ir.Instruction, pc: int, loc) -> Op:
    build = impls.get(ins.opcode)
    try:
        if build is None:
            raise ctx.unsupported(ins, "is not supported by the interpreter yet")
        xins = ctx.expand_vectors(ins)          # whole vector registers as their `{...}` elements
        run, control, target = build(ctx, xins)
        if control == Control.NEXT and run is not None:
            run = formulas.wrap(ctx, xins, run)
    except UnsupportedError as e:
        if not getattr(ctx, "lenient", False):
            raise
        # A function reachable only through an address (a vtable slot, say) may never run:
        # refuse at the moment it does, not for the whole kernel.
        def refuse(b, lanes, e=e):
            raise e
        run, control, target = refuse, Control.NEXT, -1
    op = Op(pc, ins, run, control, target, loc)
    op.warp_sync = ins.opcode in WARP_SYNC
    if hasattr(run, "set_pc"):
        run.set_pc(pc)
    if ins.guard is not None:
        op.guard = reader(ctx, ins.guard.register, ScalarType.PRED, ins)
        op.guard_negated = ins.guard.negated
    return op
