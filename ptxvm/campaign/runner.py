"""Run a campaign's pending kernels on worker processes or a cluster, recording as they come."""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TextIO

from .case import FAILURES, CaseResult, load_plugins, ptx_hash, run_case
from .died import shrink_died
from .draw import draw
from .pool import Died, Raised, imap_isolated
from .results import Results
from .spec import Spec


@dataclass
class Progress:
    """One status line, rewritten in place on a terminal (nothing elsewhere)."""

    total: int
    stream: TextIO | None = None
    seen: Counter = field(default_factory=Counter)
    start: float = field(default_factory=time.perf_counter)

    def update(self, r: CaseResult) -> None:
        self.seen[r.verdict] += 1
        if self.stream is None:
            return
        n = sum(self.seen.values())
        rate = n / max(time.perf_counter() - self.start, 1e-9)
        parts = " ".join(f"{k} {v}" for k, v in sorted(self.seen.items()))
        self.stream.write(f"\rfuzz {n}/{self.total}  {parts}  {rate:.2f} kernels/s ")
        self.stream.flush()

    def done(self) -> None:
        if self.stream is not None:
            self.stream.write("\n")
            self.stream.flush()


def _raised(spec: Spec, index: int, why: str) -> CaseResult:
    gk = draw(spec, index).kernel()
    return CaseResult(spec.kernel_id(index), index, ptx_hash(gk.ptx), "crash", None,
                      f"ptxvm fuzz itself raised (a bug, please report it): {why}", lines=gk.ptx.count("\n"),
                      ptx_min=gk.ptx)


def run_campaign(spec: Spec, folder: Path, *, jobs: int, cluster: str | None = None, resume: bool = False,
                 progress: bool | None = None, batch: int | None = None) -> dict:
    """Run every kernel of the spec's shard not yet in ``folder``; the summary (results.summary)."""
    load_plugins(spec.plugins)
    results = Results(folder, spec, resume=resume)
    pending = results.pending()
    show = sys.stderr.isatty() if progress is None else progress
    prog = Progress(len(pending), sys.stderr if show else None)
    t0 = time.perf_counter()
    ran = 0

    def on_result(r: CaseResult) -> None:
        nonlocal ran
        if results.add(r):
            ran += 1
            prog.update(r)

    facts: dict = {}
    try:
        if cluster:
            from .cluster import DEFAULT_BATCH, run_cluster
            facts = run_cluster(cluster, spec, pending, on_result, batch=batch or DEFAULT_BATCH)
        else:
            for index, value in imap_isolated(partial(run_case, spec), pending, jobs,
                                              initializer=load_plugins, initargs=(spec.plugins,)):
                if isinstance(value, Died):
                    value = shrink_died(spec, index, value.why)
                elif isinstance(value, Raised):
                    value = _raised(spec, index, value.why)
                on_result(value)
    finally:
        prog.done()
        results.close()
    summary = results.summary(time.perf_counter() - t0, ran)
    summary.update({"jobs": None if cluster else jobs, "cluster": cluster, **facts})
    return summary


def exit_status(summary: dict) -> int:
    return 0 if not any(summary["verdicts"].get(v) for v in FAILURES) else 1
