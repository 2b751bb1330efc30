"""Per-kernel resource summaries of a Module: what ``ptxvm check`` prints.

Pure functions of the IR. Memory use is computed from declarations, the way
ptxas would lay them out before optimisation:

* **shared**: ``.shared`` variables declared at module scope and referenced by
  the kernel or any function it calls (directly or through other functions),
  plus ``.shared`` variables declared inside those functions; each placed at
  its alignment. ``.extern .shared`` arrays (unsized) are dynamic shared memory:
  listed by name, sized at launch.
* **local**: ``.local`` declarations inside the kernel's own body (its stack
  frame, e.g. ``__local_depot``); callees' frames are not added.
* **const**: module-scope ``.const`` variables referenced by the kernel or its
  callees.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Iterator

from ..ir.nodes import Block, Function, Instruction, Module, VarDecl
from ..ir.types import StateSpace
from .callgraph import CallGraph, operand_symbols


@dataclass(frozen=True, slots=True)
class ParamInfo:
    name: str
    type: str                   # PTX type name without the dot: "u64", "b8", ...
    size: int | None            # bytes; None for an unsized array
    align: int                  # explicit .align, else the element size
    ptr_space: str | None = None    # `.ptr .global` -> "global"
    array: tuple[int | None, ...] = ()

    def as_json(self) -> dict:
        return {"name": self.name, "type": self.type, "size": self.size, "align": self.align,
                "ptr_space": self.ptr_space, "array": list(self.array)}

    def describe(self) -> str:
        text = f".{self.type}"
        if self.ptr_space:
            text += f" .ptr .{self.ptr_space}"
        dims = "".join(f"[{d if d is not None else ''}]" for d in self.array)
        return f"{text} {self.name}{dims}"


@dataclass(frozen=True, slots=True)
class KernelSummary:
    name: str
    params: tuple[ParamInfo, ...]
    param_bytes: int
    shared_bytes: int                       # static shared memory
    shared_vars: tuple[str, ...]            # names of the static .shared variables counted
    dynamic_shared: tuple[str, ...]         # `.extern .shared` arrays: sized at launch
    local_bytes: int
    const_bytes: int
    const_vars: tuple[str, ...]
    registers: tuple[tuple[str, int], ...]  # (type, count), sorted by type name
    instruction_count: int
    opcodes: tuple[tuple[str, int], ...]        # base opcode -> count, most frequent first
    full_opcodes: tuple[tuple[str, int], ...]   # dotted opcode -> count, most frequent first
    directives: tuple[tuple[str, tuple[int, ...]], ...]
    calls: tuple[str, ...]                  # functions called directly (transitively reachable not included)
    indirect_calls: int = 0
    line: int | None = None

    @property
    def register_total(self) -> int:
        return sum(n for _, n in self.registers)

    @property
    def calls_functions(self) -> bool:
        return bool(self.calls) or self.indirect_calls > 0

    def as_json(self) -> dict:
        return {
            "name": self.name,
            "line": self.line,
            "params": [p.as_json() for p in self.params],
            "param_bytes": self.param_bytes,
            "shared_bytes": self.shared_bytes,
            "shared_vars": list(self.shared_vars),
            "dynamic_shared": list(self.dynamic_shared),
            "local_bytes": self.local_bytes,
            "const_bytes": self.const_bytes,
            "const_vars": list(self.const_vars),
            "registers": dict(self.registers),
            "register_total": self.register_total,
            "instruction_count": self.instruction_count,
            "opcodes": dict(self.opcodes),
            "full_opcodes": dict(self.full_opcodes),
            "directives": {name: list(values) for name, values in self.directives},
            "calls": list(self.calls),
            "indirect_calls": self.indirect_calls,
            "calls_functions": self.calls_functions,
        }


# ------------------------------------------------------------------ helpers

def _align_of(d: VarDecl) -> int:
    return d.align or d.element_bytes()


def _layout(decls: Iterable[VarDecl]) -> int:
    """Bytes taken by ``decls`` placed in order, each at its alignment (unsized ones skipped)."""
    offset = 0
    for d in decls:
        size = d.size_bytes()
        if size is None:
            continue
        a = max(_align_of(d), 1)
        offset = (offset + a - 1) // a * a + size
    return offset


def _body_decls(body: Block | None) -> Iterator[VarDecl]:
    if body is not None:
        for s in body.walk():
            if type(s) is VarDecl:
                yield s


def _instructions(body: Block | None) -> Iterator[Instruction]:
    if body is not None:
        for s in body.walk():
            if type(s) is Instruction:
                yield s


def _symbols(fn: Function) -> frozenset[str]:
    """Every symbol ``fn``'s instructions name (variables, functions, labels)."""
    return frozenset(n for ins in _instructions(fn.body) for op in ins.operands for n in operand_symbols(op))


# ------------------------------------------------------------------ public

def param_info(d: VarDecl) -> ParamInfo:
    return ParamInfo(d.name, d.type.value, d.size_bytes(), _align_of(d),
                     d.ptr_space.value if d.ptr_space is not None else None, d.array)


def register_counts(fn: Function) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for d in _body_decls(fn.body):
        if d.space is StateSpace.REG:
            counts[d.type.value] += d.count if d.count is not None else 1
    return dict(sorted(counts.items()))


def opcode_histograms(fn: Function) -> tuple[Counter[str], Counter[str]]:
    base: Counter[str] = Counter()
    full: Counter[str] = Counter()
    for ins in _instructions(fn.body):
        base[ins.opcode] += 1
        full[ins.full_opcode] += 1
    return base, full


def summarize_function(module: Module, fn: Function, *, _graph: CallGraph | None = None,
                       _syms: dict[str, frozenset[str]] | None = None) -> KernelSummary:
    graph = _graph if _graph is not None else CallGraph.of(module)
    syms = _syms if _syms is not None else {}
    # What the kernel may reach (passes.CallGraph's one rule: calls, addresses taken, and every
    # address-taken function behind an indirect call).
    reach = [graph.functions[n] for n in graph.reachable(fn.name)]
    globals_ = module.globals
    used: set[str] = set()
    for g in reach:
        if g.name not in syms:
            syms[g.name] = _symbols(g)
        used |= syms[g.name]

    shared_static: list[VarDecl] = []
    dynamic: list[str] = []
    const: list[VarDecl] = []
    for name, d in globals_.items():
        if name not in used:
            continue
        if d.space is StateSpace.SHARED:
            (dynamic.append(name) if d.size_bytes() is None else shared_static.append(d))
        elif d.space is StateSpace.CONST and d.size_bytes() is not None:
            const.append(d)
    for g in reach:
        for d in _body_decls(g.body):
            if d.space is StateSpace.SHARED:
                (dynamic.append(d.name) if d.size_bytes() is None else shared_static.append(d))
    local = [d for d in _body_decls(fn.body) if d.space is StateSpace.LOCAL]

    base, full = opcode_histograms(fn)
    params = tuple(param_info(p) for p in fn.params)
    own = graph.facts[fn.name]
    return KernelSummary(
        name=fn.name,
        params=params,
        param_bytes=_layout(fn.params),
        shared_bytes=_layout(shared_static),
        shared_vars=tuple(d.name for d in shared_static),
        dynamic_shared=tuple(dynamic),
        local_bytes=_layout(local),
        const_bytes=_layout(const),
        const_vars=tuple(d.name for d in const),
        registers=tuple(register_counts(fn).items()),
        instruction_count=sum(base.values()),
        opcodes=tuple(sorted(base.items(), key=lambda kv: (-kv[1], kv[0]))),
        full_opcodes=tuple(sorted(full.items(), key=lambda kv: (-kv[1], kv[0]))),
        directives=tuple((d.name, d.values) for d in fn.directives),
        calls=own.calls,
        indirect_calls=own.indirect_calls,
        line=fn.span.line or None,
    )


def summarize_module(module: Module) -> tuple[KernelSummary, ...]:
    """One summary per kernel (``.entry`` with a body), in source order."""
    graph, syms = CallGraph.of(module), {}
    return tuple(summarize_function(module, k, _graph=graph, _syms=syms) for k in module.kernels.values())


__all__ = ["KernelSummary", "ParamInfo", "opcode_histograms", "param_info", "register_counts",
           "summarize_function", "summarize_module"]
