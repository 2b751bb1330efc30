"""Every case of tests/bad_inputs/catalogue.py gives exactly its expected diagnostics."""

from __future__ import annotations

import warnings

import pytest

import ptxvm
from ptxvm import PtxError
from ptxvm.frontend.parser import check_text

from bad_inputs.catalogue import CASES, Case, Like

FILENAME = "bad.ptx"
ERROR_CASES = [c for c in CASES if c.error is not None]
VALID_CASES = [c for c in CASES if c.error is None]


def _param(case: Case, reason: str | None):
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, id=case.name, marks=marks)


def _parse(case: Case):
    """Parse, returning (exception or None, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ptxvm.parse(case.text, filename=FILENAME)
        except PtxError as exc:
            return exc, caught
    return None, caught


def _same(expected, got) -> bool:
    if len(expected) != len(got):
        return False
    for (line, col, msg), (gl, gc, gm) in zip(expected, got):
        if (line, col) != (gl, gc):
            return False
        if not (msg.matches(gm) if isinstance(msg, Like) else msg == gm):
            return False
    return True


def _diags(exc: PtxError) -> list[tuple[int | None, int | None, str]]:
    return [(d.line, d.column, d.message) for d in exc.diagnostics]


def test_catalogue_is_big_enough():
    assert len(ERROR_CASES) >= 45
    assert len({c.name for c in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("case", [_param(c, c.xfail_diags) for c in ERROR_CASES])
def test_diagnostics(case: Case):
    exc, _ = _parse(case)
    assert exc is not None, f"{case.name}: parsed without error"
    got = _diags(exc)
    assert _same(case.diags, got), (
        f"{case.name}: diagnostics differ\nexpected: {list(case.diags)!r}\ngot:      {got!r}")


@pytest.mark.parametrize("case", [_param(c, c.xfail_class) for c in ERROR_CASES])
def test_exception_class(case: Case):
    exc, _ = _parse(case)
    assert exc is not None, f"{case.name}: parsed without error"
    assert type(exc) is case.error, f"{case.name}: {type(exc).__name__}, expected {case.error.__name__}\n{exc}"


@pytest.mark.parametrize("case", [_param(c, None) for c in ERROR_CASES if not c.xfail_diags])
def test_rendering(case: Case):
    """str(exc) shows file:line:col, the source line and a caret under the column."""
    exc, _ = _parse(case)
    assert exc is not None
    text = str(exc)
    lines = text.split("\n")
    # The first diagnostic's attributes mirror the exception's.
    first = exc.diagnostics[0]
    assert (exc.line, exc.column, exc.message, exc.filename) == \
        (first.line, first.column, first.message, FILENAME)
    for d in exc.diagnostics:
        head = f"{FILENAME}:{d.line}:{d.column}: error: {d.message}"
        assert head in lines, f"{head!r} not in\n{text}"
        i = lines.index(head)
        src = d.source_line
        if src is None:
            continue
        shown = src.rstrip("\r\n").expandtabs(1)
        assert lines[i + 1] == "    " + shown, text
        caret = lines[i + 2]
        assert caret == "    " + " " * (d.column - 1) + "^", text
    if len(exc.diagnostics) > 1:
        assert lines[0] == f"{len(exc.diagnostics)} errors:"


@pytest.mark.parametrize("case", [_param(c, c.xfail_diags) for c in ERROR_CASES])
def test_check_text_agrees(case: Case):
    """check_text returns the same diagnostics instead of raising (encoding errors excepted)."""
    if case.error is ptxvm.PtxEncodingError:
        with pytest.raises(ptxvm.PtxEncodingError):
            check_text(case.text, FILENAME)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, diags = check_text(case.text, FILENAME)
    got = [(d.line, d.column, d.message) for d in diags if d.severity == "error"]
    assert _same(case.diags, got), f"{case.name}: {got!r}"


@pytest.mark.parametrize("case", [_param(c, None) for c in VALID_CASES])
def test_valid_unusual_inputs_parse(case: Case):
    exc, caught = _parse(case)
    assert exc is None, f"{case.name}: {exc}"
    messages = [str(w.message) for w in caught]
    if case.warning:
        assert any(case.warning in m for m in messages), messages
    else:
        assert not messages, messages


def test_bytes_and_str_agree():
    """UTF-8 bytes parse exactly like the str they encode."""
    for case in ERROR_CASES:
        if isinstance(case.text, bytes) or case.xfail_class or case.xfail_diags:
            continue
        exc_s, _ = _parse(case)
        exc_b, _ = _parse(Case(case.name, case.text.encode("utf-8"), case.error))
        assert exc_s is not None and exc_b is not None, case.name
        assert _diags(exc_s) == _diags(exc_b), case.name


DEEP = 3000


@pytest.mark.parametrize("body", [
    pytest.param("{" * DEEP + "ret;" + "}" * DEEP, id="blocks"),
    pytest.param("mov.b32 %r1, " + "{" * DEEP + "%r2" + "}" * DEEP + ";", id="vector"),
    pytest.param("call " + "(" * DEEP + "%r2" + ")" * DEEP + ";", id="paren"),
])
def test_deep_nesting_is_not_a_crash(body: str):
    """Pathological nesting is a syntax error (scope limit, no nested lists), never a RecursionError."""
    from bad_inputs.catalogue import kernel
    with pytest.raises(ptxvm.PtxSyntaxError):
        ptxvm.parse(kernel(body), filename=FILENAME)


def test_deep_initialiser_nesting_is_not_a_crash():
    from bad_inputs.catalogue import HEADER
    text = HEADER + ".global .u32 g[1] = " + "{" * DEEP + "1" + "}" * DEEP + ";\n"
    try:
        ptxvm.parse(text, filename=FILENAME)
    except PtxError:
        pass
