"""Do a `call`'s argument and return lists match what the callee declares?

ptxas is the oracle (checked with ``ptxas -arch=sm_80``, CUDA 13; the verdicts are recorded in
tests/data/nonabi_calls.json by tests/ptx/calls/record_calls.py). A direct call, or an indirect
call with a ``.callprototype``, must

* pass exactly as many arguments as the callee has parameters, and give a return list of
  exactly as many entries as it returns (none when it returns nothing):
  "Call has wrong number of parameters";
* pass, for each parameter, an argument of the same size, both scalars or both arrays, and not
  a float for a ``.u``/``.s`` parameter nor an integer for a float one (``.b`` matches both):
  "Type of argument does not match formal parameter";
* for ``.param`` arguments, with the same alignment: "Alignment of argument does not match";
* pass registers, immediates (of a kind the parameter takes) or the caller's own ``.param``
  variables, never a module variable or function ("has illegal state space"), a kernel's or
  function's ``.param`` formal ("cannot be used as argument to call") or ``_``; results are
  registers, ``.param`` variables or ``_``, never an immediate (ptxas crashes on one).

It accepts registers and immediates for ``.param`` scalar parameters, ``.param`` variables for
``.reg`` parameters and differing kinds of the same size where ``.b`` is one of them.

The module-wide rules of ptxas's calling convention are checked here too:

* a function with several return values must return them all in ``.reg`` ("Multiple return
  parameters require .register state space");
* a module where some function returns several values is compiled without the ABI ("disabling
  ABI"): then no call may recurse, be indirect or reach an external function ("requires ABI");
* otherwise (ABI compilation) a called function may not take or return ``.pred``, ``.u8``,
  ``.s8``, ``.u16`` or ``.s16`` values (``.b8``, ``.b16`` and ``.f16`` are accepted).

The check is its own module so that the verifier and the lifter run the same one: every
executor and ``translate`` then report a mismatched call the same way, as a located
``PtxSemanticError``, instead of failing later while binding arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..errors import Diagnostic, PtxSemanticError
from .call_args import immediate_argument_bits
from .nodes import (Block, CallPrototype, Function, Immediate, Instruction, Module, ParenList, Register,
                    Sink, Span, Symbol, VarDecl)
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
    if actual.size_bytes() != formal.size_bytes() or _kinds_clash(actual.type, formal.type):
        return "type"
    if actual.space is StateSpace.PARAM and formal.space is StateSpace.PARAM and \
            _alignment(actual) != _alignment(formal):
        return "alignment"
    return None


def _kinds_clash(a: ScalarType, f: ScalarType) -> bool:
    """ptxas refuses a float argument for a `.u`/`.s` parameter and an integer one for a float
    parameter ("Type of argument does not match"); `.b` goes with either."""
    return "b" not in (a.kind, f.kind) and (a.kind == "f") != (f.kind == "f")


# ptxas, in ABI compilation: "passing predicate, 8-bit and 16-bit parameters to device functions is
# not supported" (and "returning ..."); measured: .b8, .b16 and .f16 are accepted, these are not.
_NOT_ABI_TYPES = frozenset({ScalarType.PRED, ScalarType.U8, ScalarType.S8, ScalarType.U16, ScalarType.S16})


class _CallChecker:
    def __init__(self, functions: dict[str, Function], filename: str | None, lines: list[str] | None,
                 module_names: frozenset[str] = frozenset()) -> None:
        self.functions = functions
        self.filename = filename
        self.lines = lines
        self.module_names = module_names          # module variables: not call arguments
        self.diags: list[Diagnostic] = []
        # ptxas compiles a module without the ABI as soon as one function returns several values.
        self.abi = not any(len(f.returns) > 1 for f in functions.values())
        self._reach: dict[str, frozenset[str]] = {}
        self.current: Function | None = None

    def error(self, ins: Instruction, message: str) -> None:
        self.error_at(ins.span, f"`{ins}` {message}")

    def error_at(self, span: Span, message: str) -> None:
        line = span.line or None
        col = span.column or None
        src = self.lines[line - 1] if self.lines and line and 0 < line <= len(self.lines) else None
        self.diags.append(Diagnostic(message, span.filename or self.filename, line, col, src))

    def declaration(self, f: Function) -> None:
        """ptxas: "Multiple return parameters require .register state space"."""
        if len(f.returns) > 1:
            bad = next((d for d in f.returns if d.space is not StateSpace.REG), None)
            if bad is not None:
                self.error_at(f.span, f"function `{f.name}` returns {len(f.returns)} values, so each must be "
                                      f"a `.reg`, but `{bad.name}` is {_describe(bad)}")

    def reaches(self, name: str) -> frozenset[str]:
        """The functions ``name`` can call directly or through others (direct calls only)."""
        known = self._reach.get(name)
        if known is None:
            seen: set[str] = set()
            todo = [name]
            while todo:
                f = self.functions.get(todo.pop())
                if f is None or f.body is None:
                    continue
                for ins in f.body.instructions():
                    c = _direct_callee(ins)
                    if c is not None and c not in seen:
                        seen.add(c)
                        todo.append(c)
            known = self._reach[name] = frozenset(seen)
        return known

    # ---------------------------------------------------------------- walking
    def function(self, f: Function) -> None:
        self.declaration(f)
        if f.body is None:
            return
        self.current = f
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
            if not self.convention(ins, f):
                return
            what, formals_r, formals_p, at = f"`{f.name}`", f.returns, f.params, f.span
        else:
            if not self.abi:
                self.error(ins, "is an indirect call in a module compiled without the ABI (a function "
                                "returns several values): ptxas refuses it ('requires ABI')")
                return
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

    def convention(self, ins: Instruction, f: Function) -> bool:
        """ptxas's module-wide calling-convention rules for a direct call of ``f`` (False: refused)."""
        at = f" (declared at line {f.span.line})" if f.span.line else ""
        if not self.abi:
            if f.body is None:
                self.error(ins, f"calls the external function `{f.name}` in a module compiled without the ABI "
                                "(a function returns several values): ptxas refuses it ('requires ABI')")
                return False
            me = self.current.name if self.current is not None else None
            if f.name == me or me in self.reaches(f.name):
                self.error(ins, f"calls `{f.name}` recursively in a module compiled without the ABI (a function "
                                "returns several values): ptxas refuses recursion there")
                return False
            return True
        bad = next((d for d in (*f.returns, *f.params) if d.type in _NOT_ABI_TYPES and not d.array and not d.vector), None)
        if bad is not None:
            role = "returns" if bad in f.returns else "takes"
            self.error(ins, f"calls `{f.name}`, which {role} `{bad.name}` ({_describe(bad)}){at}: ptxas "
                            "passes no predicate, .u8/.s8 or .u16/.s16 values to or from device functions "
                            "in ABI compilation (only when some function returns several values)")
            return False
        return True

    def operand(self, ins: Instruction, role: str, i: int, actual, formal: VarDecl, what: str, where: str,
                scope: Scope) -> None:
        if isinstance(actual, Immediate):
            self.immediate(ins, role, i, actual, formal, what, where)
            return
        if isinstance(actual, Sink):
            if role == "argument":
                self.error(ins, f"passes `_` as argument {i} of {what}: only a result can be discarded")
            return
        if not isinstance(actual, (Register, Symbol)):
            return
        name = actual.name
        d = scope.lookup(name)
        if d is None and (name in self.module_names or name in self.functions):
            self.error(ins, f"passes `{name}`, a module-level symbol, as {role} {i} of {what}: arguments "
                            "are registers, immediates or `.param` variables of the caller")
            return
        if d is None or d.space not in (StateSpace.REG, StateSpace.PARAM):
            return                               # undeclared names are the verifier's to report
        if d.space is StateSpace.PARAM and self.current is not None and \
                any(d is p for p in (*self.current.params, *self.current.returns)):
            self.error(ins, f"passes `{name}`, a `.param` parameter of `{self.current.name}`, as {role} {i} of "
                            f"{what}: ptxas refuses a function's own `.param` formals as call arguments")
            return
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


    def immediate(self, ins: Instruction, role: str, i: int, imm: Immediate, formal: VarDecl, what: str,
                  where: str) -> None:
        if role == "result":
            self.error(ins, f"gives the immediate `{imm}` as result {i} of {what}: a result is a register, "
                            "a `.param` variable or `_`")
            return
        why = None
        if formal.array or formal.vector:
            why = "an immediate cannot be passed for it"
        else:
            try:
                immediate_argument_bits(imm, formal.type)
            except ValueError as e:
                if "cannot" in str(e):           # the kinds ptxas refuses; other reasons are the executors'
                    why = str(e)
        if why is not None:
            self.error(ins, f"passes `{imm}` as argument {i} of {what}, whose parameter `{formal.name}` is "
                            f"{_describe(formal)}{where}: {why}")


def _direct_callee(ins: Instruction) -> str | None:
    if ins.opcode != "call":
        return None
    ops = [o for o in ins.operands if not isinstance(o, ParenList)]
    return ops[0].name if ops and isinstance(ops[0], Symbol) else None


def _bytes(d: VarDecl) -> str:
    if d.type is ScalarType.PRED:
        return "a predicate"
    n = d.size_bytes()
    return "unsized" if n is None else _plural(n, "byte")


def call_diagnostics(module: Module, lines: list[str] | None = None, only: Iterable[Function] | None = None,
                     functions: dict[str, Function] | None = None) -> list[Diagnostic]:
    """One diagnostic per mismatched call in ``module`` (or in the functions ``only``);
    ``functions``: ``module.functions`` if the caller has it already (it is rebuilt per use)."""
    names = frozenset(i.name for i in module.items if isinstance(i, VarDecl))
    checker = _CallChecker(functions if functions is not None else module.functions, module.filename, lines, names)
    for f in (only if only is not None else module.functions.values()):
        checker.function(f)
    return checker.diags


def check_calls(module: Module, only: Iterable[Function] | None = None, lines: list[str] | None = None,
                functions: dict[str, Function] | None = None) -> None:
    """Raise a ``PtxSemanticError`` (every mismatched call, located) if there is one."""
    diags = call_diagnostics(module, lines, only, functions)
    if diags:
        raise PtxSemanticError.from_diagnostics(diags)
