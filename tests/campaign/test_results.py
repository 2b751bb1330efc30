"""The results folder: resume, a cut last line, another campaign's folder, summaries."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from models.campaign import records

ARGS = ("--seed", "4", "--executors", "interp", "--max-instructions", "8", "--jobs", "2")


def test_resume_runs_only_what_is_missing(fuzz, tmp_path) -> None:
    out = str(tmp_path / "fz")
    rc, text, err = fuzz(*ARGS, "--count", "4", "--results", out, "--json")
    assert rc == 0, err
    first = json.loads(text)
    assert first["ran"] == 4 and first["recorded"] == 4
    # A campaign killed while writing leaves a cut line: that kernel runs again.
    path = tmp_path / "fz" / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])
    rc, text, err = fuzz(*ARGS, "--count", "7", "--results", out, "--resume", "--json")
    assert rc == 0, err
    again = json.loads(text)
    assert again["ran"] == 4 and again["recorded"] == 7              # the cut one and three new
    ids = [r["id"] for r in records(tmp_path / "fz") if r]
    assert sorted(ids) == [f"4-{i}" for i in range(7)] and len(ids) == len(set(ids))
    rc, text, _ = fuzz(*ARGS, "--count", "7", "--results", out, "--resume", "--json")
    assert rc == 0 and json.loads(text)["ran"] == 0


def test_a_folder_is_not_overwritten_nor_resumed_by_another_campaign(fuzz, tmp_path) -> None:
    out = str(tmp_path / "fz")
    assert fuzz(*ARGS, "--count", "2", "--results", out)[0] == 0
    rc, _, err = fuzz(*ARGS, "--count", "2", "--results", out)
    assert rc == 2 and "--resume" in err
    rc, _, err = fuzz("--seed", "5", *ARGS[2:], "--count", "2", "--results", out, "--resume")
    assert rc == 2 and "seed was 4, now 5" in err


def test_junit_and_text_summaries(fuzz, tmp_path) -> None:
    out, xml = tmp_path / "fz", tmp_path / "fz.xml"
    rc, text, err = fuzz(*ARGS, "--count", "3", "--results", str(out), "--junit", str(xml))
    assert rc == 0, err
    assert "3 of 3 kernels recorded" in text and "agree 3" in text
    suite = ET.parse(xml).getroot()
    assert suite.get("tests") == "3" and suite.get("failures") == "0"
    assert [c.get("name") for c in suite] == ["4-0", "4-1", "4-2"]


def test_usage_errors(fuzz, tmp_path) -> None:
    for argv, words in ((("--shard", "4/4"), "--shard"), (("--features", "bogus"), "not a feature"),
                        (("--executors", "nosuch"), "not an executor"), (("--executors", "interp,interp"), "twice"),
                        (("--plugin", str(tmp_path / "missing.py")), "--plugin"),
                        (("--cluster", "local", "--jobs", "2"), "--jobs")):
        rc, _, err = fuzz(*argv, "--results", str(tmp_path / "x"))
        assert rc == 2 and words in err, (argv, err)
        assert "Traceback" not in err
