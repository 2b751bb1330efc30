"""NaN-blind registers: where an f32 result's NaN canonicalisation cannot be observed.

Every f32 result is made the canonical NaN ``0x7fffffff`` when it is a NaN (PTX ISA §9.7.3:
single precision keeps no payloads), which costs a compare and a select per result.  A register
whose every read is a source of an f32 instruction of the ``nan-blind`` class (``add``, ``sub``,
``mul``, ``fma``, ``mad``, ``div``: their result is the canonical NaN for any NaN source;
``setp``: it only tests for NaN) never shows which NaN it holds, so a result stored into it may
keep its raw bits: the chained arithmetic of an accumulator is canonicalised once, where its
value leaves the chain.

The rule, per function, on the PTX (one rule for every target that lowers f32 this way):

* a read is any register an operand mentions that is not a destination of the instruction's
  form (``isa.operand_roles``), and the register of a guard;
* a read is *blind* when it is a plain register (no ``.x`` component) at one of the form's
  sources of the instruction type (``isa.nan_blind_sources``) of an instruction whose only type
  is ``.f32``;
* a register is NaN-blind when it is read at least once and every read of it is blind (by
  name: registers of one name in nested scopes count together).

A target uses the names for the registers of the function itself; a callee lowered inline has
its own registers and its own answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ir import nodes as ir
from ..ir.types import ScalarType
from ..isa import RoleKind, nan_blind_sources, operand_roles


def _registers(op: object) -> Iterator[str]:
    """Names of the registers an operand mentions (address bases, vector and list elements)."""
    t = type(op)
    if t is ir.Register:
        yield op.name
    elif t is ir.Negated:
        yield from _registers(op.operand)
    elif t is ir.Vector or t is ir.ParenList:
        for e in op.elements:
            yield from _registers(e)
    elif t is ir.Pair:
        yield from _registers(op.first)
        yield from _registers(op.second)
    elif t is ir.Address:
        yield from _registers(op.base)
        for e in op.extra:
            yield from _registers(e)


def _destinations(ins: ir.Instruction) -> frozenset[int]:
    """Operand indices the instruction's form writes (register, vector or pair destinations)."""
    roles = operand_roles(ins.opcode, ins.form)
    return frozenset(i for i, r in enumerate(roles) if r.kind is RoleKind.DST and i < len(ins.operands)
                     and type(ins.operands[i]) in (ir.Register, ir.Vector, ir.Pair, ir.Sink))


def nan_blind_registers(fn: ir.Function) -> frozenset[str]:
    """The NaN-blind registers of ``fn`` (see the module docstring)."""
    blind: set[str] = set()
    other: set[str] = set()
    for ins in fn.body.instructions() if fn.body is not None else ():
        sources = nan_blind_sources(ins.opcode) if ins.types == (ScalarType.F32,) else ()
        if ins.guard is not None:
            other.add(ins.guard.register.name)
        written = _destinations(ins)
        for i, op in enumerate(ins.operands):
            if i in written:
                continue
            if i in sources and type(op) is ir.Register and op.component is None:
                blind.add(op.name)
            else:
                other.update(_registers(op))
    return frozenset(blind - other)


@dataclass(frozen=True)
class NanBlindRegisters:
    """The analysis of one module: ``of(function name)`` -> its NaN-blind register names,
    computed on first use (a module may hold thousands of functions a launch never lowers)."""

    functions: Mapping[str, ir.Function]
    _known: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of_module(cls, module: ir.Module) -> NanBlindRegisters:
        return cls(module.functions)

    def of(self, name: str) -> frozenset[str]:
        known = self._known.get(name)
        if known is None:
            fn = self.functions.get(name)
            known = self._known[name] = nan_blind_registers(fn) if fn is not None else frozenset()
        return known

    def describe(self) -> str:
        """A stable text summary (what the golden tests compare): one line per function."""
        return "".join(f"{name}: {sorted(self.of(name))}\n" for name, f in self.functions.items()
                       if f.body is not None)


@dataclass(frozen=True, slots=True)
class NanBlindPass:
    name: str = "nan-blind"

    def apply(self, module: ir.Module, done: Mapping[str, Any]) -> NanBlindRegisters:
        return NanBlindRegisters.of_module(module)
