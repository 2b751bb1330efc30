"""The one name resolver for PTX's nested scopes: which declaration a name means at a point.

A function's parameters, then each `{ }` block, open a scope; a name resolves to the innermost
declaration of it (PTX ISA §5.1.4, nested scopes shadow outer ones), where a ``.reg .b32 %r<N>``
range declares ``%r0`` ... ``%r{N-1}``. The verifier, the call check, the frontend's binding of
``%``-less register names and (through ``ptxvm.passes``) the executors all resolve with this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .nodes import VarDecl

_TRAILING_INT = re.compile(r"(.*?)(\d+)$")


@dataclass
class Scope:
    """One scope: its own declarations and the scope around it."""

    parent: "Scope | None" = None
    names: dict[str, VarDecl] = field(default_factory=dict)
    ranges: dict[str, VarDecl] = field(default_factory=dict)   # `%r<N>` declarations by prefix
    cache: dict[str, VarDecl | None] = field(default_factory=dict)

    def declare(self, d: VarDecl) -> VarDecl | None:
        """Add a declaration; return the earlier one when the name is taken in this scope."""
        self.cache.clear()
        if d.count is not None:
            prev = self.ranges.get(d.name)
            self.ranges[d.name] = d
            return prev
        prev = self.names.get(d.name)
        self.names[d.name] = d
        return prev

    def child(self) -> "Scope":
        return Scope(self)

    def lookup(self, name: str) -> VarDecl | None:
        """The declaration ``name`` means here, or None."""
        # Memoised per scope: a body names the same few dozen registers thousands of times.
        # A scope is filled before the statements that follow its declarations are resolved,
        # and a declaration clears the memo of its own scope, so entries never go stale.
        try:
            return self.cache[name]
        except KeyError:
            d = self.cache[name] = self._lookup(name)
            return d

    def _lookup(self, name: str) -> VarDecl | None:
        s: Scope | None = self
        m = None
        while s is not None:
            d = s.names.get(name)
            if d is not None:
                return d
            if s.ranges:
                if m is None:
                    m = _TRAILING_INT.fullmatch(name) or False
                if m:
                    r = s.ranges.get(m.group(1))
                    if r is not None and int(m.group(2)) < (r.count or 0):
                        return r
            s = s.parent
        return None
