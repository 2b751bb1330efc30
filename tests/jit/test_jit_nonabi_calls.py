"""Non-ABI calls on the host JIT (issue 14), on the same kernels and numpy models as
tests/interp/test_nonabi_calls.py (tests/models/nonabi_calls.py), and a sweep of every call form
ptxas accepts in tests/data/nonabi_calls.json: the interpreter and the JIT give the same result
or both refuse it for one of the reasons below.

The lifter passes every argument by value through a byte buffer of the formal's size (a
caller's `.param` variable is its own buffer; a register or an immediate is stored into a
fresh one) and a device function's `.reg` formals start as those bytes, so `.reg` and `.param`
formals take registers, immediates and `.param` variables alike, as ptxas allows.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from models.nonabi_calls import BY_NAME, CASES, THREADS, run

import ptxvm
from ptxvm.errors import UnsupportedError

pytestmark = pytest.mark.filterwarnings("ignore")

DATA = json.loads((Path(__file__).parents[1] / "data" / "nonabi_calls.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_kernel_equals_its_model(case):
    got, expected = run(case, "cpu")
    np.testing.assert_array_equal(got, expected, err_msg=case.doc)


@pytest.mark.parametrize("name", ["reg_args", "mixed_spaces", "two_results", "recursion", "inlined"])
def test_edge_inputs_agree_with_the_interpreter(name):
    inp = np.resize(np.array([0, 1, 0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF], dtype=np.uint32), THREADS)
    got, expected = run(BY_NAME[name], "cpu", inp)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(got, run(BY_NAME[name], "interp", inp)[0])


# What both executors refuse of what ptxas accepts, and why (the message must say so).
REASONS = {
    # (the lifter's words, the interpreter's words); ptxvm/ir/call_args.py says why
    "float immediate for a 16-bit formal": ("passes 0 whatever its value",) * 2,
}


def _outcome(text: str, device: str):
    try:
        k = ptxvm.Module(text, "c.ptx")["k"]
        out = np.array([6, 0], dtype=np.uint32)
        k(1, 1, (out,), device=device)
        return int(out[0])
    except UnsupportedError as e:
        return e


def _accepted(prefixes):
    return [pytest.param(c, id=c["name"]) for c in DATA["cases"]
            if c["ptxas"] == "accept" and c["name"] not in DATA["disagreements"] and c["name"].startswith(prefixes)]


def _same_on_both(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = _outcome(case["ptx"], "interp"), _outcome(case["ptx"], "cpu")
    if isinstance(a, int) or isinstance(b, int):
        assert a == b, f"interp {a!r}, cpu {b!r}"
        return
    for lift_words, interp_words in REASONS.values():
        if lift_words in str(b) and interp_words in str(a):
            assert a.line and b.line, "a refusal without a location"
            return
    pytest.fail(f"refused for no listed reason: interp: {a}; cpu: {b}")


@pytest.mark.parametrize("case", _accepted(("form/",)))
def test_every_accepted_form_runs_the_same_on_both(case):
    _same_on_both(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", _accepted(("kind/", "imm/", "abi/")))
def test_every_accepted_kind_immediate_and_abi_form_runs_the_same_on_both(case):
    _same_on_both(case)
