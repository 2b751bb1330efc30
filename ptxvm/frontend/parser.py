"""Parse PTX text into a verified ``ptxvm.ir.Module``.

Syntax errors are collected across the whole file: after each error the
offending statement is blanked out (line structure kept, so positions stay
true) and the parse is retried, up to ``MAX_ERRORS`` times.
"""

from __future__ import annotations

import gc
import re
import threading
from contextlib import contextmanager
import warnings
from functools import cache

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..errors import (
    Diagnostic, PtxEncodingError, PtxError, PtxSemanticError, PtxSyntaxError, PtxVersionWarning,
)
from ..ir.nodes import Block, Function, Module
from ..resources import data_dir
from .body import item_regex
from .builder import IRBuilder, _Header

MAX_ERRORS = 50
MAX_DIAGNOSTICS = 200
MAX_NESTING = 200                    # `{ }` scopes; nvcc output nests 2-3 deep
RECOVERY_BUDGET_CHARS = 20_000_000   # re-parsed characters allowed for error recovery
NEWEST_PTX_ISA = (9, 0)

# Human names of grammar terminals, for "expected ..." messages.
_TERMINAL_NAMES = {
    "SEMICOLON": "`;`", "COMMA": "`,`", "LBRACE": "`{`", "BLOCK_OPEN": "`{`", "RBRACE": "`}`", "LPAR": "`(`", "RPAR": "`)`",
    "LSQB": "`[`", "RSQB": "`]`", "VBAR": "`|`", "BANG": "`!`", "PLUS": "`+`", "EQUAL": "`=`",
    "LESSTHAN": "`<`", "MORETHAN": "`>`", "COLON": "`:`",
    "OPCODE": "an instruction", "REG": "a register", "PREG": "a register range `%r<N>`",
    "NAME": "a name", "INT": "an integer", "F32HEX": "a float literal", "F64HEX": "a double literal",
    "DECFLOAT": "a decimal float", "STRING": "a string", "LABEL": "a label", "GUARD": "a guard predicate",
    "TYPE": "a type (e.g. .b32)", "SPACE": "a state space (e.g. .reg)", "VEC": "a vector width",
    "ALIGN": "`.align`", "LINKAGE": "a linkage directive", "FUNC_KIND": "`.entry` or `.func`",
    "VERSION": "a version number like 9.0", "PERF_DIR": "a performance directive",
    "SECTION": "a `.section` block", "LOC": "`.loc`", "FILE_DIR": "`.file`", "PTR": "`.ptr`",
    "ATTRIBUTE": "`.attribute(...)`", "NORETURN": "`.noreturn`", "CALLPROTOTYPE": "`.callprototype`",
    "TARGETS_DIR": "`.branchtargets`/`.calltargets`", "$END": "end of file",
}


@cache
def _grammar_text() -> str:
    return (data_dir("grammar") / "ptx.lark").read_text(encoding="utf-8")


class _Parser:
    """One Lark LALR parser with the IR builder inlined (no parse tree is built)."""

    def __init__(self) -> None:
        self.builder = IRBuilder()
        self.lark = Lark(_grammar_text(), parser="lalr", lexer="contextual",
                         transformer=self.builder, maybe_placeholders=True,
                         propagate_positions=False, cache=False)
        self.lock = threading.Lock()
        self.builder.item_re = item_regex(_grammar_text())


@cache
def _parser() -> _Parser:
    return _Parser()


def _describe_expected(expected) -> str:
    names = []
    for t in sorted(expected):
        name = _TERMINAL_NAMES.get(t)
        if name is None:
            # Anonymous keyword terminals such as __ANON_3 or keyword strings.
            continue
        if name not in names:
            names.append(name)
    if not names:
        return ""
    if len(names) > 8:
        names = names[:8] + ["..."]
    return "; expected " + (names[0] if len(names) == 1 else "one of " + ", ".join(names))


def _token_text(tok: Token) -> str:
    if tok.type == "$END":
        return "end of file"
    text = str(tok)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"`{text}`"


def _decode_text(data: bytes | str, filename: str | None) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise PtxEncodingError(
            f"file is not UTF-8 text: byte 0x{data[e.start]:02x} cannot be decoded",
            filename=filename, line=line, column=col) from None


def _offset_of(text: str, line: int, column: int) -> int:
    pos = 0
    for _ in range(line - 1):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    return min(pos + column - 1, len(text))


def _blank_statement(text: str, pos: int) -> str | None:
    """Blank out the statement around ``pos``; None when nothing would change.

    The statement runs from the end of the previous statement (`;` or `}`) to the
    next `;` (or the end of the line). Braces inside it are kept unless they
    balance within it (an initialiser list), so block structure survives.
    """
    if text.startswith("{", pos):
        # An unexpected block (e.g. a body whose header was broken): skip it whole,
        # rather than reporting every statement inside it.
        end = _matching_brace(text, pos)
        if end is not None:
            return text[:pos] + "".join(ch if ch == "\n" else " " for ch in text[pos:end + 1]) + text[end + 1:]
    start = max(text.rfind(";", 0, pos), text.rfind("}", 0, pos), _last_block_brace(text, pos)) + 1
    # Header directives, .file/.loc lines and comments end without a ';'.
    for m in _LINE_STATEMENT.finditer(text, start, pos):
        start = m.end()
    candidates = [i for i in (text.find(";", pos), text.find("\n", pos)) if i >= 0]
    end = min(candidates) + 1 if candidates else len(text)
    original = text[start:end]
    if original.count("{") == original.count("}"):
        segment = "".join(ch if ch == "\n" else " " for ch in original)
    else:
        segment = "".join(ch if ch in "\n{}" else " " for ch in original)
    if segment == original:
        if pos < len(text) and text[pos] not in " \n":
            return text[:pos] + " " + text[pos + 1:]
        return None
    return text[:start] + segment + text[end:]


_LINE_STATEMENT = re.compile(r"^[ \t]*(?:\.(?:version|target|address_size|file|loc)\b[^\n]*|//[^\n]*)$", re.M)
_DIRECTIVE = re.compile(r"\.[A-Za-z_]\w*")
_INSTRUCTION_START = re.compile(r"(?:@!?[%\w$][\w$]*[ \t]+)?[a-z][a-z0-9_]*(?:\.[\w:]+)*")


_BRACE_SCAN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|[{}]', re.S)


def _is_list_brace(text: str, i: int) -> bool:
    """Whether the `{` at ``i`` opens an initialiser/operand list rather than a block."""
    j = i - 1
    while j >= 0 and text[j] in " \t\r\n":
        j -= 1
    return j >= 0 and text[j] in "=,{"


def _last_block_brace(text: str, pos: int) -> int:
    i = text.rfind("{", 0, pos)
    while i >= 0 and _is_list_brace(text, i):
        i = text.rfind("{", 0, i)
    return i


def _matching_brace(text: str, pos: int) -> int | None:
    depth = 0
    for m in _BRACE_SCAN.finditer(text, pos):
        t = m.group()
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return m.start()
    return None


def _unclosed_brace(text: str) -> int | None:
    """Offset of the innermost `{` left open at the end of ``text`` (comments and strings skipped)."""
    stack: list[int] = []
    for m in _BRACE_SCAN.finditer(text):
        t = m.group()
        if t == "{":
            stack.append(m.start())
        elif t == "}" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _syntax_diagnostic(e: UnexpectedInput, text: str, lines: list[str], filename: str | None) -> tuple[Diagnostic, bool]:
    """The diagnostic for a Lark error, and whether parsing can go on after it."""
    line, column = getattr(e, "line", None), getattr(e, "column", None)
    at_end = isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END")
    if at_end:
        line = len(lines) if lines else 1
        column = len(lines[-1]) + 1 if lines else 1
        brace = _unclosed_brace(text)
        expected = set(e.expected or ())
        if brace is not None:
            what = "initialiser list" if _is_list_brace(text, brace) else "block"
            message = (f"unexpected end of file: missing `}}` for the {what} opened at line "
                       f"{text.count(chr(10), 0, brace) + 1}")
        else:
            message = "unexpected end of file" + _describe_expected(expected)
        if "SEMICOLON" in expected:
            # Cut inside a statement: the missing `;` comes first.
            ln, col = _line_col(text, _code_end(text, len(text)))
            return _diag("expected `;` at the end of the statement", filename, lines, ln, col), True
    elif isinstance(e, UnexpectedCharacters):
        pos = _offset_of(text, line, column)
        directive = _DIRECTIVE.match(text, pos)
        instr = _INSTRUCTION_START.match(text, pos)
        ch = text[pos] if pos < len(text) else "?"
        if directive and directive.group() == ".loc":
            message = "malformed `.loc` directive; expected `.loc file line column[, ...]`"
        elif directive:
            message = f"unknown directive `{directive.group()}`"
        elif instr and instr.group() and _unterminated(text, pos):
            return _unterminated_diag(text, pos, instr.group(), filename, lines)
        else:
            shown = repr(ch) if not ch.isprintable() or ch == " " else f"`{ch}`"
            message = f"unexpected character {shown}" + _describe_expected(e.allowed or ())
    else:
        assert isinstance(e, UnexpectedToken)
        pos = _offset_of(text, line, column)
        instr = _INSTRUCTION_START.match(text, pos)
        if e.token.type == "NAME" and instr and _unterminated(text, pos):
            return _unterminated_diag(text, pos, instr.group(), filename, lines)
        prev = _code_end(text, pos)
        if "SEMICOLON" in (e.expected or ()) and "\n" in text[prev:pos]:
            # The statement on the previous line is complete but for its `;`.
            ln, col = _line_col(text, prev)
            return _diag("expected `;` at the end of the statement", filename, lines, ln, col), True
        message = f"unexpected {_token_text(e.token)}" + _describe_expected(e.expected or ())
    if line is None or line < 1:
        line, column = 1, 1
    return _diag(message, filename, lines, line, column), not at_end


_BLOCK_END = re.compile(r"\n[ \t\r]*\}")


def _unterminated(text: str, pos: int) -> bool:
    """An instruction starts at ``pos`` but no `;` ends it before its block closes."""
    semi = text.find(";", pos)
    stop = _BLOCK_END.search(text, pos)
    return semi < 0 or (stop is not None and stop.start() < semi)


def _unterminated_diag(text: str, pos: int, head: str, filename, lines) -> tuple[Diagnostic, bool]:
    stop = _BLOCK_END.search(text, pos)
    end = _code_end(text, stop.start() if stop else len(text))
    ln, col = _line_col(text, end)
    return _diag(f"expected `;` at the end of `{head}`", filename, lines, ln, col), stop is not None


def _code_end(text: str, stop: int) -> int:
    """Offset just after the last character of code before ``stop`` (comments and blanks skipped)."""
    end = stop
    while True:
        while end > 0 and text[end - 1] in " \t\r\n":
            end -= 1
        if end >= 2 and text[end - 2:end] == "*/":
            start = text.rfind("/*", 0, end - 2)
            if start >= 0:
                end = start
                continue
        cut = text.find("//", text.rfind("\n", 0, end) + 1, end)
        if cut < 0:
            return end
        end = cut


def _line_col(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _diag(message: str, filename: str | None, lines: list[str], line: int, column: int) -> Diagnostic:
    src = lines[line - 1] if 0 < line <= len(lines) else None
    return Diagnostic(message, filename, line, column, src, category="syntax")


def parse_unverified(text: str | bytes, filename: str | None = None) -> tuple[Module | None, list[Diagnostic]]:
    """Parse without semantic checks; returns the module (None if unusable) and diagnostics."""
    text = _decode_text(text, filename)
    if "\x00" in text:
        i = text.index("\x00")
        line = text.count("\n", 0, i) + 1
        col = i - (text.rfind("\n", 0, i) + 1) + 1
        lines = text.splitlines()
        return None, [Diagnostic("NUL byte in file: this is not PTX text", filename, line, col,
                                 lines[line - 1] if line <= len(lines) else None, category="syntax")]
    lines = text.split("\n")
    p = _parser()
    diagnostics: list[Diagnostic] = []
    items = None
    work = text
    # Recovery re-parses the file once per syntax error: bound the total work.
    budget = max(MAX_ERRORS, RECOVERY_BUDGET_CHARS // max(len(text), 1))
    with p.lock:
        for attempt in range(min(MAX_ERRORS, budget)):
            p.builder.filename = filename
            p.builder.lines = lines
            p.builder.diagnostics = []
            p.builder.bare_regs = set()
            try:
                items = p.lark.parse(work)
                diagnostics.extend(p.builder.diagnostics)
                break
            except UnexpectedInput as e:
                diag, go_on = _syntax_diagnostic(e, work, lines, filename)
                diagnostics.append(diag)
                if not go_on:
                    break
                pos = _offset_of(work, diag.line or 1, diag.column or 1)
                blanked = _blank_statement(work, pos)
                if blanked is None or blanked == work:
                    break
                work = blanked
        else:
            last = diagnostics[-1]
            diagnostics.append(Diagnostic(f"too many syntax errors; stopped after {len(diagnostics)}",
                                          filename, last.line, last.column, last.source_line, category="syntax"))
    if items is None:
        return None, _dedupe(diagnostics)
    module = _assemble(items, filename, lines, diagnostics)
    for f in module.items:
        if isinstance(f, Function) and f.body is not None and f.body.depth() > MAX_NESTING:
            deep = _block_at_depth(f.body, MAX_NESTING + 1)
            diagnostics.append(_diag(f"`{{ }}` scopes in `{f.name}` nest {f.body.depth()} deep; "
                                     f"ptxvm allows at most {MAX_NESTING}", filename, lines,
                                     deep.span.line, deep.span.column))
            return None, _dedupe(diagnostics)
    return module, _dedupe(diagnostics)


def _block_at_depth(block, depth: int):
    """The first block nested ``depth`` deep (the body itself is depth 1)."""
    stack = [(block, 1)]
    while stack:
        b, d = stack.pop()
        if d == depth:
            return b
        stack.extend((s, d + 1) for s in reversed(b.statements) if isinstance(s, Block))
    return block


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen, out = set(), []
    for d in diags:
        key = (d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    out.sort(key=lambda d: (d.line or 0, d.column or 0))
    if len(out) > MAX_DIAGNOSTICS:
        rest = len(out) - MAX_DIAGNOSTICS
        last = out[MAX_DIAGNOSTICS - 1]
        out = out[:MAX_DIAGNOSTICS] + [Diagnostic(f"... and {rest} more errors", last.filename, last.line,
                                                  last.column, last.source_line, category=last.category)]
    return out


def _assemble(items, filename, lines, diagnostics) -> Module:
    version, target, address_size = None, (), None
    seen: dict[str, int] = {}
    body = []
    for it in items:
        if isinstance(it, _Header):
            src = lines[it.token.line - 1] if 0 < it.token.line <= len(lines) else ""
            col = src.rfind("." + it.kind, 0, it.token.column) + 1 or it.token.column
            if it.kind in seen:
                diagnostics.append(_diag(
                    f"second `.{it.kind}` directive (the first is at line {seen[it.kind]})",
                    filename, lines, it.token.line, col))
                continue
            if it.kind == "version" and (seen or body):
                diagnostics.append(_diag("`.version` must be the first directive of the module",
                                         filename, lines, it.token.line, col))
            seen[it.kind] = it.token.line
            if it.kind == "version":
                version = it.value
                _check_version(it, filename, lines, diagnostics)
            elif it.kind == "target":
                target = it.value
            else:
                address_size = it.value
                if it.value not in (32, 64):
                    diagnostics.append(Diagnostic(
                        f"`.address_size {it.value}` is invalid; expected 32 or 64", filename,
                        it.token.line, it.token.column, lines[it.token.line - 1]))
        else:
            body.append(it)
    if version is None:
        diagnostics.append(_diag("missing `.version` directive at the start of the module: "
                                 "this is not a PTX module", filename, lines, 1, 1))
    return Module(version or "", target, address_size, tuple(body), filename)


def _check_version(h: _Header, filename, lines, diagnostics) -> None:
    major, _, minor = h.value.partition(".")
    if (int(major), int(minor)) > NEWEST_PTX_ISA:
        warnings.warn(f"{filename or '<string>'}:{h.token.line}: PTX ISA {h.value} is newer than "
                      f"{NEWEST_PTX_ISA[0]}.{NEWEST_PTX_ISA[1]}, the newest ptxvm knows; parsing it anyway",
                      PtxVersionWarning, stacklevel=4)


def parse(text: str | bytes, filename: str | None = None, *, verify: bool = True) -> Module:
    """Parse PTX text; raise PtxSyntaxError / PtxSemanticError listing every error found."""
    module, diagnostics = check_text(text, filename, verify=verify)
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        cls = PtxSyntaxError if module is None or _is_syntax(errors) else PtxSemanticError
        raise cls.from_diagnostics(errors)
    assert module is not None
    return module


@contextmanager
def _no_gc():
    """Parsing allocates millions of acyclic objects; collector passes over them are pure cost."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def check_text(text: str | bytes, filename: str | None = None, *, verify: bool = True
               ) -> tuple[Module | None, list[Diagnostic]]:
    """Parse and verify, returning every diagnostic instead of raising (encoding errors raise)."""
    with _no_gc():
        return _check_text(text, filename, verify)


def _check_text(text, filename, verify):
    module, diagnostics = parse_unverified(text, filename)
    if module is not None and verify and not _is_syntax(diagnostics):
        from ..ir.verify import verify_module
        lines = (text if isinstance(text, str) else _decode_text(text, filename)).split("\n")
        diagnostics = _dedupe(diagnostics + verify_module(module, lines))
    return module, diagnostics


def _is_syntax(errors: list[Diagnostic]) -> bool:
    return any(d.category == "syntax" for d in errors)


__all__ = ["parse", "parse_unverified", "PtxError"]
