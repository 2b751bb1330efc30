"""Bind `%`-less names to the `.reg` declarations in scope (inline PTX from CUB/Thrust).

PTX identifiers need no `%` (PTX ISA 9.0 §4.4): `{ .reg .u32 r0; .reg .pred p; ... r0|p ... }`
declares registers whose uses the operand parser cannot tell from variables, labels or
functions. After a function is parsed this pass walks its scopes in order and turns each
Symbol that names a register visible at that point (a `.reg` declaration, a member `a3` of
`.reg .u32 a<4>`, a `.reg` parameter) into a Register, honouring nested `{ }` scopes that
shadow outer names. Names that are not registers stay Symbols for the verifier to resolve.
"""

from __future__ import annotations

from dataclasses import replace

from ..ir.nodes import (
    Address, Block, Function, Instruction, Negated, Offset, Pair, ParenList, Register, Symbol, VarDecl,
    Vector,
)
from ..ir.scopes import Scope
from ..ir.types import StateSpace



class _Scopes:
    """The scope stack of one function walk (``ir.scopes``); a name is a register when the
    declaration it resolves to is a ``.reg``."""

    def __init__(self) -> None:
        self.top = Scope()

    def push(self) -> None:
        self.top = self.top.child()

    def pop(self) -> None:
        assert self.top.parent is not None
        self.top = self.top.parent

    def declare(self, d: VarDecl) -> None:
        self.top.declare(d)

    def is_register(self, name: str) -> bool:
        d = self.top.lookup(name)
        return d is not None and d.space is StateSpace.REG


def bind_registers(f: Function) -> Function:
    scopes = _Scopes()
    for p in (*f.returns, *f.params):
        scopes.declare(p)
    if f.body is None:
        return f
    return replace(f, body=_block(f.body, scopes, top=True))


def _block(block: Block, scopes: _Scopes, top: bool = False) -> Block:
    if not top:
        scopes.push()
    out = []
    for s in block.statements:
        if isinstance(s, VarDecl):
            scopes.declare(s)
        elif isinstance(s, Instruction):
            s = _instruction(s, scopes)
        elif isinstance(s, Block):
            s = _block(s, scopes)
        out.append(s)
    if not top:
        scopes.pop()
    return replace(block, statements=tuple(out))


def _instruction(ins: Instruction, scopes: _Scopes) -> Instruction:
    operands = tuple(_bind(o, scopes) for o in ins.operands)
    if operands == ins.operands:
        return ins
    return replace(ins, operands=operands)


def _bind(op, scopes: _Scopes):
    t = type(op)
    if t is Symbol:
        return Register(op.name) if scopes.is_register(op.name) else op
    if t is Vector:
        return Vector(tuple(_bind(e, scopes) for e in op.elements))
    if t is ParenList:
        return ParenList(tuple(_bind(e, scopes) for e in op.elements))
    if t is Pair:
        return Pair(_bind(op.first, scopes), _bind(op.second, scopes))
    if t is Negated:
        return Negated(_bind(op.operand, scopes))
    if t is Offset:
        return Offset(_bind(op.base, scopes), op.offset)
    if t is Address and type(op.base) is Symbol:
        return Address(_bind(op.base, scopes), op.offset, tuple(_bind(e, scopes) for e in op.extra))
    if t is Address and op.extra:
        return Address(op.base, op.offset, tuple(_bind(e, scopes) for e in op.extra))
    return op


__all__ = ["bind_registers"]
