"""Turn a kernel (ir.Function) into a Program: flat ops with PCs, labels resolved."""

from __future__ import annotations

from ..ir import nodes as ir
from ..ir.types import ScalarType
from .ops import load_all
from .program import CompileContext, Op, Program, Symbols, reader


def compile_kernel(module: ir.Module, kernel: ir.Function, symbols: Symbols) -> Program:
    impls = load_all()
    ctx = CompileContext(module, kernel, symbols)
    assert kernel.body is not None
    # Pass 1: PCs of instructions and labels (labels are function-wide).
    pc = 0
    for s in kernel.body.walk():
        if isinstance(s, ir.Label):
            ctx.labels[s.name] = pc
        elif isinstance(s, ir.Instruction):
            pc += 1
    for p in kernel.params:
        if p.space.value == "reg":
            ctx.declare(p)
    ops: list[Op] = []
    loc: list[tuple[int, int, int] | None] = [None]

    def block_inner(b: ir.Block) -> None:
        for s in b.statements:
            if isinstance(s, ir.VarDecl):
                if s.space.value == "reg":
                    ctx.declare(s)
            elif isinstance(s, ir.Loc):
                loc[0] = (s.file, s.line, s.column)
            elif isinstance(s, ir.Block):
                ctx.scopes.append({})
                block_inner(s)
                ctx.scopes.pop()
            elif isinstance(s, ir.Instruction):
                ops.append(_op(ctx, impls, s, len(ops), loc[0]))

    block_inner(kernel.body)
    files = {i.index: i.path for i in module.items if isinstance(i, ir.FileDirective)}
    return Program(kernel, ops, symbols, files)


def _op(ctx: CompileContext, impls, ins: ir.Instruction, pc: int, loc) -> Op:
    build = impls.get(ins.opcode)
    if build is None:
        raise ctx.unsupported(ins, "is not supported by the interpreter yet")
    run, control, target = build(ctx, ins)
    op = Op(pc, ins, run, control, target, loc)
    if ins.guard is not None:
        op.guard = reader(ctx, ins.guard.register, ScalarType.PRED, ins)
        op.guard_negated = ins.guard.negated
    else:
        op.guard = None
        op.guard_negated = False
    return op
