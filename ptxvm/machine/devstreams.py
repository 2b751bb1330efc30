"""The device runtime's streams, events and per-thread last error (dynamic parallelism, CDP2): the
part of ``machine.cdp`` that `cudaStreamCreateWithFlags`, `cudaStreamDestroy`,
`cudaEventCreateWithFlags`, `cudaEventRecord[WithFlags]`, `cudaStreamWaitEvent`,
`cudaEventDestroy`, `cudaGetLastError` and `cudaPeekAtLastError` in device code reach.

What CUDA promises (Programming Guide, "CUDA Dynamic Parallelism", streams, events and the device
runtime API table): device streams must be created with ``cudaStreamNonBlocking`` and device
events with ``cudaEventDisableTiming``; only the inter-stream use of events exists on the device
(record, wait); stream and event handles belong to the block that created them (not to other
blocks, nor to parent or child grids); launches into one stream run in order, launches into
different streams may run in any order; the last error is per-thread state. Error values are
those of CUDA 13's ``driver_types.h``.

What ptxvm does: every grid a grid launched runs, after it, in the order of the launches whatever
their streams (``machine.cdp.complete``), its tail launches last. That is one of the orders the
rules allow: it keeps each stream's order, and a `cudaStreamWaitEvent` only delays launches made
after it until work launched before the matching `cudaEventRecord`, which already ran before them.
So records and waits are checked and kept as state, and change no order. Handles are never reused
within a host launch, so a destroyed handle is told apart from one that was never made.

Choices where CUDA leaves it open, each returned as an error code (and kept as the calling
thread's last error) where CUDA names one, else a refusal (a trap of the thread, at its call):

* a stream or event used after its destroy: ``cudaErrorInvalidResourceHandle`` (the code for "a
  resource handle passed to a runtime API call was not a valid resource handle"); destroying the
  NULL stream or a per-grid stream the same;
* flags CUDA does not define for the call, or without the flag the device requires:
  ``cudaErrorInvalidValue``; the flags that only matter while a stream is captured into a graph
  (``cudaEventRecordExternal``, ``cudaEventWaitExternal``; the device captures nothing) are refused;
* recording or waiting in ``cudaStreamTailLaunch`` or ``cudaStreamFireAndForget``:
  ``cudaErrorInvalidValue`` (the guide: those streams cannot record or wait on events);
* a handle this host launch never made, a stream given as an event (or the reverse), one made by
  another block or another grid (undefined behaviour in the guide): refused, saying which.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CUDA_SUCCESS = 0
INVALID_VALUE = 1                     # cudaErrorInvalidValue
MEMORY_ALLOCATION = 2                 # cudaErrorMemoryAllocation
INVALID_RESOURCE_HANDLE = 400         # cudaErrorInvalidResourceHandle
ERROR_NAMES = {CUDA_SUCCESS: "cudaSuccess", INVALID_VALUE: "cudaErrorInvalidValue",
               MEMORY_ALLOCATION: "cudaErrorMemoryAllocation",
               INVALID_RESOURCE_HANDLE: "cudaErrorInvalidResourceHandle"}

STREAM_NULL, STREAM_TAIL, STREAM_FIRE_AND_FORGET = 0, 3, 4     # cuda_device_runtime_api.h
PER_GRID_STREAMS = {STREAM_NULL: "the NULL stream", STREAM_TAIL: "cudaStreamTailLaunch",
                    STREAM_FIRE_AND_FORGET: "cudaStreamFireAndForget"}
STREAM_NON_BLOCKING = 0x1                                      # driver_types.h
EVENT_BLOCKING_SYNC, EVENT_DISABLE_TIMING = 0x1, 0x2
RECORD_EXTERNAL = WAIT_EXTERNAL = 0x1                          # cudaEventRecordExternal, cudaEventWaitExternal
# Handles look like device pointers and keep clear of the reserved stream values (0-4, and the
# device graph's 0x01/0x02/0x03 << 56): one counter for streams and events of a host launch.
HANDLE_BASE, HANDLE_STEP = 0x7D00_0000_0000, 0x40

Caller = tuple[int, int]              # (linear CTA id in its grid, linear thread id in the CTA)


class DeviceRuntimeError(Exception):
    """A device-runtime call CUDA would refuse or ptxvm cannot hold: the executor reports it as a
    trap of the calling thread, at the call."""


@dataclass
class _Object:
    kind: str                         # "stream" or "event"
    grid: int
    cta: int
    alive: bool = True
    recorded: bool = False            # events: recorded at least once


@dataclass
class Handles:
    """The streams and events of every grid of one host launch (handles are never reused)."""

    objects: dict[int, _Object] = field(default_factory=dict)
    grids: int = 0                    # grids of the launch tree that have a runtime so far

    def new(self, kind: str, grid: int, cta: int) -> int:
        handle = HANDLE_BASE + HANDLE_STEP * len(self.objects)
        self.objects[handle] = _Object(kind, grid, cta)
        return handle


@dataclass(kw_only=True)
class StreamsAndEvents:
    """Mixin of ``cdp.DeviceRuntime``: one grid's calls of the stream, event and error API
    (keyword-only fields, so the runtime's own fields keep their positions)."""

    handles: Handles = field(default_factory=Handles)
    grid_id: int = 0
    last_errors: dict[Caller, int] = field(default_factory=dict)

    def fail(self, caller: Caller, code: int) -> int:
        """A call's error: returned, and kept as the calling thread's last error."""
        if code != CUDA_SUCCESS:
            self.last_errors[caller] = code
        return code

    def last_error(self, caller: Caller, reset: bool) -> int:
        """`cudaGetLastError` (``reset``: back to cudaSuccess) / `cudaPeekAtLastError`."""
        return self.last_errors.pop(caller, CUDA_SUCCESS) if reset else self.last_errors.get(caller, CUDA_SUCCESS)

    def stream_create(self, caller: Caller, flags: int) -> tuple[int, int]:
        """`cudaStreamCreateWithFlags`: (error, handle); the handle is stored only on success."""
        if flags != STREAM_NON_BLOCKING:
            return self.fail(caller, INVALID_VALUE), 0
        return CUDA_SUCCESS, self.handles.new("stream", self.grid_id, caller[0])

    def event_create(self, caller: Caller, flags: int) -> tuple[int, int]:
        """`cudaEventCreateWithFlags`: (error, handle); the device requires cudaEventDisableTiming
        and has no interprocess events."""
        if not flags & EVENT_DISABLE_TIMING or flags & ~(EVENT_DISABLE_TIMING | EVENT_BLOCKING_SYNC):
            return self.fail(caller, INVALID_VALUE), 0
        return CUDA_SUCCESS, self.handles.new("event", self.grid_id, caller[0])

    def stream_destroy(self, caller: Caller, stream: int) -> int:
        """`cudaStreamDestroy`: work already launched into the stream still runs."""
        obj = None if stream in PER_GRID_STREAMS else self._find(caller, stream, "stream", "cudaStreamDestroy")
        if obj is None or not obj.alive:
            return self.fail(caller, INVALID_RESOURCE_HANDLE)
        obj.alive = False
        return CUDA_SUCCESS

    def event_destroy(self, caller: Caller, event: int) -> int:
        obj = self._find(caller, event, "event", "cudaEventDestroy")
        if not obj.alive:
            return self.fail(caller, INVALID_RESOURCE_HANDLE)
        obj.alive = False
        return CUDA_SUCCESS

    def event_record(self, caller: Caller, event: int, stream: int, flags: int = 0) -> int:
        """`cudaEventRecord[WithFlags]`: the event now stands for the stream's work so far."""
        code = self._flags(flags, RECORD_EXTERNAL, "cudaEventRecordWithFlags", "cudaEventRecordExternal")
        obj = self._find(caller, event, "event", "cudaEventRecord")
        code = code or self._usable_stream(caller, stream, "cudaEventRecord")
        if code == CUDA_SUCCESS and not obj.alive:
            code = INVALID_RESOURCE_HANDLE
        if code == CUDA_SUCCESS:
            obj.recorded = True
        return self.fail(caller, code)

    def stream_wait_event(self, caller: Caller, stream: int, event: int, flags: int) -> int:
        """`cudaStreamWaitEvent`: later launches into ``stream`` wait for the event's work (which
        launch order already ran: see the module's docstring)."""
        code = self._flags(flags, WAIT_EXTERNAL, "cudaStreamWaitEvent", "cudaEventWaitExternal")
        obj = self._find(caller, event, "event", "cudaStreamWaitEvent")
        code = code or self._usable_stream(caller, stream, "cudaStreamWaitEvent")
        if code == CUDA_SUCCESS and not obj.alive:
            code = INVALID_RESOURCE_HANDLE
        return self.fail(caller, code)

    def launch_stream(self, caller: Caller, stream: int, kernel: str) -> int:
        """The error of a launch into ``stream`` (cudaSuccess: it may be queued)."""
        if stream in PER_GRID_STREAMS:
            return CUDA_SUCCESS
        obj = self._find(caller, stream, "stream", f"a device launch of `{kernel}`")
        return CUDA_SUCCESS if obj.alive else INVALID_RESOURCE_HANDLE

    def _usable_stream(self, caller: Caller, stream: int, api: str) -> int:
        if stream in (STREAM_TAIL, STREAM_FIRE_AND_FORGET):
            return INVALID_VALUE
        if stream == STREAM_NULL:
            return CUDA_SUCCESS
        return CUDA_SUCCESS if self._find(caller, stream, "stream", api).alive else INVALID_RESOURCE_HANDLE

    @staticmethod
    def _flags(flags: int, capture_only: int, api: str, capture_name: str) -> int:
        if flags & ~capture_only:
            return INVALID_VALUE
        if flags:
            raise DeviceRuntimeError(f"{api} was given {capture_name}, which only matters while a stream is "
                                     "captured into a graph; the device runtime captures nothing, and ptxvm "
                                     "does not know what CUDA returns for it there")
        return CUDA_SUCCESS

    def _find(self, caller: Caller, handle: int, kind: str, api: str) -> _Object:
        """The stream or event ``handle`` names, alive or destroyed; a handle this block could not
        have is refused (undefined behaviour in CUDA)."""
        obj = self.handles.objects.get(handle)
        if obj is None:
            made = "cudaStreamCreateWithFlags" if kind == "stream" else "cudaEventCreateWithFlags"
            extra = " nor the NULL stream, cudaStreamTailLaunch or cudaStreamFireAndForget" if kind == "stream" else ""
            raise DeviceRuntimeError(f"{api} was given {kind} {handle:#x}, which is no {kind} of {made}{extra}")
        if obj.kind != kind:
            article = {"stream": "a stream", "event": "an event"}
            raise DeviceRuntimeError(f"{api} was given {handle:#x} as {article[kind]}, which is {article[obj.kind]}")
        if obj.grid != self.grid_id or obj.cta != caller[0]:
            where = "another grid" if obj.grid != self.grid_id else f"block {obj.cta} (linear id) of this grid"
            raise DeviceRuntimeError(f"{api} was given {kind} {handle:#x}, made by {where}; CUDA's {kind}s belong "
                                     f"to the block that made them (other blocks and grids: undefined behaviour)")
        return obj
