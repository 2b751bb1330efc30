"""A campaign is a pure function of its spec: kernel i comes from (seed, i) alone, so shards
split it exactly, and any process (or machine) draws the same kernels."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ptxvm.campaign.draw import draw, features_of
from ptxvm.campaign.spec import CampaignError, Spec, parse_features, parse_shard

from models.campaign import records

SMALL = ("--count", "20", "--seed", "11", "--executors", "interp", "--max-instructions", "10", "--jobs", "2")


def test_union_of_four_shards_is_the_unsharded_campaign(fuzz, tmp_path) -> None:
    rc, _, err = fuzz(*SMALL, "--results", str(tmp_path / "all"))
    assert rc == 0, err
    whole = {(r["id"], r["ptx_hash"]) for r in records(tmp_path / "all")}
    assert len(whole) == 20 and len({h for _, h in whole}) == 20          # 20 different kernels
    parts = []
    for i in range(4):
        rc, _, err = fuzz(*SMALL, "--shard", f"{i}/4", "--results", str(tmp_path / f"s{i}"))
        assert rc == 0, err
        parts.append({(r["id"], r["ptx_hash"]) for r in records(tmp_path / f"s{i}")})
    assert all(len(p) == 5 for p in parts)
    assert set().union(*parts) == whole
    assert sum(map(len, parts)) == len(whole)                              # disjoint


def test_a_kernel_is_the_same_in_a_fresh_process_with_other_modules_loaded() -> None:
    """hypothesis collects constants from loaded modules; the campaign's draws must not."""
    spec = Spec(seed=5, count=4, max_instructions=12)
    here = [draw(spec, i).kernel().ptx for i in range(4)]
    code = ("import json, email, xml.dom.minidom, sqlite3\n"
            "from ptxvm.campaign.draw import draw\nfrom ptxvm.campaign.spec import Spec\n"
            "s = Spec(seed=5, count=4, max_instructions=12)\n"
            "print(json.dumps([draw(s, i).kernel().ptx for i in (3, 2, 1, 0)]))")
    import json
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={"PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)[::-1] == here
    assert len(set(here)) == 4


def test_seeds_and_indices_give_different_kernels() -> None:
    a, b = Spec(seed=1, count=3), Spec(seed=2, count=3)
    texts = {draw(s, i).kernel().ptx for s in (a, b) for i in range(3)}
    assert len(texts) == 6


def test_features_select_what_every_kernel_has() -> None:
    spec = Spec(seed=3, count=6, features=parse_features("+loop,-warp,-barrier"), max_instructions=16)
    for i in range(6):
        have = features_of(draw(spec, i).chunks)
        assert "loop" in have and "warp" not in have and "barrier" not in have
    opcodes = Spec(seed=3, count=3, features=parse_features("+cvt"))
    for i in range(3):
        d = draw(opcodes, i)
        assert "cvt" in features_of(d.chunks)
        assert "\n    cvt." in d.kernel().ptx or "cvt." in d.kernel().ptx.split(".entry")[1]


def test_calls_feature_draws_generated_funcs() -> None:
    spec = Spec(seed=4, count=3, features=parse_features("calls,+call"))
    assert all(".func" in draw(spec, i).kernel().ptx for i in range(3))


@pytest.mark.parametrize("text", ["x", "+", "+cvt,-cvt", "calls,,bogus"])
def test_bad_features_are_refused(text) -> None:
    with pytest.raises(CampaignError):
        parse_features(text)


@pytest.mark.parametrize("text", ["4/4", "1", "-1/2", "a/b", "0/0"])
def test_bad_shards_are_refused(text) -> None:
    with pytest.raises(CampaignError):
        parse_shard(text)


def test_shard_indices() -> None:
    assert list(parse_shard("1/3").indices(10)) == [1, 4, 7]
