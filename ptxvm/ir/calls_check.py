"""Do a `call`'s argument and return lists match what the callee declares?

ptxas is the oracle (checked with ``ptxas -arch=sm_80``, CUDA 13): a direct call, or an
indirect call with a ``.callprototype``, must

* pass exactly as many arguments as the callee has parameters, and give a return list of
  exactly as many entries as it returns (none when it returns nothing):
  "Call has wrong number of parameters";
* pass, for each parameter, an argument of the same size, both scalars or both arrays:
  "Type of argument does not match formal parameter";
* for ``.param`` arguments, with the same alignment: "Alignment of argument does not match".

It accepts differing kinds of the same size (``.f32`` argument for a ``.b32`` or ``.s32``
parameter, an ``.f16`` for a ``.b16``), registers and immediates for ``.param`` scalar
parameters and ``.param`` variables for ``.reg`` parameters: those are not refused here
(an executor that cannot run such a call says so itself).

The check is its own module so that the verifier and the lifter run the same one: every
executor and ``translate`` then report a mismatched call the same way, as a located
``PtxSemanticError``, instead of failing later while binding arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import Diagnostic, PtxSemanticError
from .nodes import (Block, CallPrototype, Function, Immediate, Instruction, Module, ParenList, Register,
                    Symbol, VarDecl)
from .scopes import Scope
from .types import ScalarType, StateSpace



def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _describe(d: VarDecl) -> str:
    """`.param .b32` / `.param .align 4 .b8[16]` / `.reg .f32`: how the declaration reads."""
    space = f".{d.space.value}"
    align = f" .align {d.align}" if d.align else ""
    dims = "".join(f"[{n if n is not None else ''}]" for n in d.array)
    vec = f" .v{d.vector}" if d.vector else ""
    return f"{space}{align}{vec} .{d.type.value}{dims}"


def _alignment(d: VarDecl) -> int:
    return d.align or d.element_bytes()


def _mismatch(actual: VarDecl, formal: VarDecl) -> str | None:
    """Why ``actual`` cannot be passed for ``formal`` (None: it can), following ptxas."""
    pred_a, pred_f = actual.type is ScalarType.PRED, formal.type is ScalarType.PRED
    if pred_a != pred_f:
        return "type"
    if bool(actual.array) != bool(formal.array):
        return "type"            # a scalar for an array parameter (or a register for one), or the reverse
    if actual.size_bytes() != formal.size_bytes():
        return "type"
    if actual.space is StateSpace.PARAM and formal.space is StateSpace.PARAM and \
            _alignment(actual) != _alignment(formal):
        return "alignment"
    return None


class _CallChecker:
    def __init__(self, functions: dict[str, Function], filename: str | None, lines: list[str] | None) -> None:
        self.functions = functions
        self.filename = filename
        self.lines = lines
        self.diags: list[Diagnostic] = []

    def error(self, ins: Instruction, message: str) -> None:
        span = ins.span
        line = span.line or None
        col = span.column or None
        src = self.lines[line - 1] if self.lines and line and 0 < line <= len(self.lines) else None
        self.diags.append(Diagnostic(f"`{ins}` {message}", span.filename or self.filename, line, col, src))

    # ---------------------------------------------------------------- walking
    def function(self, f: Function) -> None:
        if f.body is None:
            return
        scope = Scope()
        for p in (*f.returns, *f.params):
            scope.declare(p)
        protos = {s.name: s for s in f.body.walk() if isinstance(s, CallPrototype)}
        self._block(f.body, scope, protos)

    def _block(self, block: Block, parent: Scope, protos: dict[str, CallPrototype]) -> None:
        # Iterative over nested blocks: bodies can nest deeper than Python's recursion limit.
        stack: list[tuple[Iterator, Scope]] = [(iter(block.statements), parent.child())]
        while stack:
            it, scope = stack[-1]
            for s in it:
                if isinstance(s, VarDecl):
                    if s.space in (StateSpace.REG, StateSpace.PARAM):
                        scope.declare(s)
                elif isinstance(s, Instruction):
                    if s.opcode == "call":
                        self.call(s, scope, protos)
                elif isinstance(s, Block):
                    stack.append((iter(s.statements), scope.child()))
                    break
            else:
                stack.pop()

    # ---------------------------------------------------------------- one call
    def call(self, ins: Instruction, scope: Scope, protos: dict[str, CallPrototype]) -> None:
        ops = list(ins.operands)
        rets = ops.pop(0).elements if ops and isinstance(ops[0], ParenList) else None
        if not ops:
            return                               # the verifier reports a call with no callee
        callee = ops.pop(0)
        args = ops.pop(0).elements if ops and isinstance(ops[0], ParenList) else ()
        if isinstance(callee, Symbol):
            f = self.functions.get(callee.name)
            if f is None or f.is_kernel:
                return                           # the verifier reports these
            what, formals_r, formals_p, at = f"`{f.name}`", f.returns, f.params, f.span
        else:
            proto = next((protos.get(o.name) for o in ops if isinstance(o, Symbol) and o.name in protos), None)
            if proto is None:
                return                           # `.calltargets` or no prototype: nothing declared to check
            what, formals_r, formals_p, at = f"prototype `{proto.name}`", proto.returns, proto.params, proto.span
        where = f" (declared at line {at.line})" if at.line else ""
        if len(args) != len(formals_p):
            self.error(ins, f"passes {_plural(len(args), 'argument')} to {what}, which takes "
                            f"{len(formals_p)}{where}")
            return
        nret = len(rets) if rets is not None else 0
        if nret != len(formals_r):
            if rets is None:
                self.error(ins, f"has no return list, but {what} returns {_plural(len(formals_r), 'value')}"
                                f"{where}: write `call (r), ...` with a `.param` for the result")
            elif not formals_r:
                self.error(ins, f"expects {_plural(nret, 'result')} from {what}, which returns nothing{where}")
            else:
                self.error(ins, f"expects {_plural(nret, 'result')} from {what}, which returns "
                                f"{len(formals_r)}{where}")
            return
        pairs = [("result", i, a, p) for i, (a, p) in enumerate(zip(rets or (), formals_r), 1)]
        pairs += [("argument", i, a, p) for i, (a, p) in enumerate(zip(args, formals_p), 1)]
        for role, i, actual, formal in pairs:
            self.operand(ins, role, i, actual, formal, what, where, scope)

    def operand(self, ins: Instruction, role: str, i: int, actual, formal: VarDecl, what: str, where: str,
                scope: Scope) -> None:
        if isinstance(actual, Immediate):
            return                               # ptxas accepts an immediate for a scalar parameter
        if not isinstance(actual, (Register, Symbol)):
            return
        name = actual.name
        d = scope.lookup(name)
        if d is None or d.space not in (StateSpace.REG, StateSpace.PARAM):
            return                               # undeclared names are the verifier's to report
        if d.count is not None:                  # one register of a `%r<N>` range
            d = VarDecl(d.space, d.type, name, d.vector, d.array, d.align, span=d.span)
        why = _mismatch(d, formal)
        if why is None:
            return
        if why == "type":
            self.error(ins, f"passes `{name}` ({_describe(d)}, {_bytes(d)}) as {role} {i} of {what}, whose "
                            f"parameter `{formal.name}` is {_describe(formal)} ({_bytes(formal)}){where}")
        else:
            self.error(ins, f"passes `{name}` aligned to {_alignment(d)} bytes as {role} {i} of {what}, whose "
                            f"parameter `{formal.name}` is aligned to {_alignment(formal)}{where}")


def _bytes(d: VarDecl) -> str:
    if d.type is ScalarType.PRED:
        return "a predicate"
    n = d.size_bytes()
    return "unsized" if n is None else _plural(n, "byte")


def call_diagnostics(module: Module, lines: list[str] | None = None, only: Iterable[Function] | None = None,
                     functions: dict[str, Function] | None = None) -> list[Diagnostic]:
    """One diagnostic per mismatched call in ``module`` (or in the functions ``only``);
    ``functions``: ``module.functions`` if the caller has it already (it is rebuilt per use)."""
    checker = _CallChecker(functions if functions is not None else module.functions, module.filename, lines)
    for f in (only if only is not None else module.functions.values()):
        checker.function(f)
    return checker.diags


def check_calls(module: Module, only: Iterable[Function] | None = None, lines: list[str] | None = None,
                functions: dict[str, Function] | None = None) -> None:
    """Raise a ``PtxSemanticError`` (every mismatched call, located) if there is one."""
    diags = call_diagnostics(module, lines, only, functions)
    if diags:
        raise PtxSemanticError.from_diagnostics(diags)
