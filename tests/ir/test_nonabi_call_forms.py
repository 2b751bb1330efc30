"""ptxvm accepts exactly the `call` forms ptxas accepts, in and outside the ABI (issue 14).

tests/data/nonabi_calls.json holds small PTX modules and `ptxas -arch=sm_80`'s recorded verdict
on each (made by tests/ptx/calls/record_calls.py; no ptxas is needed here). A form ptxas
accepted must parse and verify; a form it rejected must raise a PtxError with a line and
column (ptxas's module-wide "fatal" verdicts have none: ptxvm locates them at the call or the
function). The cases where ptxvm still disagrees are listed in the file's "disagreements" with
the reason and expected to disagree (strict).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from models.nonabi_calls import CASES as KERNELS

import ptxvm
from ptxvm.errors import PtxError, PtxSemanticError
from ptxvm.frontend.parser import parse

DATA = json.loads((Path(__file__).parents[1] / "data" / "nonabi_calls.json").read_text())
CASES = DATA["cases"]
DISAGREE: dict[str, str] = DATA["disagreements"]


def verdict(text: str) -> tuple[str, PtxError | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            parse(text, "case.ptx")
        except PtxError as e:
            return "reject", e
    return "accept", None


def test_catalogue_is_current_and_balanced() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)) >= 250
    verdicts = [c["ptxas"] for c in CASES]
    assert verdicts.count("accept") >= 100 and verdicts.count("reject") >= 60
    assert set(DISAGREE) <= set(names)
    # The model kernels the executors run are in it, as they are now, and ptxas accepts them.
    recorded = {c["name"]: c for c in CASES}
    for k in KERNELS:
        case = recorded[f"kernel/{k.name}"]
        assert case["ptx"] == k.ptx, f"re-record: python tests/ptx/calls/record_calls.py ({k.name} changed)"
        assert case["ptxas"] == "accept", case["ptxas_message"]


def _param(c: dict):
    reason = DISAGREE.get(c["name"])
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(c, id=c["name"], marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_agrees_with_ptxas(case: dict) -> None:
    got, err = verdict(case["ptx"])
    if case["ptxas"] == "accept":
        assert got == "accept", f"ptxas accepts this, ptxvm says: {err}"
    else:
        assert got == "reject", f"ptxas rejects this ({case['ptxas_message']}), ptxvm accepts it"
        assert err is not None and err.diagnostics and all(d.line for d in err.diagnostics), \
            f"rejection without a location: {err}"


def _text(name: str) -> str:
    return next(c["ptx"] for c in CASES if c["name"] == name)


# The messages, pinned (file:line:col and text). ptxas's own words for each are in the json.
MESSAGES = [
    ("form/result_imm", 19, 2, "`call (5), f, (%r1);` gives the immediate `5` as result 1 of `f`: a result is a "
                               "register, a `.param` variable or `_`"),
    ("form/reg_f32arg", 19, 20, "`call (%r2), f, (%f1);` passes `%f1` (.reg .f32, 4 bytes) as argument 1 of `f`, "
                                "whose parameter `a` is .reg .u32 (4 bytes) (declared at line 4)"),
    ("form/arg_global", 20, 2, "`call (%rd2), f, (G);` passes `G`, a module-level symbol, as argument 1 of `f`: "
                               "arguments are registers, immediates or `.param` variables of the caller"),
    ("form/arg_kernel_param", 19, 2, "`call (%rd2), f, (out);` passes `out`, a `.param` parameter of `k`, as "
                                     "argument 1 of `f`: ptxas refuses a function's own `.param` formals as call "
                                     "arguments"),
    ("form/arg_sink", 19, 2, "`call (%r2), f, (_);` passes `_` as argument 1 of `f`: only a result can be discarded"),
    ("imm/regu32_1.0", 19, 2, "`call (%r2), f, (1.0);` passes `1.0` as argument 1 of `f`, whose parameter `a` is "
                              ".reg .u32 (declared at line 4): a floating-point immediate cannot be passed for a "
                              ".u32 parameter"),
    ("form/two_returns_params", 4, 1, "function `f` returns 2 values, so each must be a `.reg`, but `a` is "
                                      ".param .b32"),
    ("abi/formal_u16", 19, 17, "`call (%r2), f, (x);` calls `f`, which takes `a` (.reg .u16) (declared at line 4): "
                               "ptxas passes no predicate, .u8/.s8 or .u16/.s16 values to or from device functions "
                               "in ABI compilation (only when some function returns several values)"),
    ("abi/nonabi_recursion", 11, 34, "`call (o, o2), g, (t);` calls `g` recursively in a module compiled without "
                                    "the ABI (a function returns several values): ptxas refuses recursion there"),
    ("abi/nonabi_indirect_proto", 20, 96, "`call (%r2, %r3), fp, (%r1), pr;` is an indirect call in a module "
                                           "compiled without the ABI (a function returns several values): ptxas "
                                           "refuses it ('requires ABI')"),
]


@pytest.mark.parametrize("name,line,col,message", MESSAGES, ids=[m[0] for m in MESSAGES])
def test_refusals_are_located_and_say_why(name, line, col, message) -> None:
    with pytest.raises(PtxSemanticError) as e:
        ptxvm.Module(_text(name), "case.ptx")
    d = e.value.diagnostics[0]
    assert (d.filename, d.line, d.column) == ("case.ptx", line, col)
    assert d.message == message
