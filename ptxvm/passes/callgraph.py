"""The call graph of a module: who calls whom, directly or through an address, and what the
functions a kernel can reach do (synchronise, use atomics or the device heap, recurse).

One rule for "callee", used by every consumer: a function ``f`` may transfer control to

* the functions its ``call`` instructions name,
* the functions its other instructions name as operands (``mov.u64 %rd, fn`` takes an
  address that a later indirect call may use), and
* when ``f`` makes an indirect call (``call %rd, ...``): every address-taken function of the
  module (named by any instruction operand or by a ``.global``/``.const`` initialiser, as a
  vtable is), since the target is known only at run time.

Functions without a body (``vprintf``, ``malloc``, ``__assertfail``) are "externals": they
appear in ``externals`` and never in ``reachable``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..ir import nodes as ir
from ..isa import OpClass, opcodes_in

HEAP_FUNCTIONS = frozenset({"malloc", "free"})


def operand_symbols(op: object) -> Iterator[str]:
    """Every symbol name an operand mentions (address bases, vector and call-list elements)."""
    t = type(op)
    if t is ir.Symbol:
        yield op.name
    elif t is ir.Address:
        if type(op.base) is ir.Symbol:
            yield op.base.name
        for e in op.extra:
            yield from operand_symbols(e)
    elif t is ir.Vector or t is ir.ParenList:
        for e in op.elements:
            yield from operand_symbols(e)
    elif t is ir.Negated:
        yield from operand_symbols(op.operand)
    elif t is ir.Pair:
        yield from operand_symbols(op.first)
        yield from operand_symbols(op.second)


def _initialiser_symbols(init: object) -> Iterator[str]:
    stack = [init]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.InitList):
            stack.extend(reversed(x.elements))
        elif isinstance(x, ir.SymbolRef):
            yield x.name


def call_target(ins: ir.Instruction) -> ir.Symbol | ir.Register | None:
    """The function operand of a ``call``: the first operand that is not a parenthesised list."""
    return next((o for o in ins.operands if not isinstance(o, ir.ParenList)), None)


@dataclass(frozen=True, slots=True)
class FunctionFacts:
    """What one function does by itself (callees' facts are not included)."""

    name: str
    calls: tuple[str, ...]          # named by `call`, in first-call order (with or without a body)
    references: tuple[str, ...]     # functions named by other instructions (address taken)
    indirect_calls: int             # `call` through a register
    cta_sync: bool                  # bar / barrier
    warp_sync: bool                 # shfl, vote, match, redux.sync, activemask, bar.warp.sync
    atomics: bool                   # atom / red


def _facts(fn: ir.Function, functions: Mapping[str, ir.Function]) -> FunctionFacts:
    calls: list[str] = []
    refs: list[str] = []
    indirect = 0
    cta = warp = atomics = False
    cta_ops, warp_ops = opcodes_in(OpClass.CTA_SYNC), opcodes_in(OpClass.WARP_SYNC)
    for ins in fn.body.instructions() if fn.body is not None else ():
        op = ins.opcode
        cta = cta or op in cta_ops
        warp = warp or op in warp_ops
        atomics = atomics or op in ("atom", "red")
        if op == "call":
            target = call_target(ins)
            if type(target) is ir.Symbol:
                if target.name not in calls:
                    calls.append(target.name)
            else:
                indirect += 1
            named = [n for o in ins.operands if o is not target for n in operand_symbols(o)]
        else:
            named = [n for o in ins.operands for n in operand_symbols(o)]
        for n in named:
            if n in functions and n not in refs:
                refs.append(n)
    return FunctionFacts(fn.name, tuple(calls), tuple(refs), indirect, cta, warp, atomics)


@dataclass(frozen=True)
class CallGraph:
    """The call graph of one module (build it with ``CallGraph.of(module)`` or the pipeline)."""

    functions: Mapping[str, ir.Function]
    facts: Mapping[str, FunctionFacts]
    address_taken: frozenset[str]

    @classmethod
    def of(cls, module: ir.Module) -> "CallGraph":
        functions = module.functions
        facts = {name: _facts(f, functions) for name, f in functions.items()}
        taken: set[str] = set()
        for item in module.items:
            if isinstance(item, ir.VarDecl) and item.init is not None:
                taken.update(n for n in _initialiser_symbols(item.init) if n in functions)
        for f in facts.values():
            taken.update(f.references)
        return cls(functions, facts, frozenset(taken))

    def successors(self, name: str) -> tuple[str, ...]:
        """Functions ``name`` may transfer control to (see the module docstring), in order."""
        f = self.facts[name]
        out = list(f.calls)
        out += [n for n in f.references if n not in out]
        if f.indirect_calls:
            out += [n for n in sorted(self.address_taken) if n not in out]
        return tuple(out)

    def _has_body(self, name: str) -> bool:
        g = self.functions.get(name)
        return g is not None and g.body is not None

    def reachable(self, name: str) -> tuple[str, ...]:
        """``name`` first, then every function with a body it may reach, breadth first.
        Kernels are never callees (a ``.entry`` cannot be called)."""
        order, seen = [name], {name}
        i = 0
        while i < len(order):
            for n in self.successors(order[i]):
                if n not in seen and self._has_body(n) and not self.functions[n].is_kernel:
                    seen.add(n)
                    order.append(n)
            i += 1
        return tuple(order)

    def externals(self, name: str) -> frozenset[str]:
        """Body-less functions (``vprintf``, ``malloc``...) that ``name`` or its callees call."""
        return frozenset(c for g in self.reachable(name) for c in self.facts[g].calls if not self._has_body(c))

    def any_in_reach(self, name: str, what: str) -> bool:
        """Whether ``name`` or a function it may reach has the ``FunctionFacts`` flag ``what``
        (``cta_sync``, ``warp_sync``, ``atomics``)."""
        return any(getattr(self.facts[g], what) for g in self.reachable(name))

    def uses_heap(self, name: str) -> bool:
        return bool(self.externals(name) & HEAP_FUNCTIONS)

    @cached_property
    def recursive(self) -> frozenset[str]:
        """Functions on a cycle of the graph (they may be active more than once per thread)."""
        return frozenset(n for scc in self._sccs() for n in scc
                         if len(scc) > 1 or n in self.successors(n))

    def _sccs(self) -> list[list[str]]:
        # Tarjan's algorithm, iterative (call chains in real PTX can be deep).
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        on_stack: set[str] = set()
        stack: list[str] = []
        out: list[list[str]] = []
        nodes = [n for n in self.facts if self._has_body(n)]
        for root in nodes:
            if root in index:
                continue
            work = [(root, iter(self.successors(root)))]
            index[root] = low[root] = len(index)
            stack.append(root)
            on_stack.add(root)
            while work:
                v, it = work[-1]
                for w in it:
                    if not self._has_body(w):
                        continue
                    if w not in index:
                        index[w] = low[w] = len(index)
                        stack.append(w)
                        on_stack.add(w)
                        work.append((w, iter(self.successors(w))))
                        break
                    if w in on_stack:
                        low[v] = min(low[v], index[w])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[v])
                    if low[v] == index[v]:
                        scc = []
                        while True:
                            w = stack.pop()
                            on_stack.discard(w)
                            scc.append(w)
                            if w == v:
                                break
                        out.append(scc)
        return out

    def describe(self) -> str:
        """A stable text summary (what the golden tests compare)."""
        lines = []
        for name, f in self.facts.items():
            if not self._has_body(name):
                continue
            flags = [k for k in ("cta_sync", "warp_sync", "atomics") if getattr(f, k)]
            if name in self.recursive:
                flags.append("recursive")
            if name in self.address_taken:
                flags.append("address-taken")
            if f.indirect_calls:
                flags.append(f"indirect-calls={f.indirect_calls}")
            lines.append(f"{name}: calls {list(f.calls)} refs {list(f.references)} [{', '.join(flags)}]")
            lines.append(f"  reach {list(self.reachable(name))} externals {sorted(self.externals(name))}")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class CallGraphPass:
    name: str = "callgraph"

    def apply(self, module: ir.Module, done: Mapping[str, Any]) -> CallGraph:
        return CallGraph.of(module)
