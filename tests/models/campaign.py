"""Shared by the campaign tests: where the broken test executors live, reading a results folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

BROKEN = str(Path(__file__).resolve().parent / "broken_executors.py")
# The instruction that triggers the broken executors (broken_executors.SUB: the same pattern; that
# file is not imported here, since importing it registers its executors).
SUB = re.compile(r"^\s*(?:@!?%\w+\s+)?sub\.", re.MULTILINE)


def records(folder: Path) -> list[dict]:
    """Every record of ``folder/results.jsonl`` (a campaign's per-kernel lines), skipping a line cut
    short by a killed campaign as the campaign itself does when resuming."""
    out = []
    for line in (folder / "results.jsonl").read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def square_or_die(x: int) -> int:
    """A worker function of the pool tests: multiples of 3 kill their process, 4 raises."""
    import os
    if x % 3 == 0:
        os._exit(3)
    if x == 4:
        raise ValueError("four")
    return x * x
