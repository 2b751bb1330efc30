"""Split a RUN terminal (instructions, labels, .loc lines, comments) into items."""

from __future__ import annotations

import re
from functools import cache

_LABEL = re.compile(r"([A-Za-z_$%][\w$]*)[ \t]*:")


@cache
def item_regex(grammar_text: str) -> re.Pattern[str]:
    """The pattern of one RUN item: the grammar's RUN_ITEM terminal (Lark inlines
    terminals used only inside other terminals, so it is read from the text)."""
    m = re.search(r"^RUN_ITEM:\s*/(.*)/\s*$", grammar_text, re.M)
    if m is None:
        raise ValueError("grammar/ptx.lark: RUN_ITEM terminal not found")
    return re.compile(r"[ \t\r\n]*(" + m.group(1).replace("\\/", "/") + ")")


def classify(item: str) -> str:
    """'comment', 'loc', 'decl', 'label' or 'instruction'."""
    c = item[0]
    if c == "/":
        return "comment"
    if c == ".":
        return "loc" if item[:5] in (".loc ", ".loc\t") else "decl"
    if c in "$%" or (item[-1] == ":" and _LABEL.fullmatch(item.rstrip(": \t") + ":")):
        return "label"
    if item[-1] != ";":
        return "label"
    return "instruction"


def label_name(item: str) -> str:
    return item.rstrip(": \t")


SIMPLE_DECL = re.compile(
    r"\.(reg|param|local|shared)\s+(?:\.align\s+(\d+)\s+)?(?:\.v([248])\s+)?\.(\w+)\s+"
    r"([%$\w][\w$]*)(?:<(\d+)>|\[(\d+)\])?\s*;")
