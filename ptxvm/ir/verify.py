"""Semantic checks of a parsed module: symbol resolution, operand shapes, types.

``verify_module`` returns every problem found as a Diagnostic (never raises for
problems in the PTX). Operand rules come from the forms in isa/instructions.toml;
type compatibility follows PTX ISA 9.0 §6.4 (operand type information): a
`.bN` instruction type accepts any register of N bits, `.uN/.sN` accept
b/u/s registers of N bits, `.fN` accepts f or b registers of N bits, and ld, st,
cvt (and mov of packed values) accept registers wider than the instruction type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from .. import isa
from ..errors import Diagnostic
from .nodes import (
    Address, Block, BranchTargets, CallPrototype, Function, Immediate, InitList, Instruction, Label, Module,
    Negated, Offset, Pair, ParenList, Register, Sink, Span, Symbol, VarDecl, Vector,
)
from .scopes import Scope
from .sregs import lookup_special
from .symbol_values import symbol_value_problems
from .types import ScalarType, StateSpace

# Instructions whose data operands may be wider than the instruction type (§6.4.2).
_WIDE_OK = {"ld", "ldu", "st", "cvt", "mov", "ld.global.nc", "st.async", "atom", "red", "tex", "suld",
            "sust", "shfl", "prmt", "cvt.pack"}


class Verifier:
    def __init__(self, module: Module, lines: list[str]) -> None:
        self.module = module
        self.lines = lines
        self.diags: list[Diagnostic] = []
        self.functions: dict[str, Function] = {}
        self.globals = Scope()

    def error(self, message: str, span: Span | None, at: str | None = None) -> None:
        """Report at ``span``; with ``at``, under that operand's spelling on the same line."""
        line = span.line if span and span.line else None
        col = span.column if span and span.line else None
        src = self.lines[line - 1] if line and 0 < line <= len(self.lines) else None
        if at and src and col:
            # Operands follow the opcode: search after it (`32` must not match `mov.u32`).
            start = re.compile(r"\S*").match(src, col - 1).end()
            # A number is not the tail of a name (`1` of `add.f32 %f1, %f2, 1` is the last one).
            lead = r"(?<![\w$%.])" if at[:1].isdigit() else ""
            m = re.compile(lead + re.escape(at) + r"(?![\w$])").search(src, start)
            if m:
                col = m.start() + 1
        self.diags.append(Diagnostic(message, self.module.filename, line, col, src))

    # ---------------------------------------------------------------- module
    def run(self) -> list[Diagnostic]:
        defined: dict[str, Function] = {}
        for item in self.module.items:
            if isinstance(item, Function):
                if item.body is not None:
                    prev = defined.get(item.name)
                    if prev is not None:
                        self.error(f"function `{item.name}` is defined twice (first at line {prev.span.line})",
                                   item.span)
                    defined[item.name] = item
                self.functions.setdefault(item.name, item)
                if item.body is not None:
                    self.functions[item.name] = item
            elif isinstance(item, VarDecl):
                prev = self.globals.declare(item)
                if prev is not None and item.linkage is None and prev.linkage is None:
                    self.error(f"`{item.name}` is declared twice (first at line {prev.span.line})", item.span)
                self._check_decl(item)
        for item in self.module.items:
            if isinstance(item, Function):
                self._function(item)
        return self.diags

    def _check_decl(self, d: VarDecl) -> None:
        if d.space is StateSpace.REG and d.array:
            self.error(f"register `{d.name}` cannot be an array", d.span)
        if d.name == "WARP_SZ":
            self.error("`WARP_SZ` is a predefined constant (PTX ISA §4.5) and cannot be declared", d.span)
        if d.vector is not None:
            self._check_vector_decl(d)
        if d.init is not None and d.space not in (StateSpace.GLOBAL, StateSpace.CONST):
            self.error(f"`{d.name}`: only .global and .const variables can have initialisers", d.span)
        if d.init is not None and d.linkage is not None and d.linkage.value == "extern":
            self.error(f"`.extern` variable `{d.name}` cannot have an initialiser", d.span)
        if isinstance(d.init, InitList):
            problem = _init_shape_problem(d.init, d.array + ((d.vector,) if d.vector else ()))
            if problem:
                self.error(f"initialiser of `{d.name}`: {problem}", d.span)

    def _check_vector_decl(self, d: VarDecl) -> None:
        """PTX ISA 9.0 §5.4.2: variables may be declared .v2 or .v4 (.v8 exists only as a
        ld/st modifier), of at most 128 bits in all, and predicates are scalar only."""
        if d.vector not in (2, 4):
            self.error(f"`{d.name}`: vector declarations take .v2 or .v4, not .v{d.vector}", d.span)
        elif d.type is ScalarType.PRED:
            self.error(f"`{d.name}`: .pred variables are scalar; a vector of predicates cannot be declared",
                       d.span)
        elif d.type.bits * d.vector > 128:
            self.error(f"`{d.name}`: .v{d.vector} .{d.type.value} is {d.type.bits * d.vector} bits; a vector "
                       "holds at most 128 bits", d.span)

    # ---------------------------------------------------------------- functions
    def _function(self, f: Function) -> None:
        scope = Scope(self.globals)
        for p in (*f.returns, *f.params):
            if p.space not in (StateSpace.PARAM, StateSpace.REG):
                self.error(f"parameter `{p.name}` of `{f.name}` must be .param or .reg", p.span)
            if scope.declare(p) is not None:
                self.error(f"parameter `{p.name}` is declared twice", p.span)
            self._check_decl(p)
        if f.body is None:
            return
        labels: dict[str, Span] = {}
        protos: dict[str, CallPrototype] = {}
        tables: dict[str, BranchTargets] = {}
        for s in f.body.walk():
            if isinstance(s, Label):
                if s.name in labels:
                    self.error(f"duplicate label `{s.name}` (first defined at line {labels[s.name].line})", s.span)
                else:
                    labels[s.name] = s.span
            elif isinstance(s, CallPrototype):
                protos[s.name] = s
            elif isinstance(s, BranchTargets):
                tables[s.name] = s
        ctx = _FnContext(f, labels, protos, tables)
        self._block(f.body, scope, ctx)

    def _block(self, block: Block, parent: Scope, ctx: "_FnContext") -> None:
        scope = Scope(parent)
        for s in block.statements:
            if isinstance(s, VarDecl):
                prev = scope.declare(s)
                if prev is not None:
                    self.error(f"`{s.name}` is declared twice in this scope (first at line {prev.span.line})",
                               s.span)
                self._check_decl(s)
            elif isinstance(s, Instruction):
                self._instruction(s, scope, ctx)
            elif isinstance(s, Block):
                self._block(s, scope, ctx)
            elif isinstance(s, BranchTargets):
                for t in s.targets:
                    if (s.kind == "branchtargets" and t not in ctx.labels) or \
                            (s.kind == "calltargets" and t not in self.functions):
                        self.error(f"`.{s.kind}` names undefined `{t}`", s.span)

    # ---------------------------------------------------------------- instructions
    def _instruction(self, ins: Instruction, scope: Scope, ctx: "_FnContext") -> None:
        if ins.guard is not None:
            t = self._reg_type(ins.guard.register, scope, ins)
            if t is not None and t is not ScalarType.PRED:
                self.error(f"guard `{ins.guard}` must be a .pred register, `{ins.guard.register}` is .{t.value}",
                           ins.span)
        # Resolve every register and symbol the instruction mentions.
        ctx.undeclared = []
        for op in ins.operands:
            self._resolve(op, scope, ctx, ins)
        d = None
        if ins.form:   # else decoding failed and was reported already
            try:
                d = isa.decode(ins.full_opcode)
            except isa.DecodeError:
                d = None
        if d is not None:
            if ins.opcode in ("ld", "st") and ins.mod("vec") == "v8" and d.types and d.types[0].bits * 8 > 128:
                self._check_v8(ins)
            if ins.opcode.startswith("wgmma."):
                self._check_wgmma_target(ins)
            self._shape(ins, d, scope, ctx)
            if ins.opcode == "st" or any(type(o) in (Symbol, Immediate) for o in ins.operands):
                roles = d.form.operands
                for msg, at in symbol_value_problems(ins, roles, [_role_type(r, d) for r in roles], scope, ctx.fn):
                    self.error(msg, ins.span, at=at)
        for name in ctx.undeclared:
            self.error(f"`{name}` is not declared (no label, variable, function or prototype has this name)",
                       ins.span, at=name)

    def _resolve(self, op, scope: Scope, ctx: "_FnContext", ins: Instruction) -> None:
        if isinstance(op, Register):
            self._reg_type(op, scope, ins)
        elif isinstance(op, Symbol):
            n = op.name
            if not (n in ctx.labels or n in self.functions or n in ctx.protos or n in ctx.tables
                    or scope.lookup(n) is not None):
                ctx.undeclared.append(n)
        elif isinstance(op, (Negated,)):
            self._resolve(op.operand, scope, ctx, ins)
        elif isinstance(op, Offset):
            self._resolve(op.base, scope, ctx, ins)
        elif isinstance(op, Pair):
            self._resolve(op.first, scope, ctx, ins)
            self._resolve(op.second, scope, ctx, ins)
        elif isinstance(op, (Vector, ParenList)):
            for e in op.elements:
                self._resolve(e, scope, ctx, ins)
        elif isinstance(op, Address):
            if op.base is not None:
                self._resolve(op.base, scope, ctx, ins)
            for e in op.extra:
                self._resolve(e, scope, ctx, ins)

    def _reg_type(self, r: Register, scope: Scope, ins: Instruction) -> ScalarType | None:
        decl = scope.lookup(r.name)
        if decl is not None:
            if r.component is not None and not (decl.vector and r.component in tuple("xyzw"[:decl.vector])):
                self.error(f"register `{r.name}` is not a vector with a `.{r.component}` element", ins.span,
                           at=str(r))
            return decl.type
        sreg = lookup_special(r.name, r.component)
        if sreg is not None:
            return sreg.type
        if lookup_special(r.name) is not None:
            self.error(f"special register `{r.name}` has no component `.{r.component}`", ins.span, at=str(r))
            return None
        self.error(f"register `{r}` used but not declared", ins.span, at=str(r))
        return None

    def _shape(self, ins: Instruction, d: isa.Decoded, scope: Scope, ctx: "_FnContext") -> None:
        # Operand count: any form whose modifiers and types match decides.
        roles = d.form.operands
        n = len(ins.operands)
        if roles:
            lo, hi = d.form.min_operands, len(roles)
            if not lo <= n <= hi:
                want = str(lo) if lo == hi else f"{lo} to {hi}"
                self.error(f"`{ins.full_opcode}` takes {want} operand{'s' if hi != 1 else ''}, found {n}",
                           ins.span)
                return
        elif n and d.spec.forms and all(not f.operands for f in d.spec.forms):
            self.error(f"`{ins.full_opcode}` takes no operands, found {n}", ins.span)
            return
        if ins.opcode == "call":
            self._call(ins, ctx)
            return
        width = next((int(m[1:]) for m in ins.modifiers if m in ("v2", "v4", "v8")), None)
        wide = ins.mod("wide") is not None
        for op, role in zip(ins.operands, roles):
            if type(op) is Register and op.component is None and role.kind in _DATA_ROLES:
                decl = scope.lookup(op.name)
                if decl is not None and decl.vector and decl.space is StateSpace.REG:
                    self._whole_vector(ins, op, decl, role, d, width)
                    continue
            if isinstance(op, (Sink, Vector)) and not self._sink_ok(ins, op, role):
                continue
            if role.pair and not isinstance(op, Pair) and (
                    (ins.opcode == "lop3" and ins.form == "boolop") or ins.opcode == "elect.sync"):
                # lop3.BoolOp's and elect.sync's predicate is their point (§9.7.8.6, §9.7.13.14);
                # ptxas: "Predicate output expected".
                self.error(f"`{ins.full_opcode}` needs the destination pair `d|p`", ins.span, at=str(op))
                continue
            if type(op) is Register and role.kind in _DATA_ROLES and width is None:
                # Fast path (most operands): a plain register in a data role.
                want = _role_type(role, d)
                if want is None or ins.opcode.startswith(_FRAGMENT_OPS):
                    continue
                have = self._lookup_quiet(op, scope)
                if have is not None and not _compatible(want, have, ins.opcode, wide):
                    self.error(f"`{op}` is .{have.value}, but `{ins.full_opcode}` needs a "
                               f"{_describe(want)} operand here", ins.span, at=str(op))
                continue
            self._check_role(ins, op, role, d, scope, ctx, width)

    def _check_v8(self, ins: Instruction) -> None:
        """256-bit ld/st (PTX ISA 9.0 §9.7.9.8/9): .global only, PTX ISA 8.8, sm_100 and up
        (.v8 of 16-bit elements is 128 bits and has none of these limits)."""
        if ins.mod("space") != "global":
            self.error(f"`{ins.full_opcode}`: .v8 loads and stores need the .global state space", ins.span)
            return
        major, _, minor = self.module.version.partition(".")
        if major.isdigit() and minor.isdigit() and (int(major), int(minor)) < (8, 8):
            self.error(f"`{ins.full_opcode}`: .v8 loads and stores need PTX ISA 8.8 or later, "
                       f"this module is .version {self.module.version}", ins.span)
        elif self.module.sm is not None and self.module.sm < 100:
            self.error(f"`{ins.full_opcode}`: .v8 loads and stores need sm_100 or later, "
                       f"this module targets sm_{self.module.sm}", ins.span)

    def _check_wgmma_target(self, ins: Instruction) -> None:
        """wgmma (PTX ISA 9.0 §9.7.15) exists on sm_90a only: an arch-specific feature, absent from
        sm_90 and from sm_100a and later (ptxas 13.0: "not supported on .target 'sm_90'")."""
        if self.module.target and "sm_90a" not in self.module.target:
            self.error(f"`{ins.full_opcode}` needs `.target sm_90a` (wgmma is an sm_90a feature, PTX ISA "
                       f"§9.7.15); this module targets {', '.join(self.module.target)}", ins.span)

    def _whole_vector(self, ins: Instruction, op: Register, decl: VarDecl, role: isa.OperandRole,
                      d: isa.Decoded, width: int | None) -> None:
        """A `.v2`/`.v4` register used without an element selector (§5.4.2): the operand of a
        vector ld/st of its width, or of a mov of its whole size; elsewhere it needs `.x`...."""
        want = _role_type(role, d)
        if width is not None and role.name in ("d", "a", "b"):
            if width != decl.vector:
                self.error(f"`{ins.full_opcode}` needs a {width}-element vector, `{op}` is "
                           f".v{decl.vector} .{decl.type.value}", ins.span, at=str(op))
            elif want is not None and not _compatible(want, decl.type, ins.opcode, False):
                self.error(f"`{op}` is .v{decl.vector} .{decl.type.value}, but `{ins.full_opcode}` needs "
                           f"{_describe(want)} elements", ins.span, at=str(op))
            return
        total = decl.type.bits * (decl.vector or 1)
        if ins.opcode == "mov" and width is None and want is not None and want.bits == total \
                and want.kind == "b":
            return
        self.error(f"vector register `{op}` (.v{decl.vector} .{decl.type.value}) cannot be used whole by "
                   f"`{ins.full_opcode}`; name an element such as `{op}.x`", ins.span, at=str(op))

    def _call(self, ins: Instruction, ctx: "_FnContext") -> None:
        """`call (ret), f, (args)[, proto]`: the callee is the first operand that is not a list."""
        callee = next((o for o in ins.operands if not isinstance(o, ParenList)), None)
        if isinstance(callee, Symbol):
            f = self.functions.get(callee.name)
            if f is not None and f.is_kernel:
                self.error(f"`{callee.name}` is a kernel (.entry); kernels cannot be called", ins.span,
                           at=callee.name)
            elif f is None and callee.name in ctx.labels:
                self.error(f"`{callee.name}` is a label, not a function", ins.span, at=callee.name)
        elif callee is None or not isinstance(callee, Register):
            self.error("`call` needs a function name or a register holding a function's address", ins.span)

    # size: one short branch per operand role kind (pair, destination, address, vector, immediate,
    # label), all reading the same decoded form; a dispatch table would scatter one rule set.
    def _check_role(self, ins, op, role: isa.OperandRole, d: isa.Decoded, scope, ctx, width) -> None:
        kind = role.kind
        if isinstance(op, Pair) and not (kind is isa.RoleKind.DST and role.pair):
            if kind is isa.RoleKind.DST or not any(r.pair for r in d.form.operands):
                self.error(f"`{ins.full_opcode}` has no `|p` predicate destination", ins.span, at=str(op))
            else:
                self.error(f"`{op}`: a `|` predicate pair can only be the destination of "
                           f"`{ins.full_opcode}`", ins.span, at=str(op))
            return
        if isinstance(op, Pair) and not self._pair_ok(ins, op, scope):
            return
        if isinstance(op, Negated):
            t = self._lookup_quiet(op.operand, scope) if isinstance(op.operand, Register) else None
            if kind is isa.RoleKind.DST:
                self.error(f"destination `{op}` of `{ins.full_opcode}` cannot be negated", ins.span, at=str(op))
                return
            if t is not None and t is not ScalarType.PRED:
                self.error(f"`!` negates predicates only; `{op.operand}` is .{t.value}", ins.span, at=str(op))
                return
        if kind is isa.RoleKind.FUNC and isinstance(op, Symbol):
            f = self.functions.get(op.name)
            if f is None and op.name not in ctx.undeclared:
                self.error(f"`{op.name}` is not a function", ins.span, at=op.name)
            elif f is not None and f.is_kernel:
                self.error(f"`{op.name}` is a kernel (.entry); kernels cannot be called", ins.span, at=op.name)
            return
        if kind is isa.RoleKind.DST and isinstance(op, Vector):
            bad = [e for e in op.elements if not isinstance(e, (Register, Sink))]
            if bad:
                self.error(f"vector destination element `{bad[0]}` of `{ins.full_opcode}` must be a register or `_`",
                           ins.span, at=str(bad[0]))
                return
        if kind is isa.RoleKind.ADDR:
            if not isinstance(op, Address):
                self.error(f"operand `{op}` of `{ins.full_opcode}` must be an address `[...]`", ins.span, at=str(op))
            elif op.base is None and not op.extra and ins.mod("space") != "local":
                # §6.4.1 lists `[imm]`; ptxas 13.0 takes it only in .local ("Immediate addresses
                # allowed only for .local state space"), so a generic or .global one is refused.
                self.error(f"`{ins.full_opcode}`: an immediate address `{op}` is allowed only in the "
                           ".local state space", ins.span, at=str(op))
            return
        if isinstance(op, Offset) and kind is not isa.RoleKind.SRC:
            # ptxas: "Result register required"; branch targets and callees are plain names.
            self.error(f"operand `{op}` of `{ins.full_opcode}` cannot be an expression `+`; only a "
                       "source value can be", ins.span, at=str(op.base))
            return
        if isinstance(op, Offset):
            want = _role_type(role, d)
            if want is not None and (want.kind == "f" or want is ScalarType.PRED):
                # An address expression is an integer (§6.4.1); ptxas crashes on `mov.f32 f, %f1+1`.
                self.error(f"`{op}` is an address expression, an integer, but `{ins.full_opcode}` needs "
                           f"a {_describe(want)} operand here", ins.span, at=str(op.base))
                return
        if isinstance(op, Address) and kind in (isa.RoleKind.DST, isa.RoleKind.SRC):
            self.error(f"operand `{op}` of `{ins.full_opcode}` cannot be an address", ins.span, at=str(op))
            return
        if kind is isa.RoleKind.LABEL:
            if isinstance(op, Symbol):
                if op.name not in ctx.labels and op.name not in ctx.tables:
                    self.error(f"branch target `{op.name}` is not a label of `{ctx.fn.name}`", ins.span, at=op.name)
                    if op.name in ctx.undeclared:
                        ctx.undeclared.remove(op.name)
            else:
                self.error(f"branch target of `{ins.full_opcode}` must be a label, found `{op}`", ins.span, at=str(op))
            return
        if kind is isa.RoleKind.DST:
            if isinstance(op, Immediate):
                self.error(f"destination of `{ins.full_opcode}` cannot be the constant `{op}`", ins.span, at=str(op))
                return
            if isinstance(op, Pair) and not role.pair:
                self.error(f"`{ins.full_opcode}` has no `|p` predicate destination", ins.span, at=str(op))
        # Vector operands of .v2/.v4 instructions.
        if width is not None and kind in (isa.RoleKind.DST, isa.RoleKind.SRC) and role.name in ("d", "a", "b") \
                and ins.opcode in ("ld", "st", "ldu", "ld.global.nc", "st.async", "tex", "suld", "sust",
                                   "atom", "red", "multimem.ld_reduce", "multimem.st", "multimem.red"):
            what = "destination" if kind is isa.RoleKind.DST else "source"
            if not isinstance(op, Vector):
                self.error(f"`{ins.full_opcode}` needs a {width}-element vector {what}, found `{op}`", ins.span, at=str(op))
                return
            if len(op.elements) != width:
                self.error(f"`{ins.full_opcode}` needs a {width}-element vector {what}, "
                           f"found {len(op.elements)} elements", ins.span, at=str(op))
                return
        # Register types.
        want = _role_type(role, d)
        if want is None or ins.opcode.startswith(_FRAGMENT_OPS):
            return
        if isinstance(op, Vector) and width is None and op.elements:
            # mov.b64 {lo, hi}, %rd: a brace vector packs equal parts of the type (§9.7.9.1).
            want = _part_type(want, len(op.elements))
            if want is None:
                self.error(f"`{ins.full_opcode}` cannot split .{d.types[0].value} into "
                           f"{len(op.elements)} parts", ins.span, at=str(op))
                return
        for reg in _registers_of(op):
            have = self._lookup_quiet(reg, scope)
            if have is None:
                continue
            if not _compatible(want, have, ins.opcode, ins.mod("wide") is not None):
                self.error(f"`{reg}` is .{have.value}, but `{ins.full_opcode}` needs a "
                           f"{_describe(want)} operand here", ins.span, at=str(reg))


    def _sink_ok(self, ins: Instruction, op: Sink | Vector, role: isa.OperandRole) -> bool:
        """The sink `_` (§6.3, §9.7.13.4): a whole destination only of the instructions whose
        result may be discarded (ptxas 13.0, tests/data/ptxas_sink_pairs.json: atom, setp, lop3,
        mbarrier.arrive[_drop]; elsewhere "Result discard mode is not allowed"); an element of a
        vector destination, but not every element ("Unable to infer type of vector
        elements"); never a source ("Sink '_' not allowed as a source operand")."""
        if isinstance(op, Vector):
            sinks = [e for e in op.elements if isinstance(e, Sink)]
            if not sinks:
                return True
            if role.kind is not isa.RoleKind.DST:
                self.error(f"`_` cannot be a source operand of `{ins.full_opcode}`: it only discards "
                           "a destination", ins.span, at=str(op))
            elif len(sinks) == len(op.elements):
                self.error(f"vector destination `{op}` of `{ins.full_opcode}` discards every element; "
                           "name at least one register", ins.span, at=str(op))
            else:
                return True
            return False
        if role.kind is not isa.RoleKind.DST:
            self.error(f"`_` cannot be a source operand of `{ins.full_opcode}`: it only discards "
                       "a destination", ins.span, at="_")
        elif ins.opcode not in _SINK_DESTINATION_OK:
            self.error(f"`{ins.full_opcode}` cannot discard its result: `_` is the destination only "
                       "of atom, setp, lop3 and mbarrier.arrive; name a register", ins.span, at="_")
        else:
            return True
        return False

    def _pair_ok(self, ins: Instruction, op: Pair, scope: Scope) -> bool:
        """The `|p` half is a predicate; a sink `_|p` only where the value may be discarded
        (ptxas 13.0 refuses it on shfl: "Result discard mode is not allowed")."""
        if isinstance(op.first, Sink) and ins.opcode not in ("setp", "lop3", "elect.sync"):
            self.error(f"`{op}`: `{ins.full_opcode}` cannot discard its result; name a register "
                       "before `|`", ins.span, at=str(op))
            return False
        have = self._lookup_quiet(op.second, scope) if isinstance(op.second, Register) else None
        if have is not None and have is not ScalarType.PRED:
            self.error(f"`{op.second}` is .{have.value}, but the `|` half of `{ins.full_opcode}`'s "
                       "destination is a .pred", ins.span, at=str(op.second))
            return False
        return True

    @staticmethod
    def _lookup_quiet(r: Register, scope: Scope) -> ScalarType | None:
        decl = scope.lookup(r.name)
        if decl is not None:
            return decl.type
        sreg = lookup_special(r.name, r.component)
        return sreg.type if sreg else None


@dataclass
class _FnContext:
    fn: Function
    labels: dict[str, Span]
    protos: dict[str, CallPrototype]
    tables: dict[str, BranchTargets]
    undeclared: list[str] = field(default_factory=list)   # per instruction


# Opcodes whose whole destination may be the sink `_` (ptxas 13.0's verdicts, see _sink_ok).
_SINK_DESTINATION_OK = frozenset({"atom", "setp", "lop3", "mbarrier.arrive", "mbarrier.arrive_drop"})

# Tensor-core fragments are vectors of 32-bit registers whatever the element type.
_FRAGMENT_OPS = ("wmma", "mma", "ldmatrix", "stmatrix", "movmatrix", "wgmma", "tcgen05")


def _init_shape_problem(init: InitList, dims: tuple[int | None, ...]) -> str | None:
    """Why ``{...}`` does not fit the declared dimensions (PTX ISA §5.4.4), or None."""
    stack = [(init, 0)]
    while stack:
        lst, level = stack.pop()
        if level >= len(dims):
            return "too many levels of `{ }` for the declared dimensions" if dims else \
                "a scalar variable takes a single value, not `{ }`"
        n = dims[level]
        if n is not None and len(lst.elements) > n:
            return f"{len(lst.elements)} elements for a dimension of {n}"
        for e in lst.elements:
            if isinstance(e, InitList):
                stack.append((e, level + 1))
    return None


def _part_type(t: ScalarType, parts: int) -> ScalarType | None:
    bits = t.bits // parts
    if bits * parts != t.bits or bits < 8:
        return None
    return ScalarType(f"b{bits}")


def _registers_of(op):
    if isinstance(op, Vector):
        yield from (e for e in op.elements if isinstance(e, Register))
        return
    if isinstance(op, Negated):
        op = op.operand
    elif isinstance(op, (Pair,)):
        op = op.first
    elif isinstance(op, Offset):
        op = op.base
    if isinstance(op, Register):
        yield op


_DATA_ROLES = (isa.RoleKind.DST, isa.RoleKind.SRC)


def _role_type(role: isa.OperandRole, d: isa.Decoded) -> ScalarType | None:
    """The type a register in this operand role must be compatible with (None: unchecked)."""
    t = role.typing
    if t is None:
        if role.kind in _DATA_ROLES and len(d.types) == 1:
            return d.types[0]
        return None
    if t.startswith("t") and t[1:].isdigit():
        i = int(t[1:])
        return d.types[i] if i < len(d.types) else None
    try:
        return ScalarType(t)
    except ValueError:
        return None


def _describe(t: ScalarType) -> str:
    if t is ScalarType.PRED:
        return ".pred"
    return f".{t.value} ({t.bits}-bit)"


@lru_cache(maxsize=4096)
def _compatible(want: ScalarType, have: ScalarType, opcode: str, wide: bool) -> bool:
    """PTX ISA §6.4.1 type checking, §6.4.2 wider operands for ld/st/cvt."""
    if want is ScalarType.PRED or have is ScalarType.PRED:
        return want is have
    wk, hk = want.kind, have.kind
    if wk == "opaque" or hk == "opaque":
        return have.bits == 64 or hk == "opaque"
    if wk == "b" or hk == "b":
        kind_ok = True
    elif wk in "us":
        kind_ok = hk in "us"
    else:
        kind_ok = hk == "f"
    if not kind_ok:
        return False
    if have.bits == want.bits:
        return True
    if have.bits > want.bits and opcode in _WIDE_OK:
        return True
    # `.wide` forms produce (and mad.wide adds) double width; 8-bit types live in 16/32-bit registers.
    if wide:
        return True
    return want.bits == 8 and have.bits in (16, 32)


def verify_module(module: Module, lines: list[str] | None = None) -> list[Diagnostic]:
    # Calls are checked against their callees here too (ptxas's rules, ir/calls_check.py), so
    # every executor and `translate` refuse a mismatched call at load time, located.
    from .calls_check import call_diagnostics
    return Verifier(module, lines or []).run() + call_diagnostics(module, lines or [])
