"""Worker processes on this machine that outlive a kernel killing its process.

``concurrent.futures.ProcessPoolExecutor`` does the work. When a worker dies (an LLVM
abort in-process, a segfault, the OOM killer) the pool breaks and every case in flight
fails with ``BrokenProcessPool``, the guilty one and the bystanders alike; those cases
are then run again one at a time, each alone in a fresh one-worker pool, so the case
that kills its process again is reported as :class:`Died` and every other one gets its
real result. A fresh pool replaces the broken one and the campaign goes on.

Workers start from a fork server (``forkserver``, which has imported ptxvm's campaign
modules: no threads or LLVM state of the parent leak into them, and a replacement worker
starts in milliseconds, not seconds).
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Died:
    """The case's worker process died while running it (alone: so this case killed it)."""

    why: str


@dataclass(frozen=True)
class Raised:
    """The case raised in the worker: a bug in the campaign's own code, reported per case."""

    why: str


def default_jobs() -> int:
    """The CPUs this process may run on (its affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _context():
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # The server imports what every case needs once; each worker, a fresh one after a death
    # included, is a fork of it and starts at once instead of importing numpy and ptxvm again.
    ctx.set_forkserver_preload(["ptxvm.campaign.case"])
    return ctx


def _pool(jobs: int, initializer, initargs) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=jobs, mp_context=_context(), initializer=initializer,
                               initargs=initargs)


def _outcome(fut: Future) -> Any:
    """The result, Raised, or BrokenProcessPool re-raised (the caller isolates that case)."""
    try:
        return fut.result()
    except BrokenProcessPool:
        raise
    except Exception as e:  # noqa: BLE001 - reported for this case; the others go on
        return Raised(f"{type(e).__name__}: {e}")


def imap_isolated(fn: Callable, items: Iterable, jobs: int, *, initializer: Callable | None = None,
                  initargs: tuple = ()) -> Iterator[tuple[Any, Any]]:
    """Yield ``(item, fn(item))`` as cases finish, in any order; ``(item, Died(...))`` for a
    case whose process died, ``(item, Raised(...))`` for one that raised. ``fn`` and the items
    must pickle; with ``jobs == 1`` the cases still run in a worker (a crash must not end us)."""
    todo = deque(items)
    suspects: deque = deque()
    pool = _pool(jobs, initializer, initargs)
    in_flight: dict[Future, Any] = {}
    try:
        while todo or in_flight or suspects:
            if suspects and not in_flight:
                item = suspects.popleft()
                yield item, _alone(fn, item, initializer, initargs)
                continue
            while todo and len(in_flight) < 2 * jobs and not suspects:
                item = todo.popleft()
                in_flight[pool.submit(fn, item)] = item
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            broken = False
            for fut in done:
                item = in_flight.pop(fut)
                try:
                    yield item, _outcome(fut)
                except BrokenProcessPool:
                    suspects.append(item)
                    broken = True
            if broken:
                suspects.extend(in_flight.values())
                in_flight.clear()
                pool.shutdown(wait=False, cancel_futures=True)
                pool = _pool(jobs, initializer, initargs)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _alone(fn: Callable, item: Any, initializer, initargs) -> Any:
    pool = _pool(1, initializer, initargs)
    try:
        return _outcome(pool.submit(fn, item))
    except BrokenProcessPool:
        return Died("its worker process died while running it alone (a crash of the process, not an "
                    "exception: an abort, a segfault or the OOM killer)")
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
