"""Whole vector registers as brace lists: a rewrite the lifter runs before lowering a function.

A `.v2`/`.v4` register (PTX ISA 9.0 §5.4.2) is its elements; used without an element selector
it is the operand of a vector `ld`/`st`/`tex`/... of its width, or of a `mov` of its whole size
(the verifier has checked which).  Written as ``{v.x, v.y, ...}`` instead, it takes the path
every vector operand already takes, and each element is an ordinary scalar register ``v.x``.

Scopes are honoured: a nested block's scalar declaration shadows an outer vector of the same
name.  Call argument and result lists keep their registers whole (their binding copies bytes).
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import nodes as ir
from ..ir.types import StateSpace

COMPONENTS = "xyzw"             # the frontend writes `.r .g .b .a` as these

# name -> element count (0: a scalar that shadows an outer vector)
_Scope = dict[str, int]


def declares_vectors(fn: ir.Function) -> bool:
    decls = [*fn.params, *fn.returns, *(s for s in (fn.body.walk() if fn.body else ()) if isinstance(s, ir.VarDecl))]
    return any(d.vector and d.space is StateSpace.REG for d in decls)


def expand_vector_registers(fn: ir.Function) -> ir.Function:
    """``fn`` with every whole vector register operand written as its elements (``fn`` itself
    when it declares no vector register)."""
    if fn.body is None or not declares_vectors(fn):
        return fn
    top: _Scope = {}
    for d in (*fn.returns, *fn.params):
        if d.space is StateSpace.REG:
            _declare(top, d)
    return replace(fn, body=_block(fn.body, [top]))


def elements(reg: ir.Register, width: int) -> ir.Vector:
    return ir.Vector(tuple(ir.Register(reg.name, c) for c in COMPONENTS[:width]))


def _declare(scope: _Scope, d: ir.VarDecl) -> None:
    for name in d.register_names():
        scope[name] = d.vector or 0


def _width(scopes: list[_Scope], name: str) -> int:
    for scope in reversed(scopes):
        if name in scope:
            return scope[name]
    return 0


def _block(block: ir.Block, scopes: list[_Scope]) -> ir.Block:
    scopes = [*scopes, {}]
    out: list[ir.Statement] = []
    for s in block.statements:
        if isinstance(s, ir.VarDecl) and s.space is StateSpace.REG:
            _declare(scopes[-1], s)
        elif isinstance(s, ir.Block):
            s = _block(s, scopes)
        elif isinstance(s, ir.Instruction):
            s = _instruction(s, scopes)
        out.append(s)
    return replace(block, statements=tuple(out))


def _instruction(ins: ir.Instruction, scopes: list[_Scope]) -> ir.Instruction:
    ops = []
    for op in ins.operands:
        if isinstance(op, ir.Register) and op.component is None:
            width = _width(scopes, op.name)
            if width:
                op = elements(op, width)
        ops.append(op)
    ops_t = tuple(ops)
    return ins if ops_t == ins.operands else replace(ins, operands=ops_t)
