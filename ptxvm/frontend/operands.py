"""Parse the inside of one INSTRUCTION token: guard, dotted opcode, operands.

The grammar of this small language is written out in grammar/ptx.lark next to
the INSTRUCTION terminal. This is a hand-written recursive-descent parser over
one compiled regex, because an instruction is the hot path of every PTX file.
"""

from __future__ import annotations

import re
from typing import Callable

from ..ir.nodes import (
    Address, Guard, ImmKind, Immediate, Negated, Offset, Operand, Pair, ParenList, Register, Sink, Symbol,
    Vector,
)
from ..ir.sregs import lookup_special
from .literals import literal_error, parse_int

# `warpSize` compiles to this predefined constant (PTX ISA 9.0 §4.5, Table "Predefined
# identifiers"); ptxas takes it wherever an integer constant may stand.
WARP_SZ = "WARP_SZ"
WARP_SIZE = 32
# Vector register elements may be named .x .y .z .w or .r .g .b .a (§5.4.2.1): one spelling in the IR.
_RGBA = {"r": "x", "g": "y", "b": "z", "a": "w"}

_HEAD = re.compile(r"(?:@(!?)([%\w$][\w$]*(?:\.[xyzw])?)[ \t]+)?([a-z][a-z0-9_]*(?:\.[A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*)*)")
_TOKEN = re.compile(r"""
    (?P<ws>(?:\s+|//[^\n]*|/\*.*?\*/)+)
  | (?P<f32>0[fF][0-9a-fA-F]{8}(?![\w.]))
  | (?P<f64>0[dD][0-9a-fA-F]{16}(?![\w.]))
  | (?P<flt>-?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+)
  | (?P<int>-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)U?(?![\w.]))
  | (?P<badf>0[fFdD][0-9a-fA-F]*(?![\w.]))
  | (?P<reg>%[\w$]+(?:\.[A-Za-z]\w*)?)
  | (?P<name>[A-Za-z_$][\w$]*(?:\.[A-Za-z]\w*)?)
  | (?P<punct>[\[\]{}(),|!+*;~<>/&^-])
  | (?P<bad>.)
""", re.X | re.S)

# Tokens after an integer literal that continue a constant expression.
_CONST_FOLLOW = frozenset({"+", "*", "-", "/", "<", ">", "&", "^"})

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_CLOSE = {"[": "]", "{": "}", "(": ")"}
_OPEN = {v: k for k, v in _CLOSE.items()}

ErrorFn = Callable[[str, int], None]   # (message, offset into the instruction text)


class _Fail(Exception):
    pass


def _register(text: str) -> Register:
    if "." in text:
        name, _, comp = text.partition(".")
        if comp in _RGBA and lookup_special(name) is None:
            comp = _RGBA[comp]
        return Register(name, comp)
    return Register(text)


class _Cursor:
    __slots__ = ("toks", "i", "error")

    def __init__(self, toks: list[tuple[str, str, int]], error: ErrorFn) -> None:
        self.toks, self.i, self.error = toks, 0, error

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def take(self) -> tuple[str, str, int]:
        t = self.toks[self.i]
        self.i += 1
        return t

    def fail(self, message: str, pos: int):
        self.error(message, pos)
        raise _Fail

    def expect(self, value: str, what: str) -> None:
        kind, text, pos = self.take()
        if text != value:
            self.fail(f"expected {what}, found {_show(kind, text)}", pos)


def _show(kind: str, text: str) -> str:
    if kind == "end":
        return "end of instruction"
    if "\n" in text or (kind == "ws"):
        return "a line break"
    return f"`{text}`"


def _immediate(kind: str, text: str) -> Immediate:
    if kind == "int":
        value, unsigned = parse_int(text)
        return Immediate(value, ImmKind.INT, unsigned)
    if kind == "f32":
        return Immediate(int(text[2:], 16), ImmKind.F32)
    if kind == "f64":
        return Immediate(int(text[2:], 16), ImmKind.F64)
    return Immediate(float(text), ImmKind.FLOAT)


def _named(text: str) -> Register | Symbol:
    """A name operand: `%`-registers and `v.x` elements are registers; bare names are symbols
    until the builder binds them to the `.reg` declarations in scope."""
    if text[0] == "%" or "." in text:
        return _register(text)
    return Symbol(text)


def _is_const_start(kind: str, text: str) -> bool:
    """Can an operand that is an integer constant expression start here? (`(` opens a call's
    operand list in operand position, so only an offset after `+` may start with it.)"""
    return kind == "int" or (kind == "name" and text == WARP_SZ) or text in ("-", "~")


def _is_offset_start(kind: str, text: str) -> bool:
    return _is_const_start(kind, text) or text in ("(", "+", "!")


# Binary operators of integer constant expressions (PTX ISA §4.6.2, C precedence; higher binds
# tighter). `%` is not here: `7%2` lexes as a register. Comparisons, `&&`, `||` and `?:` are
# not folded (ptxvm reports them as unexpected characters). `|` only inside parentheses: outside
# them it is the `d|p` pair.
_BINARY = {"*": 6, "/": 6, "+": 5, "-": 5, "<<": 4, ">>": 4, "&": 3, "^": 2, "|": 1}


def _binary_op(c: _Cursor, in_parens: bool) -> tuple[str, int] | None:
    """The binary operator at the cursor (not taken), as (operator, tokens it spans)."""
    kind, text, _ = c.peek()
    if kind == "int" and text.startswith("-"):
        return "-lit", 0          # `a-4` lexes as `a` `-4`: the literal carries the minus
    if text in ("<", ">") and c.toks[c.i + 1][1] == text:
        return text * 2, 2
    if text in _BINARY and (text != "|" or in_parens):
        return text, 1
    return None


def _const_expr(c: _Cursor, min_prec: int = 0, in_parens: bool = False) -> int:
    """An integer constant expression, folded (§4.6.2: ptxas folds them, so the IR holds the
    value): unary `+ - ~ !`, parentheses, `* /`, `+ -`, `<< >>`, `&`, `^`, `|`; 64-bit."""
    value = _const_unary(c, in_parens)
    while True:
        op = _binary_op(c, in_parens)
        if op is None:
            return value
        name, width = op
        prec = _BINARY["-" if name == "-lit" else name]
        if prec < min_prec:
            return value
        pos = c.peek()[2]
        c.i += width
        k, t, p = c.peek()
        if name != "-lit" and not _is_offset_start(k, t):
            c.fail(f"expected an integer constant after `{name}`, found {_show(k, t)}", p)
        rhs = _const_expr(c, prec + 1, in_parens)
        if name in ("+", "-lit"):
            value += rhs
        elif name == "-":
            value -= rhs
        elif name == "*":
            value *= rhs
        elif name == "/":
            if rhs == 0:
                c.fail("division by zero in a constant expression", pos)
            q = abs(value) // abs(rhs)           # C: the quotient truncates toward zero
            value = q if (value < 0) == (rhs < 0) else -q
        elif name == "<<":
            value = _wrap64(value << (rhs & 63))
        elif name == ">>":
            value >>= rhs & 63
        elif name == "&":
            value &= rhs
        elif name == "^":
            value ^= rhs
        else:
            value |= rhs


def _wrap64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def _const_unary(c: _Cursor, in_parens: bool) -> int:
    kind, text, pos = c.take()
    if text == "+":
        return _const_unary(c, in_parens)
    if text == "-":
        return -_const_unary(c, in_parens)
    if text == "~":
        return ~_const_unary(c, in_parens)
    if text == "!":
        return int(not _const_unary(c, in_parens))
    if text == "(":
        value = _const_expr(c, 0, True)
        c.expect(")", "`)` closing the constant expression")
        return value
    if kind == "name" and text == WARP_SZ:
        return WARP_SIZE
    if kind == "int":
        return _offset(c, text, pos)
    c.fail(f"expected an integer constant, found {_show(kind, text)}", pos)
    raise AssertionError  # unreachable


def _constant(c: _Cursor) -> Immediate:
    return Immediate(_const_expr(c), ImmKind.INT)


def _after_name(c: _Cursor, base: Register | Symbol) -> Operand:
    """A register or symbol, then maybe `|p` (a predicate destination) or `+k` (an address
    expression used as a value, §6.4.1)."""
    t = c.peek()[1]
    if t == "|":
        c.take()
        k2, t2, p2 = c.take()
        if t2 == "_":
            # `d|_` discards the predicate: the unpaired form (ptxas takes it after any
            # destination; instructions that need the predicate then say so in the verifier).
            return base
        return Pair(base, _pair_predicate(c, k2, t2, p2))
    if t == "+":
        c.take()
        k2, t2, p2 = c.peek()
        if not _is_offset_start(k2, t2):
            c.fail(f"expected an integer constant after `{base}+`, found {_show(k2, t2)}", p2)
        return Offset(base, _const_expr(c))
    return base


def _pair_predicate(c: _Cursor, kind: str, text: str, pos: int) -> Operand:
    if kind not in ("reg", "name") or text == WARP_SZ or text == "_":
        c.fail(f"expected a predicate register after `|`, found {_show(kind, text)}", pos)
    return _named(text)


def _sink(c: _Cursor) -> Operand:
    """`_`, or `_|p`: a discarded destination with its predicate kept (setp §9.7.6.2, lop3
    §9.7.8.6; the verifier refuses it elsewhere). `_|_` is no operand at all (ptxas: a syntax error)."""
    if c.peek()[1] != "|":
        return Sink()
    c.take()
    k2, t2, p2 = c.take()
    if t2 == "_":
        c.fail("`_|_` discards both destinations; write one register or `_` alone", p2)
    return Pair(Sink(), _pair_predicate(c, k2, t2, p2))


def _operand(c: _Cursor) -> Operand:
    kind, text, pos = c.peek()
    if _is_const_start(kind, text):
        if kind == "int" and c.toks[c.i + 1][1] not in _CONST_FOLLOW and \
                not (c.toks[c.i + 1][0] == "int" and c.toks[c.i + 1][1].startswith("-")):
            c.take()
            try:
                return _immediate(kind, text)
            except ValueError as e:
                c.fail(literal_error(text, e), pos)
        return _constant(c)
    c.take()
    if kind == "reg":
        return _after_name(c, _register(text))
    if kind in ("int", "f32", "f64", "flt"):
        try:
            return _immediate(kind, text)
        except ValueError as e:
            c.fail(literal_error(text, e), pos)
    if kind == "name":
        if text == "_":
            return _sink(c)
        return _after_name(c, _named(text))
    if kind == "badf":
        digits = 8 if text[1] in "fF" else 16
        c.fail(f"`{text}`: a `{text[:2]}` floating-point literal needs exactly {digits} hex digits", pos)
    if text == "!":
        k2, t2, p2 = c.take()
        if k2 != "reg" and k2 != "name":
            c.fail(f"expected a predicate register after `!`, found {_show(k2, t2)}", p2)
        return Negated(_named(t2))
    if text == "[":
        return _address(c, pos)
    if text == "(" and (value := _paren_expr(c)) is not None:
        return Immediate(value, ImmKind.INT)
    if text in ("{", "("):
        items = _list(c, _CLOSE[text], allow_empty=text == "(")
        return Vector(items) if text == "{" else ParenList(items)
    c.fail(f"expected an operand, found {_show(kind, text)}", pos)
    raise AssertionError  # unreachable


def _paren_expr(c: _Cursor) -> int | None:
    """`(1+2)*3`: a constant expression that starts with `(` (its `(` taken), or None (cursor
    unchanged) where the parentheses are an operand list (call's `(a, b)`; `(k)` alone stays
    one, as before)."""
    start = c.i
    depth, i = 1, start
    while depth and c.toks[i][0] != "end":   # the matching `)`
        t = c.toks[i][1]
        depth += (t == "(") - (t == ")")
        i += 1
    if depth:
        return None
    c.i = i
    follows = _binary_op(c, False) is not None
    c.i = start
    if not follows:
        return None
    c.i -= 1
    return _const_expr(c)


def _list(c: _Cursor, close: str, allow_empty: bool) -> tuple[Operand, ...]:
    items: list[Operand] = []
    if c.peek()[1] == close:
        c.take()
        if not allow_empty:
            c.fail("empty `{}` vector", c.toks[c.i - 1][2])
        return ()
    while True:
        kind, text, pos = c.peek()
        if text in ("{", "(", "["):
            # Checked before descending: lists never nest in PTX, and deep nesting must
            # not exhaust Python's stack.
            c.fail(f"`{text}` cannot appear inside a `{_OPEN[close]}{close}` list; elements are "
                   "registers, constants, names or `_`", pos)
        items.append(_operand(c))
        if type(items[-1]) is Offset:
            # ptxas takes `reg+imm` as a whole operand only, never as a list element.
            c.fail(f"`{items[-1]}`: an expression `+` cannot be an element of a `{_OPEN[close]}{close}` list",
                   pos)
        kind, text, pos = c.take()
        if text == close:
            return tuple(items)
        if text != ",":
            c.fail(f"expected `,` or `{close}`, found {_show(kind, text)}", pos)


def _offset(c: _Cursor, text: str, pos: int) -> int:
    try:
        return parse_int(text)[0]
    except ValueError as e:
        c.fail(literal_error(text, e), pos)
        raise AssertionError  # unreachable


def _address(c: _Cursor, open_pos: int) -> Address:
    kind, text, pos = c.take()
    base: Register | Symbol | None
    offset = 0
    if kind == "reg":
        base = _register(text)
    elif kind == "name" and text != WARP_SZ:
        base = _named(text)
    elif _is_const_start(kind, text):
        base = None
        c.i -= 1
        offset = _const_expr(c)
    else:
        c.fail(f"expected a register, variable or address inside `[ ]`, found {_show(kind, text)}", pos)
    if base is not None:
        k, t, p = c.peek()
        if t == "+":
            c.take()
            k, t, p = c.peek()
            if not _is_offset_start(k, t):
                c.fail(f"expected an integer offset after `+`, found {_show(k, t)}", p)
            offset = _const_expr(c)
        elif (k == "int" and t.startswith("-")) or t == "-":
            # ptxas 13.0: "Parsing error near '-'"; a negative offset is written `[a+-4]` (§6.4.1).
            fix = f"[{base}+{t}]" if t != "-" else f"[{base}+-k]"
            c.fail(f"address offsets are added (ptxas refuses `-` after the base inside `[ ]`): "
                   f"write `{fix}`", p)
    extra: list[Operand] = []
    while True:
        k, t, p = c.take()
        if t == "]":
            return Address(base, offset, tuple(extra))
        if t != ",":
            c.fail(f"expected `]`, found {_show(k, t)}", p)
        extra.append(_operand(c))


_ATOM = re.compile(r"""
    (?P<reg>%[\w$]+(?:\.[A-Za-z]\w*)?)
  | (?P<f32>0[fF][0-9a-fA-F]{8})
  | (?P<f64>0[dD][0-9a-fA-F]{16})
  | (?P<int>-?(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)U?)
  | (?P<flt>-?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+)
  | (?P<name>[A-Za-z_$][\w$]*(?:\.[A-Za-z]\w*)?)
  | \[[ \t]*(?P<abase>%[\w$]+|[A-Za-z_$][\w$]*)[ \t]*(?:\+[ \t]*(?P<aoff>-?(?:0[xX][0-9a-fA-F]+|\d+)))?[ \t]*\]
""", re.X)
_SPECIAL = re.compile(r"[{(|!/\n]")
_atoms: dict[str, Operand] = {}


def _atom(text: str) -> Operand | None:
    """A simple operand (no braces, lists or pairs), memoised: they repeat a lot."""
    op = _atoms.get(text)
    if op is not None:
        return op
    m = _ATOM.fullmatch(text)
    if m is None:
        return None
    kind = m.lastgroup
    try:
        if kind == "reg":
            op = _register(text)
        elif kind == "name":
            op = Sink() if text == "_" else Immediate(WARP_SIZE) if text == WARP_SZ else _named(text)
        elif kind in ("abase", "aoff"):
            b = m.group("abase")
            if b == WARP_SZ:
                return None
            off = m.group("aoff")
            op = Address(_named(b), parse_int(off)[0] if off else 0)
        else:
            op = _immediate(kind, text)
    except ValueError:
        return None
    if len(_atoms) > 200_000:
        _atoms.clear()
    _atoms[text] = op
    return op


def parse_instruction(text: str, error: ErrorFn):
    """Split one instruction (ending in ';') into (guard, opcode, opcode offset, operands).

    Returns None after reporting an error through ``error``.
    """
    head = _HEAD.match(text)
    if head is None:  # the RUN terminal guarantees a head; defensive
        error("expected an instruction", 0)
        return None
    guard = None
    if head.group(2):
        guard = Guard(_register(head.group(2)), head.group(1) == "!")
    opcode = head.group(3)
    # Fast path: a plain comma-separated list of simple operands.
    rest = text[head.end():-1]
    if text[-1] == ";" and not _SPECIAL.search(rest):
        stripped = rest.strip()
        if not stripped:
            return guard, opcode, head.start(3), ()
        fast = [_atom(p.strip()) for p in stripped.split(",")]
        if None not in fast:
            return guard, opcode, head.start(3), tuple(fast)
    toks: list[tuple[str, str, int]] = []
    for m in _TOKEN.finditer(text, head.end()):
        kind = m.lastgroup
        if kind == "ws":
            continue
        toks.append((kind, m.group(), m.start()))
    end = len(text)
    toks.append(("end", "", end))
    c = _Cursor(toks, error)
    operands: list[Operand] = []
    try:
        if toks[0][1] != ";":
            while True:
                operands.append(_operand(c))
                kind, t, pos = c.take()
                if t == ";":
                    break
                if t != ",":
                    prev = len(_COMMENTS.sub(lambda m: " " * len(m.group()), text[:pos]).rstrip())
                    if "\n" in text[prev:pos]:
                        # The instruction ended on the line before, but for its `;`.
                        c.fail(f"expected `;` at the end of `{opcode}`", prev)
                    c.fail(f"expected `,` or `;` after operand, found {_show(kind, t)}", pos)
        else:
            c.take()
        kind, t, pos = c.take()
        if kind != "end":
            c.fail(f"unexpected {_show(kind, t)} after `;`", pos)
    except _Fail:
        return None
    except IndexError:
        error("unexpected end of instruction", end)
        return None
    bad = [t for t in toks if t[0] == "bad"]
    if bad:
        error(f"unexpected character `{bad[0][1]}` in operands", bad[0][2])
        return None
    return guard, opcode, head.start(3), tuple(operands)
