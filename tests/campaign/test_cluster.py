"""Campaigns on Dask distributed: a local cluster, and a scheduler with two workers one of
which is killed mid-way (every kernel's result arrives, exactly once)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from models.campaign import records

pytest.importorskip("distributed")


def test_a_small_campaign_on_a_local_cluster_matches_the_local_one(fuzz, tmp_path) -> None:
    args = ("--count", "8", "--seed", "9", "--max-instructions", "10", "--executors", "interp")
    rc, out, err = fuzz(*args, "--cluster", "local:2", "--batch", "3", "--results", str(tmp_path / "c"), "--json")
    assert rc == 0, err
    summary = json.loads(out)
    assert summary["cluster"] == "local:2" and summary["verdicts"] == {"agree": 8}
    rc, _, err = fuzz(*args, "--jobs", "1", "--results", str(tmp_path / "l"))
    assert rc == 0, err
    on_cluster = {(r["id"], r["ptx_hash"]) for r in records(tmp_path / "c")}
    assert on_cluster == {(r["id"], r["ptx_hash"]) for r in records(tmp_path / "l")}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args: list[str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", *args], stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _wait_for(pred, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


@pytest.mark.slow
def test_400_kernels_on_a_cluster_that_loses_a_worker(tmp_path) -> None:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [_start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                     "--no-dashboard"], tmp_path / "scheduler.log")]
    try:
        _wait_for(lambda: socket.socket().connect_ex(("127.0.0.1", port)) == 0, 60, "the scheduler")
        for k in range(2):
            procs.append(_start(["distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny",
                                 "--no-dashboard", "--name", f"w{k}"], tmp_path / f"worker{k}.log"))
        out = tmp_path / "results"
        lines = lambda: (out / "results.jsonl").read_text().count("\n") if (out / "results.jsonl").exists() else 0
        campaign = subprocess.Popen(
            [sys.executable, "-m", "ptxvm", "fuzz", "--count", "400", "--seed", "20", "--max-instructions", "12",
             "--cluster", address, "--batch", "4", "--results", str(out), "--json", "--no-progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_for(lambda: lines() >= 80 or campaign.poll() is not None, 900, "80 results")
        assert campaign.poll() is None, "the campaign ended before a worker could be killed"
        victim = procs[1]
        os.killpg(victim.pid, signal.SIGKILL)             # the worker and anything it started
        victim.wait(30)
        at_kill = lines()
        stdout, stderr = campaign.communicate(timeout=1800)
        assert campaign.returncode == 0, stderr[-3000:]
        summary = json.loads(stdout)
        recs = records(out)
        ids = [r["id"] for r in recs]
        assert len(ids) == 400 and len(set(ids)) == 400                      # nothing lost, nothing twice
        assert set(ids) == {f"20-{i}" for i in range(400)}
        assert summary["recorded"] == 400 and summary["ran"] == 400 and at_kill < 400
        by_worker = {r["worker"].rsplit(":", 1)[1] for r in recs}
        assert str(victim.pid) in by_worker and str(procs[2].pid) in by_worker   # both worked
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(30)
