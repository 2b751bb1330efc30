"""A deliberately broken executor is caught: the campaign shrinks the failing kernel, saves it
as a golden, and `ptxvm difftest --golden` on that file reports the same mismatch."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from models.campaign import BROKEN, SUB, records
from ptxvm.cli import main
from ptxvm.testing.golden import load_golden


@pytest.fixture(scope="module")
def broken():
    """Register the broken executors in this process too (difftest runs here)."""
    from ptxvm.driver import executors as registry
    spec = importlib.util.spec_from_file_location("broken_executors_here", BROKEN)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    yield
    for name in ("flip", "abort", "refuse", "fail"):
        registry.unregister(name)


ARGS = ("--count", "8", "--seed", "2", "--max-instructions", "14", "--jobs", "2", "--plugin", BROKEN)


def test_a_flipped_bit_is_caught_shrunk_saved_and_replayed(fuzz, tmp_path, broken, capsys) -> None:
    out = tmp_path / "fz"
    rc, text, err = fuzz(*ARGS, "--executors", "interp,flip", "--results", str(out))
    recs = {r["id"]: r for r in records(out)}
    assert len(recs) == 8
    bad = [r for r in recs.values() if r["verdict"] == "mismatch"]
    good = [r for r in recs.values() if r["verdict"] == "agree"]
    assert bad and good, recs                  # flip only breaks kernels with a sub instruction
    assert rc == 1 and "mismatch" in text
    for r in bad:
        assert r["executor"] == "flip" and "out[0]" in r["detail"]
        ptx = (out / r["ptx"]).read_text()
        assert SUB.search(ptx)                                  # the shrinker kept the culprit
        assert r["shrunk_lines"] <= r["lines"]
        g = load_golden(out / r["golden"])
        assert g.launch.ptx == ptx and g.provenance["campaign_verdict"] == "mismatch"
        with np.load(out / r["golden"]) as z:
            ref, flipped = z["out1"], z["exec.flip.out1"]
        assert np.array_equal(ref, z_ref := np.asarray(ref)) and (ref ^ flipped).tolist().count(0) == ref.size - 1
        assert int((ref ^ flipped)[0]) == 1 and np.array_equal(z_ref, g.outputs[1])
        capsys.readouterr()
        assert main(["difftest", "--golden", str(out / r["golden"]), "--executors", "flip"]) == 1
        report = capsys.readouterr().out
        assert "mismatch" in report.lower() and "arg1" in report
        assert main(["difftest", "--golden", str(out / r["golden"]), "--executors", "interp"]) == 0
    assert any(r["shrunk_lines"] < r["lines"] for r in bad)    # (a kernel of one chunk cannot shrink)
    for r in good:
        assert "golden" not in r


def test_a_worker_that_dies_is_reported_and_the_campaign_goes_on(fuzz, tmp_path) -> None:
    out = tmp_path / "fz"
    # Every probe of a dying kernel costs a worker process: a small shrinking budget.
    rc, text, err = fuzz(*ARGS, "--executors", "interp,abort", "--results", str(out), "--shrink-probes", "6")
    recs = records(out)
    assert sorted(r["index"] for r in recs) == list(range(8))
    died = [r for r in recs if r["verdict"] == "died"]
    assert died and any(r["verdict"] == "agree" for r in recs)
    assert any(r["shrunk_lines"] < r["lines"] for r in died)
    assert rc == 1 and "died" in text
    for r in died:
        assert r["executor"] == "abort" and "killed its process" in r["detail"]          # the killer is named
        assert SUB.search((out / r["ptx"]).read_text()) and r["shrunk_lines"] <= r["lines"]
        g = load_golden(out / r["golden"])
        assert g.provenance["campaign_verdict"] == "died" and g.provenance["outputs"] == "executor interp"


def test_verdicts_of_refusing_and_raising_executors(broken) -> None:
    from ptxvm.campaign.case import judge
    from ptxvm.campaign.draw import draw
    from ptxvm.campaign.spec import Spec
    spec = Spec(seed=2, count=8, max_instructions=14)
    kernels = [draw(spec, i).kernel() for i in range(8)]
    hit = next(k for k in kernels if SUB.search(k.ptx))
    miss = next(k for k in kernels if not SUB.search(k.ptx))
    assert judge(hit, ("interp", "refuse")).verdict == "refused"
    got = judge(hit, ("interp", "fail"))
    assert (got.verdict, got.executor) == ("crash", "fail") and "LaunchError: error: test executor" in got.detail
    got = judge(hit, ("fail", "interp"))
    assert (got.verdict, got.executor) == ("error", "fail")               # the reference failed
    assert judge(hit, ("interp", "refuse", "flip")).verdict == "mismatch"  # a mismatch outranks a refusal
    assert judge(miss, ("interp", "refuse", "fail", "flip")).verdict == "agree"
