"""Lark Transformer that builds IR nodes directly while the LALR parser runs.

Callbacks never raise for problems in the user's PTX: they record a Diagnostic
and build a best-effort node, so one parse reports every error of a file.
"""

from __future__ import annotations

from lark import Token, Transformer

from .. import isa
from ..errors import Diagnostic
from ..ir.nodes import (
    Address, Alias, Block, BranchTargets, CallPrototype, Function, FunctionKind, ImmKind, Immediate, InitList, Instruction, Label, Linkage, Negated, Pair, ParenList,
    PerfDirective, Pragma, Register, Section, Span, Symbol, SymbolRef, VarDecl, Vector,
)
from ..ir.types import ScalarType, StateSpace
from .bind import bind_registers
from .body import SIMPLE_DECL, classify, label_name
from .operands import parse_instruction
from .literals import (
    literal_error,
    f32_immediate, f64_immediate, float_immediate, parse_file_directive, parse_int, parse_loc,
)


class _Header:
    """version/target/address_size collected while parsing items."""

    __slots__ = ("kind", "value", "token")

    def __init__(self, kind: str, value, token: Token | None = None) -> None:
        self.kind, self.value, self.token = kind, value, token


class IRBuilder(Transformer):
    """Reset ``filename``, ``lines`` and ``diagnostics`` before each parse."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.filename: str | None = None
        self.lines: list[str] = []
        self.diagnostics: list[Diagnostic] = []
        self.item_re = None   # set by the parser from the grammar's RUN terminal
        self.bare_regs: set[str] = set()   # `.reg` names declared without `%` so far

    # ------------------------------------------------------------ helpers
    def span(self, tok: Token) -> Span:
        return Span(self.filename, tok.line, tok.column, tok.end_line, tok.end_column)

    def error(self, message: str, line: int | None, column: int | None, *, syntax: bool = False) -> None:
        src = self.lines[line - 1] if line and 0 < line <= len(self.lines) else None
        self.diagnostics.append(Diagnostic(message, self.filename, line, column, src,
                                           category="syntax" if syntax else "semantic"))

    def _int(self, tok: Token) -> int:
        try:
            return parse_int(tok)[0]
        except ValueError as e:
            self.error(literal_error(str(tok), e), tok.line, tok.column, syntax=True)
            return 0

    # ------------------------------------------------------------ module
    @staticmethod
    def _append(c):
        if len(c) == 1:
            return [c[0]]
        c[0].append(c[1])
        return c[0]

    items = stmts = _append

    def start(self, c):
        out = []
        for item in (c[0] or []) if c else []:
            if isinstance(item, list):
                out.extend(item)
            else:
                out.append(item)
        return out

    def version(self, c):
        tok = c[0]
        if "." not in tok:
            self.error(f"`.version {tok}` is malformed; expected MAJOR.MINOR, such as 9.0", tok.line, tok.column,
                       syntax=True)
            return _Header("version", f"{tok}.0", tok)
        return _Header("version", str(tok), tok)

    def target(self, c):
        return _Header("target", tuple(str(t) for t in c), c[0])

    def address_size(self, c):
        return _Header("address_size", self._int(c[0]), c[0])

    def file_dir(self, c):
        tok = c[0]
        node = parse_file_directive(tok, self.span(tok))
        if node is None:
            self.error('malformed `.file` directive; expected `.file N "path"[, timestamp, size]`',
                       tok.line, tok.column)
        return node if node is not None else []

    def section(self, c):
        tok = c[0]
        head, _, rest = tok.partition("{")
        name = head.split()[1]
        return Section(name, rest.rsplit("}", 1)[0], self.span(tok))

    def pragma(self, c):
        return Pragma('", "'.join(s[1:-1] for s in c), self.span(c[0]))

    def alias(self, c):
        return Alias(str(c[0]), str(c[1]), self.span(c[0]))

    def decorated(self, c):
        linkages = [Linkage(t[1:]) for t in c[:-1]]
        body = c[-1]
        linkage = linkages[-1] if linkages else None
        if len(set(linkages)) > 1:
            t = c[1]
            self.error(f"conflicting linkage directives {' '.join('.' + l.value for l in linkages)}",
                       t.line, t.column)
        if isinstance(body, Function):
            return _replace(body, linkage=linkage)
        return [_replace(d, linkage=linkage) for d in body]

    # ------------------------------------------------------------ functions
    def function(self, c):
        kind_tok = c[0]
        kind = FunctionKind(kind_tok[1:])
        returns: tuple = ()
        params: tuple = ()
        name = None
        directives, attributes, noreturn, body = [], [], False, None
        for item in c[1:]:
            if isinstance(item, tuple) and item and item[0] == "ret":
                returns = item[1]
            elif isinstance(item, tuple) and item and item[0] == "params":
                params = item[1]
            elif isinstance(item, Token) and item.type == "NAME":
                name = str(item)
            elif isinstance(item, PerfDirective):
                directives.append(item)
            elif isinstance(item, tuple) and item and item[0] == "noreturn":
                noreturn = True
            elif isinstance(item, tuple) and item and item[0] == "attr":
                attributes.append(item[1])
            elif isinstance(item, Block):
                body = item
        if returns and kind is FunctionKind.ENTRY:
            self.error(f"kernel `{name}` (.entry) cannot have return parameters",
                       kind_tok.line, kind_tok.column)
        f = Function(name or "", kind, params, returns, body, None, tuple(directives),
                     noreturn, tuple(attributes), self.span(kind_tok))
        if self.bare_regs:
            # This function (its parameters and body reduce before it) declared `%`-less registers.
            self.bare_regs = set()
            f = bind_registers(f)
        return f

    def ret_params(self, c):
        return ("ret", tuple(p for p in c if p is not None))

    def param_list(self, c):
        return ("params", tuple(p for p in c if p is not None))

    def param(self, c):
        decls = self._make_decls(c[:-1], [c[-1]], default_space=StateSpace.PARAM)
        return decls[0]

    def perf(self, c):
        return PerfDirective(c[0][1:], tuple(self._int(t) for t in c[1:] if t is not None))

    def noreturn(self, c):
        return ("noreturn",)

    def fattr(self, c):
        return ("attr", " ".join(c[0].split()))

    def fpragma(self, c):
        return ("pragma", tuple(s[1:-1] for s in c))

    # ------------------------------------------------------------ declarations
    def var_decl(self, c):
        mods = [x for x in c if isinstance(x, tuple) and x[0] != "decl"]
        decls = [x for x in c if isinstance(x, tuple) and x[0] == "decl"]
        return self._make_decls(mods, decls)

    def decl_mod(self, c):
        tok = c[0]
        t = tok.type
        if t == "SPACE":
            base = tok[1:].split("::")[0]
            return ("space", StateSpace(base), tok)
        if t == "TYPE":
            return ("type", ScalarType(tok[1:]), tok)
        if t == "VEC":
            return ("vec", int(tok[2:]), tok)
        if t == "PTR":
            return ("ptr", None, tok)
        if t == "ATTRIBUTE":
            return ("attr", " ".join(tok.split()), tok)
        return ("align", self._int(c[1]), tok)

    def declarator(self, c):
        tok = c[0]
        dims, init = (), None
        for x in c[1:]:
            if isinstance(x, tuple) and x and x[0] == "dims":
                dims = x[1]
            elif x is not None:
                init = x
        if tok.type == "PREG":
            name, _, n = tok.partition("<")
            return ("decl", name, (), None, self._int(Token("INT", n[:-1], line=tok.line, column=tok.column)), tok)
        return ("decl", str(tok), dims, init, None, tok)

    def dims(self, c):
        return ("dims", tuple(c))

    def dim(self, c):
        if not c or c[0] is None:
            return None
        n = self._int(c[0])
        if n <= 0:
            self.error(f"array dimension must be positive, found {n}", c[0].line, c[0].column)
        return n

    def _make_decls(self, mods, declarators, default_space: StateSpace | None = None):
        space = type_ = vector = align = ptr_space = ptr_align = None
        attributes: list[str] = []
        after_ptr = False
        first_tok = mods[0][2] if mods else declarators[0][5]
        for kind, value, tok in mods:
            if kind == "space":
                if after_ptr:
                    ptr_space = value
                elif space is not None:
                    self.error(f"declaration has two state spaces `.{space.value}` and `{tok}`",
                               tok.line, tok.column)
                else:
                    space = value
            elif kind == "type":
                if type_ is not None:
                    self.error(f"declaration has two types `.{type_.value}` and `{tok}`", tok.line, tok.column)
                type_ = value
            elif kind == "vec":
                vector = value
            elif kind == "ptr":
                after_ptr = True
            elif kind == "attr":
                attributes.append(value)
            elif kind == "align":
                if after_ptr:
                    ptr_align = value
                else:
                    align = value
                if value <= 0 or value & (value - 1):
                    self.error(f"alignment {value} is not a power of two", tok.line, tok.column)
        if space is None:
            space = default_space
            if space is None:
                self.error("declaration needs a state space (.reg, .global, .shared, .local, .const, .param)",
                           first_tok.line, first_tok.column)
                space = StateSpace.REG
        if type_ is None:
            self.error("declaration needs a type (for example .b32 or .f32)", first_tok.line, first_tok.column)
            type_ = ScalarType.B8
        out = []
        if space is StateSpace.REG:
            # Inline-asm scopes declare registers without `%`; their uses must become Registers.
            self.bare_regs.update(d[1] for d in declarators if not d[1].startswith("%"))
        for _, name, dims, init, count, tok in declarators:
            out.append(VarDecl(space, type_, name, vector, dims, align, None, init, count,
                               ptr_space, ptr_align, tuple(attributes), self.span(tok)))
        return out

    # initialisers
    def init(self, c):
        return c[0]

    def init_list(self, c):
        return InitList(tuple(c))

    def init_int_list(self, c):
        # Decimal only (the terminal guarantees it); int() copes with leading zeros
        # where PTX would read octal, so those are re-read through parse_int.
        items = c[0][1:-1].split(",")
        return InitList(tuple(Immediate(int(x)) if not x.strip().lstrip("-").startswith("0") or x.strip() in ("0", "-0")
                              else Immediate(self._int_text(x.strip(), c[0])) for x in items))

    def _int_text(self, text: str, tok: Token) -> int:
        try:
            return parse_int(text)[0]
        except ValueError as e:
            self.error(literal_error(text, e), tok.line, tok.column, syntax=True)
            return 0

    def init_sym(self, c):
        return SymbolRef(str(c[0]))

    def init_sym_off(self, c):
        return SymbolRef(str(c[0]), self._int(c[1]))

    def init_generic(self, c):
        return self._generic(c[0], c[1], 0)

    def init_generic_off(self, c):
        return self._generic(c[0], c[1], self._int(c[2]))

    def _generic(self, kw: Token, name: Token, off: int):
        if kw != "generic":
            self.error(f"unknown initialiser operator `{kw}(...)`; expected `generic(symbol)`", kw.line, kw.column)
        return SymbolRef(str(name), off, generic=True)

    # ------------------------------------------------------------ bodies
    def block(self, c):
        out = []
        brace = c[0]
        for s in (c[1] or []) if len(c) > 1 else []:
            if isinstance(s, list):
                out.extend(s)
            elif s is not None:
                out.append(s)
        return Block(tuple(out), self.span(brace))

    def local_decl(self, c):
        linkages = [Linkage(t[1:]) for t in c[:-1]]
        decls = c[-1]
        if linkages:
            decls = [_replace(d, linkage=linkages[-1]) for d in decls]
        return decls

    def callprototype(self, c):
        label = c[0]
        returns: tuple = ()
        params: tuple = ()
        noreturn = False
        for item in c[2:]:
            if isinstance(item, tuple) and item[0] == "ret":
                returns = item[1]
            elif isinstance(item, tuple) and item[0] == "params":
                params = item[1]
            elif isinstance(item, Token) and item.type == "NORETURN":
                noreturn = True
        return CallPrototype(label.rstrip(": \t"), returns, params, noreturn, self.span(label))

    def targets(self, c):
        label, kind = c[0], c[1]
        return BranchTargets(label.rstrip(": \t"), kind[1:], tuple(str(n) for n in c[2:]), self.span(label))

    def run(self, c):
        tok = c[0]
        text = str(tok)
        out: list = []
        item_re = self.item_re
        line, last, line_start = tok.line, 0, -tok.column   # column = offset - line_start
        filename = self.filename
        for m in item_re.finditer(text):
            off = m.start(1)
            nl = text.count("\n", last, off)
            if nl:
                line += nl
                line_start = text.rfind("\n", last, off) + 1 - 1
            last = off
            item = m.group(1)
            kind = classify(item)
            if kind == "instruction":
                node = self._instruction(item, line, off - line_start, off, text, tok)
                if node is not None:
                    out.append(node)
            elif kind == "label":
                out.append(Label(label_name(item), Span(filename, line, off - line_start)))
            elif kind == "decl":
                node = self._simple_decl(item, line, off - line_start)
                if node is not None:
                    out.append(node)
            elif kind == "loc":
                node = parse_loc(item, Span(filename, line, off - line_start))
                if node is None:
                    self.error("malformed `.loc` directive; expected `.loc file line column[, ...]`",
                               line, off - line_start, syntax=True)
                else:
                    out.append(node)
        return out

    def _simple_decl(self, item: str, line: int, column: int) -> VarDecl | None:
        m = SIMPLE_DECL.fullmatch(item)
        if m is None:  # the RUN_ITEM pattern and SIMPLE_DECL describe the same shape
            self.error("malformed declaration", line, column)
            return None
        space, align, vec, type_name, name, count, dim = m.groups()
        try:
            type_ = ScalarType(type_name)
        except ValueError:
            self.error(f"unknown type `.{type_name}` in declaration; expected one of "
                       + " ".join("." + t.value for t in ScalarType), line, column + m.start(4) - 1)
            return None
        span = Span(self.filename, line, column + m.start(5))   # the declared name, as elsewhere
        align_v = int(align) if align else None
        if align_v is not None and (align_v <= 0 or align_v & (align_v - 1)):
            self.error(f"alignment {align_v} is not a power of two", line, column + m.start(2))
        if space == "reg" and not name.startswith("%"):
            self.bare_regs.add(name)
        return VarDecl(StateSpace(space), type_, name, int(vec) if vec else None,
                       (int(dim),) if dim else (), align_v, None, None,
                       int(count) if count else None, span=span)

    def _instruction(self, item: str, line: int, column: int, base: int, text: str, tok: Token):
        def error(message: str, offset: int, syntax: bool = True) -> None:
            ln, col = self._position(line, column, item, offset)
            self.error(message, ln, col, syntax=syntax)

        parsed = parse_instruction(item, error)
        if parsed is None:
            return None
        guard, opcode, op_off, operands = parsed
        ln, col = (line, column + op_off) if op_off == 0 or "\n" not in item[:op_off] else \
            self._position(line, column, item, op_off)
        span = Span(self.filename, ln, col)
        try:
            d = isa.decode(opcode)
        except isa.DecodeError as e:
            parts = opcode.split(".")
            error(e.message, op_off + (len(".".join(parts[:e.part])) + 1 if e.part else 0), syntax=False)
            return Instruction(parts[0], tuple(parts[1:]), operands, guard, span=span)
        return Instruction(d.opcode, d.modifiers, operands, guard, d.mods, d.types, d.form.name, span)

    @staticmethod
    def _position(line: int, column: int, text: str, offset: int) -> tuple[int, int]:
        nl = text.count("\n", 0, offset)
        if not nl:
            return line, column + offset
        return line + nl, offset - text.rfind("\n", 0, offset)

    # ------------------------------------------------------------ operands
    def int_imm(self, c):
        tok = c[0]
        try:
            value, unsigned = parse_int(tok)
        except ValueError as e:
            self.error(literal_error(str(tok), e), tok.line, tok.column, syntax=True)
            value, unsigned = 0, False
        return Immediate(value, ImmKind.INT, unsigned)

    def f32_imm(self, c):
        return f32_immediate(c[0])

    def f64_imm(self, c):
        return f64_immediate(c[0])

    def float_imm(self, c):
        return float_immediate(c[0])


def _register(text: str) -> Register:
    if "." in text:
        name, _, comp = text.partition(".")
        return Register(name, comp)
    return Register(str(text))


def _replace(node, **changes):
    from dataclasses import replace
    return replace(node, **changes)
