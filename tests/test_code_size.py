"""Modules stay small: no file over 600 lines and no function over 80 lines in ptxvm/ unless a
comment says why (DESIGN.md). The comment is ``# size: <reason>`` in a file's first 30 lines, or
on one of the 3 lines above a long function's ``def`` (decorators included) or the first 3 lines
of its body. Split by concern first; the comment is for what reads worse split."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ptxvm"
MAX_FILE, MAX_FUNCTION = 600, 80


def _has_reason(lines: list[str], first: int, last: int) -> bool:
    return any("# size:" in lines[i] for i in range(max(first, 0), min(last, len(lines))))


def _oversized() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        rel = path.relative_to(PACKAGE.parent)
        if len(lines) - 1 > MAX_FILE and not _has_reason(lines, 0, 30):
            found.append(f"{rel}: {len(lines) - 1} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                top = min([d.lineno for d in node.decorator_list] + [node.lineno])
                if n > MAX_FUNCTION and not _has_reason(lines, top - 4, node.body[0].lineno + 2):
                    found.append(f"{rel}:{node.lineno} {node.name}(): {n} lines")
    return found


def test_files_and_functions_are_small_or_say_why() -> None:
    assert not _oversized(), "split these, or say why with a `# size:` comment:\n" + "\n".join(_oversized())
