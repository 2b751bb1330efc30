"""The host threads CTA chunks run on: one process-wide pool, each thread with a stack of a known
size (the generated code's stack budget checks are then real)."""

from __future__ import annotations

import os
import queue
import threading
from concurrent.futures import Future

from .. import limits
from .program import JitProgram



def host_threads() -> int:
    """Host threads a launch runs its CTAs on: ``PTXVM_NUM_THREADS`` when set, else the CPUs this
    process may run on (its affinity mask: a container's or ``taskset``'s share, where
    os.cpu_count() counts the whole machine). Read per launch: the mask may change."""
    raw = os.environ.get("PTXVM_NUM_THREADS", "").strip()
    if raw:
        try:
            n = int(raw)
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"PTXVM_NUM_THREADS={raw!r}: expected a whole number of host threads, at least 1")
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):       # no affinity masks on this platform
        return max(1, os.cpu_count() or 1)


class _HostThreads:
    """Host threads that run the generated code, each with a stack of a known size: the stack
    budget the generated code checks (limits.stack_per_thread, call_depth) is then real, where
    the main thread's stack is whatever the process was started with. Daemon threads: an
    interrupted process does not wait for them."""

    def __init__(self, workers: int, stack: int) -> None:
        self.workers, self.stack = workers, stack
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        with _STACK_LOCK:
            old = threading.stack_size(stack)
            try:
                for i in range(workers):
                    threading.Thread(target=self._work, name=f"ptxvm-cta-{i}", daemon=True).start()
            finally:
                threading.stack_size(old)

    def _work(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fn, args, fut = job
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args))
                except BaseException as e:  # noqa: BLE001 - handed to the waiting thread
                    fut.set_exception(e)

    def submit(self, fn, *args) -> Future:
        fut: Future = Future()
        self.jobs.put((fn, args, fut))
        return fut

    def run_queued(self, calls: list[tuple], workers: int) -> tuple[list, list[Future]]:
        """Run ``calls`` (each ``(fn, *args)``) through a work queue drained by ``workers`` of the
        host threads at once (however many the pool has): a thread that finishes a call takes the
        next, so chunks that take long do not leave the others idle. Returns the results list
        (filled once the futures are done) and the futures of the draining jobs."""
        results: list = [None] * len(calls)
        lock = threading.Lock()
        taken = [0]

        def drain() -> None:
            while True:
                with lock:
                    i = taken[0]
                    taken[0] += 1
                if i >= len(calls):
                    return
                fn, *args = calls[i]
                results[i] = fn(*args)

        return results, [self.submit(drain) for _ in range(max(1, min(workers, len(calls))))]

    def close(self) -> None:
        for _ in range(self.workers):
            self.jobs.put(None)


_STACK_LOCK = threading.Lock()
_POOL: _HostThreads | None = None


def host_stack_bytes(program: JitProgram) -> int:
    """The host stack a thread running ``program`` needs: the driver's and the kernel's frames,
    then `.func` frames up to the stack budget, with room for the generated code using more per
    frame than the budget counts (spills) and for the frame whose check fails."""
    lim = limits.current()
    need = (8 << 20) + program.kernel_stack + 2 * program.max_frame + 2 * lim.stack_per_thread + 1024 * lim.call_depth
    return (need + (1 << 20) - 1) >> 20 << 20


def _pool(workers: int, stack: int) -> _HostThreads:
    """One process-wide set of host threads for CTA chunks (starting threads per launch costs ms);
    made anew when a launch needs more of them or a larger stack."""
    global _POOL
    if _POOL is None or _POOL.workers < workers or _POOL.stack < stack:
        if _POOL is not None:
            _POOL.close()
        _POOL = _HostThreads(max(workers, _POOL.workers if _POOL else 0), max(stack, _POOL.stack if _POOL else 0))
    return _POOL
