"""Kernels that kill their process: shrunk, and the executor that kills it named, with every
run in a worker process of its own (a death there costs that worker, never the campaign).

Each probe runs in a one-worker pool that is replaced when its worker dies; a candidate
"fails the same way" when its worker dies too. The shrunk kernel is then run on each
executor alone, so the one that kills the process is named and the others' outputs go into
the golden.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..testing.ptxgen import run_on
from .case import CaseResult, Outcome, judge, load_plugins, ptx_hash
from .draw import Drawn, draw
from .pool import _context
from .spec import Spec

PROBES = 30             # each probe may cost a fresh worker process: fewer than for other failures


class _Isolated:
    """Calls in a one-worker pool; a call whose worker dies returns None and the pool is renewed."""

    def __init__(self, plugins: tuple[str, ...]) -> None:
        self.plugins, self.pool = plugins, None

    def call(self, fn, *args):
        if self.pool is None:
            self.pool = ProcessPoolExecutor(1, mp_context=_context(), initializer=load_plugins,
                                            initargs=(self.plugins,))
        try:
            return self.pool.submit(fn, *args).result()
        except BrokenProcessPool:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = None
            return None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _judge(drawn: Drawn, executors: tuple[str, ...]) -> Outcome:
    return judge(drawn.kernel(), executors)


def _run(drawn: Drawn, executor: str) -> tuple:
    return run_on(drawn.kernel(), executor)


def shrink_died(spec: Spec, index: int, why: str) -> CaseResult:
    """The ``died`` result of kernel ``index``: shrunk in isolation, its killer named."""
    from .goldens import golden_bytes
    from .shrink import shrink
    drawn = draw(spec, index)
    lines = drawn.kernel().ptx.count("\n")
    iso = _Isolated(spec.plugins)
    try:
        dead = Outcome("died", None, why)

        def probe(candidate: Drawn) -> Outcome:
            got = iso.call(_judge, candidate, spec.executors)
            return dead if got is None else got
        small, _, probes = shrink(drawn, dead, spec.executors, min(spec.shrink_probes, PROBES), probe)
        runs, killers = {}, []
        for ex in spec.executors:
            got = iso.call(_run, small, ex)
            if got is None:
                killers.append(ex)
            else:
                runs[ex] = got
    finally:
        iso.close()
    detail = (f"executor {', '.join(killers)} killed its process (a crash, not an exception: an abort, a "
              "segfault, the OOM killer)" if killers else
              f"its process died, but no executor alone kills it again (a death that does not reproduce): {why}")
    outcome = Outcome("died", killers[0] if killers else None, detail, runs)
    gk = small.kernel()
    rid = spec.kernel_id(index)
    return CaseResult(rid, index, ptx_hash(drawn.kernel().ptx), "died", outcome.executor, outcome.detail, 0.0,
                      lines, gk.ptx.count("\n"), probes, golden_bytes(gk, outcome, spec, rid), gk.ptx)
