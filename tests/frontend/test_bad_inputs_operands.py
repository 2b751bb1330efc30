"""Every case of tests/bad_inputs/operands_catalogue.py gives exactly its located diagnostics."""

from __future__ import annotations

import warnings

import pytest

import ptxvm
from ptxvm import PtxError

from bad_inputs.operands_catalogue import CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_operand_diagnostics(case) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(PtxError) as e:
            ptxvm.parse(case.text, filename="bad.ptx")
    assert type(e.value) is case.error
    assert [(d.line, d.column, d.message) for d in e.value.diagnostics] == list(case.diags)
    assert "bad.ptx:" in str(e.value) and "^" in str(e.value)   # located, with a caret
