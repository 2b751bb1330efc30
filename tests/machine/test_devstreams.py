"""The device runtime's streams, events and per-thread last error (machine.devstreams, through
machine.cdp.DeviceRuntime): the error codes CUDA documents for each misuse (values from CUDA 13's
driver_types.h: cudaErrorInvalidValue 1, cudaErrorInvalidResourceHandle 400), the refusals of
handles a block cannot have, and that streams change no launch order."""

from __future__ import annotations

import pytest

import ptxvm
from models.fixture_kernels import fixture_module
from ptxvm.machine import cdp
from ptxvm.machine.memory import DeviceMemory

INVALID_VALUE, INVALID_RESOURCE_HANDLE = 1, 400
NON_BLOCKING, DISABLE_TIMING, TAIL, FIRE_AND_FORGET = 0x1, 0x2, 0x3, 0x4
T0, T1, OTHER_BLOCK = (0, 0), (0, 1), (1, 0)


def _rt() -> cdp.DeviceRuntime:
    return cdp.DeviceRuntime(DeviceMemory(), {})


def _made(rt, kind: str, caller=T0) -> int:
    code, handle = (rt.stream_create(caller, NON_BLOCKING) if kind == "stream"
                    else rt.event_create(caller, DISABLE_TIMING))
    assert code == 0 and handle not in (0, 1, 2, 3, 4)
    return handle


@pytest.mark.parametrize("flags", [0x0, 0x2, 0x3])
def test_streams_need_exactly_cuda_stream_non_blocking(flags):
    rt = _rt()
    assert rt.stream_create(T0, flags)[0] == INVALID_VALUE


@pytest.mark.parametrize("flags, code", [(0x0, INVALID_VALUE), (0x1, INVALID_VALUE), (0x2, 0), (0x3, 0),
                                         (0x6, INVALID_VALUE), (0x8 | 0x2, INVALID_VALUE)])
def test_events_need_cuda_event_disable_timing_and_no_interprocess(flags, code):
    assert _rt().event_create(T0, flags)[0] == code


def test_the_last_error_is_per_thread_and_get_resets_it_peek_does_not():
    rt = _rt()
    rt.stream_create(T1, 0)
    assert rt.last_error(T0, reset=False) == 0 and rt.last_error(T0, reset=True) == 0
    assert rt.last_error(T1, reset=False) == INVALID_VALUE
    assert rt.last_error(T1, reset=True) == INVALID_VALUE
    assert rt.last_error(T1, reset=False) == 0


def test_destroyed_streams_and_events_give_invalid_resource_handle():
    rt = _rt()
    s, e = _made(rt, "stream"), _made(rt, "event")
    assert rt.stream_destroy(T0, s) == 0 and rt.event_destroy(T0, e) == 0
    assert rt.stream_destroy(T0, s) == INVALID_RESOURCE_HANDLE
    assert rt.event_destroy(T0, e) == INVALID_RESOURCE_HANDLE
    live_e, live_s = _made(rt, "event"), _made(rt, "stream")
    assert rt.event_record(T0, live_e, s) == INVALID_RESOURCE_HANDLE
    assert rt.event_record(T0, e, live_s) == INVALID_RESOURCE_HANDLE
    assert rt.stream_wait_event(T0, s, live_e, 0) == INVALID_RESOURCE_HANDLE
    assert rt.stream_wait_event(T0, live_s, e, 0) == INVALID_RESOURCE_HANDLE
    assert rt.stream_destroy(T0, 0) == INVALID_RESOURCE_HANDLE            # the NULL stream
    assert rt.last_error(T0, reset=True) == INVALID_RESOURCE_HANDLE


def test_tail_and_fire_and_forget_streams_cannot_record_or_wait():
    rt = _rt()
    e = _made(rt, "event")
    for stream in (TAIL, FIRE_AND_FORGET):
        assert rt.event_record(T0, e, stream) == INVALID_VALUE
        assert rt.stream_wait_event(T0, stream, e, 0) == INVALID_VALUE
    assert rt.event_record(T0, e, 0) == 0 and rt.stream_wait_event(T0, 0, e, 0) == 0


def test_undefined_flags_are_invalid_and_capture_only_flags_refused():
    rt = _rt()
    s, e = _made(rt, "stream"), _made(rt, "event")
    assert rt.event_record(T0, e, s, 0x2) == INVALID_VALUE
    assert rt.stream_wait_event(T0, s, e, 0x4) == INVALID_VALUE
    with pytest.raises(cdp.DeviceRuntimeError, match="cudaEventRecordExternal, which only matters while a stream"):
        rt.event_record(T0, e, s, 0x1)


def test_handles_of_another_block_another_grid_or_kind_are_refused():
    rt = _rt()
    s, e = _made(rt, "stream"), _made(rt, "event")
    with pytest.raises(cdp.DeviceRuntimeError) as info:
        rt.stream_destroy(OTHER_BLOCK, s)
    assert str(info.value) == (f"cudaStreamDestroy was given stream {s:#x}, made by block 0 (linear id) of this "
                               "grid; CUDA's streams belong to the block that made them (other blocks and grids: "
                               "undefined behaviour)")
    with pytest.raises(cdp.DeviceRuntimeError, match="made by another grid"):
        rt.child().event_destroy(T0, e)
    with pytest.raises(cdp.DeviceRuntimeError) as info:
        rt.event_record(T0, s, 0)
    assert str(info.value) == f"cudaEventRecord was given {s:#x} as an event, which is a stream"


def test_launches_into_streams_run_in_launch_order_and_a_destroyed_stream_queues_nothing():
    module = fixture_module("cdp")
    functions = ptxvm.driver.arrays.default_device().image(module).functions
    rt = cdp.DeviceRuntime.for_module(DeviceMemory(), module.ir, functions)
    a, b = (functions[next(n for n in functions if n.startswith(f"_Z{len(k)}{k}"))] for k in ("cdp_child", "cdp_fib"))
    s1, s2 = _made(rt, "stream"), _made(rt, "stream")
    launches = [(a, s2), (b, s1), (a, 0), (b, s2)]
    assert [rt.launch(rt.parameter_buffer(f, (1, 1, 1), (1, 1, 1), 0), s, T0) for f, s in launches] == [0] * 4
    rt.stream_destroy(T0, s1)
    assert rt.launch(rt.parameter_buffer(a, (1, 1, 1), (1, 1, 1), 0), s1, T0) == INVALID_RESOURCE_HANDLE
    assert rt.memory.allocations == []                  # the refused launch's buffer is freed too
    ran = []
    cdp.complete(rt, lambda g, sub: ran.append((g.kernel[:8], g.stream)))
    assert ran == [("_Z9cdp_c", s2), ("_Z7cdp_f", s1), ("_Z9cdp_c", 0), ("_Z7cdp_f", s2)]
