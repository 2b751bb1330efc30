"""Stages import downward only (DESIGN.md's table), and never another stage's private names.

The test reads every module's imports (ast, nothing is imported). ``KNOWN_DEBT`` lists the
imports that break the rule today and that the architecture issue (#13) removes: a new
violation fails, and so does a debt entry that is paid (remove it here when it is).
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ptxvm"

# Modules every stage may use: errors, limits, data-file lookup, the instruction table, the
# on-disk cache store, helpers without dependencies, the package root (``__version__``).
BASE = frozenset({"errors", "limits", "resources", "isa", "demangle", "diskcache", ""})

# DESIGN.md's table: stage -> the stages it may import (besides itself and BASE).
ALLOWED: dict[str, frozenset[str]] = {
    "": frozenset({"frontend", "ir", "passes", "machine", "interp", "lift", "backend", "jit", "amdgpu",
                   "driver", "testing", "cli"}),        # the package root: the public facade
    "ir": frozenset(),
    "frontend": frozenset({"ir"}),
    "passes": frozenset({"ir"}),
    "machine": frozenset({"ir", "passes"}),
    "interp": frozenset({"machine", "passes", "ir"}),
    "lift": frozenset({"machine", "passes", "ir"}),      # machine: data tables only (fragment layouts)
    "backend": frozenset(),
    "jit": frozenset({"lift", "backend", "machine", "passes", "ir"}),
    "amdgpu": frozenset({"lift", "backend", "machine", "passes", "ir"}),
    "driver": frozenset({"frontend", "ir", "passes", "machine", "interp", "lift", "backend", "jit", "amdgpu"}),
    "testing": frozenset({"frontend", "ir", "passes", "machine", "interp", "lift", "backend", "jit", "amdgpu",
                          "driver"}),
    # Campaigns (ptxvm fuzz at scale) run the differential-testing tools on many kernels.
    "campaign": frozenset({"frontend", "ir", "passes", "machine", "interp", "lift", "backend", "jit", "amdgpu",
                           "driver", "testing"}),
    "cli": frozenset({"frontend", "ir", "passes", "machine", "interp", "lift", "backend", "jit", "amdgpu",
                      "driver", "testing", "campaign"}),
}
# Front doors sit on top, like the CLI: the numba and Triton bridges and the pytest plugin.
for _door in ("numba", "triton"):
    ALLOWED[_door] = ALLOWED["cli"]
ALLOWED["pytest_plugin"] = ALLOWED["cli"] | {"numba", "triton"}

KNOWN_DEBT = frozenset({
    ("ptxvm.isa", "ptxvm.ir.types"),                     # the table decodes types: ir <-> isa
})


def _stage(module: str) -> str:
    """``ptxvm.jit.host`` -> ``jit``; ``ptxvm.cli.run`` -> ``cli``; ``ptxvm.isa`` -> ``isa``."""
    parts = module.split(".")
    if len(parts) == 1:
        return ""
    return "cli" if parts[1] in ("cli", "__main__") else parts[1]     # the cli/ package and `python -m ptxvm`


def _imports(path: Path) -> list[tuple[str, str]]:
    """(module imported from, name) for every ``from ... import`` of ptxvm in ``path``."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(rel.parts if path.name == "__init__.py" else rel.parts[:-1])
    if path.name == "__init__.py":
        package = package[:-1] + [package[-1]] if package[-1] != "__init__" else package[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "ptxvm" or target.startswith("ptxvm."):
                for alias in node.names:
                    # `from .. import interp` names a module; `from .. import parse` a name of
                    # the package root (its public facade); `from ..x import y` a name in x.
                    sub = target == "ptxvm" and ((PACKAGE / alias.name).is_dir()
                                                 or (PACKAGE / f"{alias.name}.py").is_file())
                    out.append((f"ptxvm.{alias.name}" if sub else target, alias.name))
        elif isinstance(node, ast.Import):
            out += [(a.name, "") for a in node.names if a.name.startswith("ptxvm.")]
    return out


@cache
def _violations() -> frozenset[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(p for p in rel.parts if p != "__init__")
        mine = _stage(module)
        for target, name in _imports(path):
            theirs = _stage(target)
            if theirs == mine or theirs in BASE:
                if theirs in BASE and name.startswith("_") and not name.startswith("__"):
                    found.add((module, f"{target}.{name}"))
                continue
            if mine not in ALLOWED:
                found.add((module, target))         # a top-level module outside the table
                continue
            if theirs not in ALLOWED[mine]:
                found.add((mine, theirs))
            if name.startswith("_") and not name.startswith("__"):
                found.add((module, f"{target}.{name}"))
    return frozenset(found)


def test_stages_import_downward_only() -> None:
    found = _violations()
    new = sorted(found - KNOWN_DEBT)
    assert not new, "imports against DESIGN.md's stage table (or of another stage's private names): " + str(new)


def test_known_debt_is_still_owed() -> None:
    paid = sorted(KNOWN_DEBT - _violations())
    assert not paid, f"these imports are gone: remove them from KNOWN_DEBT: {paid}"
