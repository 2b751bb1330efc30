"""Worker processes that survive a dying case, and --jobs of difftest and translate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.campaign import square_or_die
from ptxvm.campaign.pool import Died, Raised, default_jobs, imap_isolated
from ptxvm.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80"


def test_a_dying_case_is_reported_and_every_other_case_gets_its_result() -> None:
    got = dict(imap_isolated(square_or_die, range(1, 11), 2))
    assert sorted(got) == list(range(1, 11))
    for x, v in got.items():
        if x % 3 == 0:
            assert isinstance(v, Died) and "died" in v.why
        elif x == 4:
            assert isinstance(v, Raised) and "ValueError: four" in v.why
        else:
            assert v == x * x


def test_default_jobs_is_the_affinity_mask() -> None:
    import os
    assert default_jobs() == len(os.sched_getaffinity(0))


def _strip(report: dict) -> dict:
    for c in report["cases"]:
        c.pop("seconds", None)
    return report


def test_difftest_golden_folder_on_workers_reports_as_serially(tmp_path, capsys) -> None:
    folder = tmp_path / "g"
    folder.mkdir()
    # Goldens of generated kernels (recorded on the interpreter; no .approx results, which difftest
    # compares bit for bit where the fuzzer allows the ISA's bound), and one broken file.
    from ptxvm.campaign.draw import draw
    from ptxvm.campaign.spec import Spec, parse_features
    from ptxvm.testing.golden import make_launch, record, save_golden
    for i in range(4):
        gk = draw(Spec(seed=2, count=4, max_instructions=14, features=parse_features("-approx")), i).kernel()
        save_golden(record(make_launch(gk.ptx, gk.kernel, gk.grid, gk.block, list(gk.args))), folder / f"k{i}.npz")
    (folder / "k9.npz").write_bytes(b"not a zip")
    reports = []
    for jobs in ("1", "2"):
        capsys.readouterr()
        assert main(["difftest", "--golden", str(folder), "--executors", "interp,cpu", "--json", "--jobs", jobs]) == 1
        captured = capsys.readouterr()
        reports.append(_strip(json.loads(captured.out)))
        assert [ln for ln in captured.err.splitlines() if ln.startswith("difftest [")] == \
            [f"difftest [{n}/5] k{i}.npz" for n, i in enumerate((0, 1, 2, 3, 9), 1)]
    assert reports[0] == reports[1]
    assert [c["ok"] for c in reports[1]["cases"]] == [True, True, True, True, False]


@pytest.mark.lld
def test_translate_on_workers_writes_what_one_process_writes(tmp_path, capsys) -> None:
    files = [str(FIXTURES / n) for n in ("elementwise.ptx", "sync_primitives.ptx", "reductions.ptx")]
    summaries = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        code = main(["translate", *files, "--arch", "gfx90a,gfx1030", "-o", str(out), "--keep-going", "--json",
                     "--jobs", jobs])
        summary = json.loads(capsys.readouterr().out)
        assert code == (1 if summary["failed"] else 0)
        summaries.append([{k: v for k, v in r.items() if k not in ("seconds", "outputs")} for r in summary["results"]])
    assert summaries[0] == summaries[1]
    one, two = tmp_path / "j1", tmp_path / "j2"
    assert sorted(p.name for p in one.iterdir()) == sorted(p.name for p in two.iterdir())
    for p in one.iterdir():
        assert p.read_bytes() == (two / p.name).read_bytes(), p.name
