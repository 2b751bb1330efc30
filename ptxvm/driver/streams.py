"""Streams and events, in CuPy's and numba's shapes.

ptxvm runs every launch to completion before the call returns, so a stream's launches run in
the order they were made, and an event recorded on a stream marks the moment every launch
before it has finished: the ordering CUDA promises, with no overlap between streams (an
implementation CUDA allows). ``Event.elapsed_time`` gives the wall time between two records in
milliseconds, so ``start.record(); k[g, b, s](...); end.record(); start.elapsed_time(end)`` is
the launch's wall time on the executor that ran it.

``kernel[grid, block, stream, smem]`` and ``kernel(..., stream=s)`` take a ``Stream``, ``0`` or
``None`` (the default stream); anything else is a LaunchError, not silently ignored.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from ..errors import LaunchError


class Stream:
    """An ordered queue of launches (run as they are made: see the module's docstring)."""

    _count = 0
    _lock = threading.Lock()

    def __init__(self, non_blocking: bool = False, priority: int = 0) -> None:
        with Stream._lock:
            Stream._count += 1
            self.id = Stream._count
        self.non_blocking, self.priority = bool(non_blocking), int(priority)
        self.launches = 0                   # launches made on this stream
        self.last_stats = None              # the LaunchStats of the latest one

    def synchronize(self) -> None:
        """Wait for the stream's work: it is done already (launches are synchronous)."""

    def query(self) -> bool:
        """Whether all work on the stream is done: always, here."""
        return True

    @contextlib.contextmanager
    def auto_synchronize(self) -> Iterator["Stream"]:
        """numba's ``with stream.auto_synchronize():``."""
        yield self
        self.synchronize()

    def record(self, event: "Event | None" = None) -> "Event":
        """Record ``event`` (a new one if None) on this stream, as CuPy's ``Stream.record``."""
        event = event or Event()
        event.record(self)
        return event

    def _launched(self, stats) -> None:
        self.launches += 1
        self.last_stats = stats

    def __repr__(self) -> str:
        return f"<ptxvm.Stream {self.id}: {self.launches} launch{'es' if self.launches != 1 else ''}>"


class Event:
    """A point in a stream's work; two recorded events give the time between them."""

    def __init__(self, timing: bool = True, blocking: bool = False, disable_timing: bool = False) -> None:
        self.timing = bool(timing) and not disable_timing
        self._time: float | None = None
        self.stream: Stream | None = None

    def record(self, stream: "Stream | int | None" = None) -> None:
        self.stream = check_stream(stream, "Event.record")
        self._time = time.perf_counter()

    def synchronize(self) -> None:
        """Wait for the work before the record: done already."""

    def query(self) -> bool:
        return self._time is not None

    @property
    def done(self) -> bool:
        return self.query()

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event's record to ``end``'s (numba's ``start.elapsed_time(end)``)."""
        return get_elapsed_time(self, end)

    def __repr__(self) -> str:
        state = "recorded" if self._time is not None else "not recorded"
        return f"<ptxvm.Event {state}>"


def get_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (CuPy's ``cupy.cuda.get_elapsed_time``)."""
    for what, e in (("start", start), ("end", end)):
        if not isinstance(e, Event):
            raise LaunchError(f"elapsed_time: {what} must be a ptxvm.Event, got {type(e).__name__}")
        if e._time is None:
            raise LaunchError(f"elapsed_time: the {what} event was never recorded (call .record() first)")
        if not e.timing:
            raise LaunchError(f"elapsed_time: the {what} event was made with timing disabled")
    return (end._time - start._time) * 1000.0


def check_stream(stream, what: str) -> Stream | None:
    """A launch's or record's stream: a Stream, or None/0 for the default stream."""
    if stream is None or (isinstance(stream, int) and not isinstance(stream, bool) and stream == 0):
        return None
    if isinstance(stream, Stream):
        return stream
    raise LaunchError(f"{what}: stream must be a ptxvm.Stream, 0 or None (the default stream), "
                      f"got {type(stream).__name__} {stream!r}")
