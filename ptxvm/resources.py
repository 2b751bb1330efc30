"""Locate the data folders (grammar/, isa/, runtime/).

In a source checkout they sit at the repository root next to the package; in an
installed wheel they are shipped as ``ptxvm/_data/<name>`` (see pyproject.toml).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"ptxvm data folder {name!r} not found next to {_PACKAGE}")
