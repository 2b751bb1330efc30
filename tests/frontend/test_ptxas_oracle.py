"""ptxvm accepts exactly the operand/declaration forms ptxas accepts (issue 14, item 1).

tests/data/ptxas_forms.json holds small PTX modules and ptxas's recorded verdict on each
(made by tests/ptx/forms/record_ptxas.py with `ptxas -arch=<target>`; no ptxas is needed
here). A form ptxas accepted must parse and verify without an error; a form it rejected
must raise a PtxError that names a line and column. The cases where ptxvm still disagrees
are listed in the file's "disagreements" with their reason and are expected to disagree
(strict: one that starts agreeing fails until its entry is removed).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from ptxvm.errors import PtxError
from ptxvm.frontend.parser import parse

DATA = json.loads((Path(__file__).parents[1] / "data" / "ptxas_forms.json").read_text())
CASES = DATA["cases"]
DISAGREE: dict[str, str] = DATA["disagreements"]


def ptxvm_verdict(text: str) -> tuple[str, PtxError | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            parse(text, "case.ptx")
        except PtxError as e:
            return "reject", e
    return "accept", None


def test_catalogue_size_and_balance() -> None:
    assert len(CASES) >= 300
    assert len({c["name"] for c in CASES}) == len(CASES)
    verdicts = [c["ptxas"] for c in CASES]
    assert verdicts.count("accept") >= 100 and verdicts.count("reject") >= 50
    assert set(DISAGREE) <= {c["name"] for c in CASES}


def _param(c: dict):
    reason = DISAGREE.get(c["name"])
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(c, id=c["name"], marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_agrees_with_ptxas(case: dict) -> None:
    verdict, err = ptxvm_verdict(case["ptx"])
    if case["ptxas"] == "accept":
        assert verdict == "accept", f"ptxas accepts this, ptxvm says: {err}"
    else:
        assert verdict == "reject", f"ptxas rejects this ({case['ptxas_message']}), ptxvm accepts it"
        assert err is not None and err.diagnostics and all(d.line for d in err.diagnostics), \
            f"rejection without a location: {err}"
