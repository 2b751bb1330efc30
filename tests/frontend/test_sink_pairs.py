"""The sink `_` (issue 14, item 1): as one half of a `d|p` pair, a whole destination, a vector
element or (never) a source, ptxvm accepts exactly the
forms ptxas 13.0 accepts, from tests/data/ptxas_sink_pairs.json (recorded by
tests/ptx/forms/record_sink_pairs.py; no ptxas needed here), and rejects the others with a
located error."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from ptxvm.errors import PtxError
from ptxvm.frontend.parser import parse

DATA = json.loads((Path(__file__).parents[1] / "data" / "ptxas_sink_pairs.json").read_text())
CASES = DATA["cases"]


def ptxvm_verdict(text: str) -> tuple[str, PtxError | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            parse(text, "case.ptx")
        except PtxError as e:
            return "reject", e
    return "accept", None


def test_catalogue_covers_both_verdicts_and_both_halves() -> None:
    verdicts = [c["ptxas"] for c in CASES]
    assert verdicts.count("accept") >= 10 and verdicts.count("reject") >= 10
    assert not DATA["disagreements"]
    assert any("_|%p0" in c["ptx"] and c["ptxas"] == "accept" for c in CASES)
    assert any("%r4|_" in c["ptx"] and c["ptxas"] == "accept" for c in CASES)
    single = [c for c in CASES if c["name"].startswith("sink/")]
    assert len(single) >= 60
    assert any("add.cc.u32 _," in c["ptx"] and c["ptxas"] == "reject" for c in single)
    assert any("atom.global.add.u32 _," in c["ptx"] and c["ptxas"] == "accept" for c in single)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_agrees_with_ptxas(case: dict) -> None:
    verdict, err = ptxvm_verdict(case["ptx"])
    if case["ptxas"] == "accept":
        assert verdict == "accept", f"ptxas accepts this, ptxvm says: {err}"
    else:
        assert verdict == "reject", f"ptxas rejects this ({case['ptxas_message']}), ptxvm accepts it"
        assert err is not None and err.diagnostics and all(d.line for d in err.diagnostics), \
            f"rejection without a location: {err}"
