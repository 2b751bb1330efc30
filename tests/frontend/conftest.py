"""Fixtures the frontend's cache tests share."""

from __future__ import annotations

import pytest

from ptxvm.frontend import parser


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every real parse (the cache calls parser.check_text on a miss)."""
    calls: list[str] = []
    real = parser.check_text

    def counting(text, filename=None, **kw):
        calls.append(filename)
        return real(text, filename, **kw)

    monkeypatch.setattr(parser, "check_text", counting)
    return calls
