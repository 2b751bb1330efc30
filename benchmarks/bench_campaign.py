#!/usr/bin/env python3
"""Differential-testing campaigns: kernels per second on 1 process, on every local CPU, and on a
local Dask cluster, in one run, on the same kernels.

The campaign is ``ptxvm fuzz``'s (ptxvm.campaign.runner.run_campaign): COUNT kernels of one seed
drawn by the generator, each run on the interpreter and the host JIT and compared. The same
kernels run three times, each into a fresh results folder:

1. ``--jobs 1``: one worker process (the campaign's own process only collects results);
2. ``--jobs J``, J = the CPUs this process may use (``os.sched_getaffinity``);
3. ``--cluster``: a ``distributed.LocalCluster`` of J single-threaded worker processes, started
   before the clock starts (its start-up is reported apart).

Every run pays its own worker start-up (a worker process imports numpy, hypothesis, llvmlite and
starts its LLVM worker). The compile caches are off (``PTXVM_NO_CACHE=1``), so later runs do not
reuse the JIT objects of earlier ones. Wall time is what counts; the load average before and
after is printed, because other work on the machine takes CPUs from the runs. Goal: the
J-process run at least 1.7x the 1-process run on a 2-CPU machine.

    python benchmarks/bench_campaign.py                 # 100 kernels
    python benchmarks/bench_campaign.py --count 300 --json
    python benchmarks/bench_campaign.py --quick         # 12 kernels, a smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ptxvm.campaign.pool import default_jobs  # noqa: E402
from ptxvm.campaign.runner import run_campaign  # noqa: E402
from ptxvm.campaign.spec import Spec  # noqa: E402


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _one(spec: Spec, folder: Path, **how) -> dict:
    t0 = time.perf_counter()
    s = run_campaign(spec, folder, progress=False, **how)
    wall = time.perf_counter() - t0
    return {"kernels": s["ran"], "seconds": round(wall, 3), "kernels_per_second": round(s["ran"] / wall, 3),
            "verdicts": s["verdicts"], "load_after": _load()}


def _cluster(workers: int):
    try:
        from distributed import LocalCluster
    except ImportError:
        return None, "Dask distributed is not installed (pip install 'ptxvm[cluster]')"
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None), None


def run(count: int, seed: int, jobs: int, executors: tuple[str, ...]) -> dict:
    spec = Spec(seed=seed, count=count, executors=executors)
    out: dict = {"count": count, "seed": seed, "executors": list(executors), "jobs": jobs,
                 "cpus": os.cpu_count(), "machine": platform.machine(), "load_before": _load(), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        out["runs"]["1 process"] = _one(spec, Path(tmp) / "j1", jobs=1)
        out["runs"][f"{jobs} processes"] = _one(spec, Path(tmp) / "jn", jobs=jobs)
        t0 = time.perf_counter()
        cluster, why = _cluster(jobs)
        if cluster is None:
            out["runs"]["local cluster"] = {"skipped": why}
        else:
            try:
                start = time.perf_counter() - t0
                r = _one(spec, Path(tmp) / "cl", jobs=jobs, cluster=cluster.scheduler_address)
                out["runs"]["local cluster"] = {**r, "workers": jobs, "cluster_start_seconds": round(start, 3)}
            finally:
                cluster.close()
    base = out["runs"]["1 process"]["kernels_per_second"]
    out["ratios"] = {k: round(v["kernels_per_second"] / base, 3) for k, v in out["runs"].items()
                     if "kernels_per_second" in v}
    return out


def render(r: dict) -> str:
    lines = [f"campaign: {r['count']} kernels, seed {r['seed']}, executors {','.join(r['executors'])}, "
             f"{r['cpus']} CPUs ({r['machine']}), load average before {r['load_before']}"]
    for name, v in r["runs"].items():
        if "skipped" in v:
            lines.append(f"  {name:<14} skipped: {v['skipped']}")
            continue
        extra = f", cluster start {v['cluster_start_seconds']:.1f} s" if "cluster_start_seconds" in v else ""
        lines.append(f"  {name:<14} {v['kernels_per_second']:7.2f} kernels/s  ({v['kernels']} in {v['seconds']:.1f} s"
                     f"{extra}; load after {v['load_after']})  x{r['ratios'][name]:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=default_jobs(), help="processes of run 2 and cluster workers")
    ap.add_argument("--executors", default="interp,cpu")
    ap.add_argument("--quick", action="store_true", help="12 kernels")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    os.environ["PTXVM_NO_CACHE"] = "1"       # before any worker process starts: they inherit it
    r = run(12 if a.quick else a.count, a.seed, a.jobs, tuple(a.executors.split(",")))
    print(json.dumps(r, indent=2) if a.json else render(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
