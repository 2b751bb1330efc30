"""Special registers (isa/special_registers.toml)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache

from ..resources import data_dir
from .types import ScalarType


@dataclass(frozen=True, slots=True)
class SpecialRegister:
    name: str
    type: ScalarType
    section: str
    components: tuple[str, ...] = ()
    indexed: tuple[int, int] | None = None


@cache
def special_registers() -> dict[str, SpecialRegister]:
    raw = tomllib.loads((data_dir("isa") / "special_registers.toml").read_text(encoding="utf-8"))
    out = {}
    for name, e in raw["sreg"].items():
        idx = e.get("indexed")
        out[name] = SpecialRegister(name, ScalarType(e["type"]), e.get("section", ""),
                                    tuple(e.get("components", ())), tuple(idx) if idx else None)
    return out


_INDEXED = re.compile(r"(%[a-z_]+?)(\d+)(_64)?")


def lookup_special(name: str, component: str | None = None) -> SpecialRegister | None:
    """The special register ``name`` (with ``.x``-style component) or None."""
    table = special_registers()
    sreg = table.get(name)
    if sreg is None:
        m = _INDEXED.fullmatch(name)
        if not m:
            return None
        sreg = table.get(m.group(1) + (m.group(3) or ""))
        if sreg is None or sreg.indexed is None:
            return None
        lo, hi = sreg.indexed
        if not lo <= int(m.group(2)) <= hi:
            return None
    if component is not None and component not in sreg.components:
        return None
    return sreg
