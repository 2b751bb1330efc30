"""Split a RUN terminal (instructions, labels, .loc lines, comments) into items."""

from __future__ import annotations

import re
from functools import cache

_PREFIX = "(?:[ \t\r\n]*(?:"  # Lark turns the escapes into the characters
_SUFFIX = r"))+"
_LABEL = re.compile(r"([A-Za-z_$%][\w$]*)[ \t]*:")


@cache
def item_regex(run_pattern: str) -> re.Pattern[str]:
    """The pattern of one RUN item, derived from the grammar's RUN terminal."""
    if not (run_pattern.startswith(_PREFIX) and run_pattern.endswith(_SUFFIX)):
        raise ValueError("grammar/ptx.lark: RUN terminal does not have the expected shape")
    items = run_pattern[len(_PREFIX):-len(_SUFFIX)]
    return re.compile(r"[ \t\r\n]*(" + items + ")")


def classify(item: str) -> str:
    """'comment', 'loc', 'label' or 'instruction'."""
    c = item[0]
    if c == "/":
        return "comment"
    if c == ".":
        return "loc"
    if c in "$%" or (item[-1] == ":" and _LABEL.fullmatch(item.rstrip(": \t") + ":")):
        return "label"
    if item[-1] != ";":
        return "label"
    return "instruction"


def label_name(item: str) -> str:
    return item.rstrip(": \t")
