"""The D/C type pairs of every dense mma.sync form agree with ptxas 13's recorded verdicts
(tests/data/ptxas_mma_dc.json, made by tests/data/record_ptxas_mma_dc.py: every accumulator
type of an isa/matrix.toml entry for D and for C; no ptxas is needed here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ptxvm.machine import fragments as F

DATA = json.loads((Path(__file__).parents[1] / "data" / "ptxas_mma_dc.json").read_text())
CASES = DATA["cases"]


def _ptxvm_verdict(case: dict) -> str:
    try:
        sm = F.mma_sm(case["shape"], case["ab"], case["ab"], case["c"], case["d"])
    except F.FragmentError:
        return "reject"
    assert sm <= int(case["arch"].removeprefix("sm_")), "recorded on an arch below the form's minimum"
    return "accept"


def test_every_pair_of_every_form_is_recorded() -> None:
    want = {(c["shape"], c["ab"][0], d, k) for c in F.mma_combinations() for d in c["acc"] for k in c["acc"]}
    assert {(c["shape"], c["ab"], c["d"], c["c"]) for c in CASES} == want
    assert sum(c["ptxas"] == "reject" for c in CASES) >= 10       # the mixed pairs ptxas refuses


@pytest.mark.parametrize("case", CASES, ids=[f"{c['shape']}.{c['d']}.{c['ab']}.{c['c']}-{c['arch']}" for c in CASES])
def test_agrees_with_ptxas(case: dict) -> None:
    assert _ptxvm_verdict(case) == case["ptxas"], case["ptxas_message"]
