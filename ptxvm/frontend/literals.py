"""Pure functions that turn PTX literal spellings into values."""

from __future__ import annotations

import re

from ..ir.nodes import FileDirective, ImmKind, Immediate, Loc, Span


def parse_int(text: str) -> tuple[int, bool]:
    """PTX integer literal (PTX ISA §4.5.1): hex, binary, octal, decimal, optional U suffix."""
    unsigned = text.endswith(("U", "u"))
    body = text[:-1] if unsigned else text
    neg = body.startswith("-")
    if neg:
        body = body[1:]
    if body[:2] in ("0x", "0X"):
        value = int(body[2:], 16)
    elif body[:2] in ("0b", "0B"):
        value = int(body[2:], 2)
    elif len(body) > 1 and body[0] == "0":
        value = int(body, 8)   # raises ValueError on 08/09: caller reports it
    else:
        value = int(body)
    if value >= 1 << 64 or (neg and value > 1 << 63):
        raise ValueError("wider than 64 bits")
    return (-value if neg else value), unsigned


def literal_error(text: str, exc: ValueError) -> str:
    """The message for a literal parse_int rejected."""
    if "64 bits" in str(exc):
        return f"integer constant `{text}` does not fit in 64 bits"
    return f"invalid integer literal `{text}`"


def int_immediate(text: str) -> Immediate:
    value, unsigned = parse_int(text)
    return Immediate(value, ImmKind.INT, unsigned)


def f32_immediate(text: str) -> Immediate:
    return Immediate(int(text[2:], 16), ImmKind.F32)


def f64_immediate(text: str) -> Immediate:
    return Immediate(int(text[2:], 16), ImmKind.F64)


def float_immediate(text: str) -> Immediate:
    return Immediate(float(text), ImmKind.FLOAT)


_FILE_RE = re.compile(r'\.file\s+(\d+)\s+"((?:\\.|[^"\\])*)"\s*((?:,\s*\d+\s*)*)\s*(?://.*)?$')
_LOC_RE = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)\s*(.*?)\s*(?://.*)?$")


def parse_file_directive(text: str, span: Span) -> FileDirective | None:
    m = _FILE_RE.match(text.strip())
    if not m:
        return None
    extra = tuple(int(x) for x in re.findall(r"\d+", m.group(3)))
    return FileDirective(int(m.group(1)), m.group(2), extra, span)


def parse_loc(text: str, span: Span) -> Loc | None:
    m = _LOC_RE.match(text.strip())
    if not m:
        return None
    extra = re.sub(r"\s+", " ", m.group(4)).strip().lstrip(",").strip()
    extra = re.sub(r"\s*,\s*", ", ", extra)
    return Loc(int(m.group(1)), int(m.group(2)), int(m.group(3)), extra, span)
