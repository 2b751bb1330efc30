"""The campaign tests run `ptxvm fuzz` in-process."""

from __future__ import annotations

import pytest


@pytest.fixture
def fuzz(capsys):
    """``fuzz(*argv) -> (exit status, stdout, stderr)`` through ptxvm.cli.main."""
    from ptxvm.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        rc = main(["fuzz", "--no-progress", *argv])
        out, err = capsys.readouterr()
        return rc, out, err
    return run
