"""Hand-written PTX, one file per operand/declaration form of issue 14 item 1
(tests/ptx/handwritten): ptxvm accepts exactly the files ptxas accepted (the verdicts recorded
in verdicts.json by record_verdicts.py, re-checked here when ptxas is installed), and every
accepted file round-trips through the printer. Running them: tests/interp/test_handwritten_run.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

import ptxvm
from ptxvm.frontend.printer import format_module

HERE = Path(__file__).resolve().parents[1] / "ptx" / "handwritten"
FILES = sorted(HERE.glob("*.ptx"))
VERDICTS = json.loads((HERE / "verdicts.json").read_text())["files"]


# file -> why ptxvm and ptxas disagree today (strict: an agreement shows as XPASS)
DISAGREE: dict[str, str] = {}


def _cases():
    for p in FILES:
        marks = [pytest.mark.xfail(strict=True, reason=DISAGREE[p.name])] if p.name in DISAGREE else []
        yield pytest.param(p, marks=marks, id=p.stem)


def _parse(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.parse(path.read_bytes(), filename=str(path))


def test_every_file_has_a_recorded_verdict() -> None:
    assert sorted(VERDICTS) == [p.name for p in FILES]
    assert len(FILES) >= 12


@pytest.mark.parametrize("path", list(_cases()))
def test_ptxvm_agrees_with_ptxas(path: Path) -> None:
    if VERDICTS[path.name]["accepted"]:
        module = _parse(path)
        ptxvm.Module(path.read_bytes(), filename=str(path))      # verifies, as a launch would
        printed = format_module(module)
        again = ptxvm.parse(printed, filename=f"{path.name} (printed)")
        assert again == module
        assert format_module(again) == printed
    else:
        with pytest.raises(ptxvm.PtxError) as info:
            ptxvm.Module(path.read_bytes(), filename=str(path))
        err = info.value
        assert err.filename == str(path) and err.line and err.column, str(err)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed")
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_recorded_verdict_is_what_ptxas_says(path: Path) -> None:
    v = VERDICTS[path.name]
    proc = subprocess.run(["ptxas", f"-arch={v['arch']}", path.name, "-o", "/dev/null"], cwd=HERE,
                          capture_output=True, text=True, timeout=120)
    assert (proc.returncode == 0) == v["accepted"], proc.stderr
