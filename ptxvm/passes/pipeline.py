"""The pass pipeline: small, named analyses (and later rewrites) of an IR module, run in order.

A pass is a frozen dataclass with a ``name`` and ``apply(module, done)``; ``done`` holds the
results of the passes before it, so a pass can build on another's. ``run_pipeline`` returns
every result by name. Passes are pure: the same module gives the same results.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..ir import nodes as ir


class Pass(Protocol):
    name: str

    def apply(self, module: ir.Module, done: Mapping[str, Any]) -> Any: ...


@dataclass(frozen=True)
class Analyses(Mapping[str, Any]):
    """What ``run_pipeline`` found: pass name -> that pass's result."""

    module: ir.Module
    results: Mapping[str, Any]

    def __getitem__(self, name: str) -> Any:
        try:
            return self.results[name]
        except KeyError:
            raise KeyError(f"no pass named {name!r} ran; ran: {list(self.results)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)


def run_pipeline(module: ir.Module, passes: Sequence[Pass] | None = None) -> Analyses:
    """Run ``passes`` (default: ``DEFAULT_PIPELINE``) over ``module`` in order."""
    if passes is None:
        from . import DEFAULT_PIPELINE
        passes = DEFAULT_PIPELINE
    done: dict[str, Any] = {}
    for p in passes:
        if p.name in done:
            raise ValueError(f"two passes are named {p.name!r}")
        done[p.name] = p.apply(module, done)
    return Analyses(module, dict(done))
