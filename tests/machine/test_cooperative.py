"""What the host executors share for the device runtime (issue 14 item 3): the cooperative
launch's grid workspace and %envreg values (machine.cooperative) and the CDP2 runtime's
parameter buffers, launch queue, order and refusals (machine.cdp)."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from models.fixtures import FIXTURES
from models.fixture_kernels import fixture_module
from ptxvm.machine import cdp, cooperative
from ptxvm.machine.memory import DeviceMemory


def test_the_workspace_address_is_split_over_envreg1_high_and_envreg2_low():
    regs = cooperative.envreg_values(0x7_0001_2340)
    assert len(regs) == 32 and regs[1] == 0x7 and regs[2] == 0x0001_2340
    assert [r for i, r in enumerate(regs) if i not in (1, 2)] == [0] * 30
    assert cooperative.envreg_values(None) == (0,) * 32


def test_a_fresh_workspace_holds_its_size_then_a_zero_barrier():
    mem = DeviceMemory()
    ws = cooperative.workspace(mem)
    assert ws.size == 8 and list(ws.data[:8].view(np.uint32)) == [8, 0]


def test_the_trap_hint_only_for_kernels_reading_the_workspace_outside_cooperative_launches():
    grid = fixture_module("grid_sync").ir
    plain = fixture_module("elementwise").ir
    assert cooperative.reads_workspace(grid) and not cooperative.reads_workspace(plain)
    assert cooperative.trap_hint(grid, False).startswith("; the kernel reads cooperative groups' grid workspace")
    assert cooperative.trap_hint(grid, True) == "" and cooperative.trap_hint(plain, False) == ""


def _runtime() -> tuple[cdp.DeviceRuntime, dict[str, int]]:
    module = fixture_module("cdp").ir
    functions = ptxvm.driver.arrays.default_device().image(fixture_module("cdp")).functions
    return cdp.DeviceRuntime.for_module(DeviceMemory(), module, functions), functions


def _name(functions: dict[str, int], stem: str) -> str:
    return next(n for n in functions if n.startswith(f"_Z{len(stem)}{stem}"))


def test_parameter_buffers_follow_the_child_kernels_param_layout():
    # cdp_mixed_child(char, double, short, long long *, int): offsets 0, 8, 16, 24, 32 (nvcc writes
    # its buffer at these: st.u8 [b], st.u64 [b+8] (2.0's bits), st.u16 [b+16], st.u64 [b+24], st.u32 [b+32]).
    module = fixture_module("cdp").ir
    child = next(f for n, f in module.kernels.items() if "cdp_mixed_child" in n)
    assert cdp.param_size(child) == 36
    text = (FIXTURES / "nvcc" / "sm80" / "cdp.ptx").read_text()
    start = text.index(".entry _Z16cdp_mixed_parent")
    parent = text[start:text.index("\n}", start)]
    stores = [ln.split()[1] for ln in parent.splitlines() if ln.strip().startswith(("st.u", "st.f"))]
    assert stores == ["[%rd1],", "[%rd1+8],", "[%rd1+16],", "[%rd1+24],", "[%rd1+32],"]


def test_launches_queue_in_order_and_tail_launches_run_last():
    rt, functions = _runtime()
    child, tail = functions[_name(functions, "cdp_child")], functions[_name(functions, "cdp_tail")]
    bufs = [rt.parameter_buffer(f, (1, 1, 1), (32, 1, 1), 0) for f in (tail, child, child)]
    rt.memory.find(bufs[1]).data[:4] = [7, 0, 0, 0]
    assert [rt.launch(b, s) for b, s in zip(bufs, (cdp.STREAM_TAIL, cdp.STREAM_NULL, 4))] == [0, 0, 0]
    assert all(rt.memory.find(b) is None for b in bufs)          # the runtime frees launched buffers
    ran = []
    cdp.complete(rt, lambda g, sub: ran.append((g.kernel, g.stream, g.depth, g.params[:1])))
    assert [(k, s, d) for k, s, d, _ in ran] == [("_Z9cdp_childPiii", 0, 1), ("_Z9cdp_childPiii", 4, 1),
                                                 ("_Z8cdp_tailPii", 3, 1)]
    assert ran[0][3] == b"\x07" and rt.tree.pending == 0


@pytest.mark.parametrize("call, message", [
    (lambda rt, f: rt.parameter_buffer(0x1234, (1, 1, 1), (1, 1, 1), 0),
     "cudaGetParameterBufferV2 was given 0x1234, which is the address of no kernel of this module"),
    (lambda rt, f: rt.parameter_buffer(f, (1, 1, 1), (2048, 1, 1), 0),
     "a device launch of `_Z9cdp_childPiii` with grid (1, 1, 1), block (2048, 1, 1) has 2048 threads per block; "
     "the limit is 1024 (z at most 64; CUDA: cudaErrorInvalidConfiguration)"),
    (lambda rt, f: rt.parameter_buffer(f, (0, 1, 1), (1, 1, 1), 0),
     "a device launch of `_Z9cdp_childPiii` with grid (0, 1, 1), block (1, 1, 1) has a zero dimension "
     "(CUDA: cudaErrorInvalidConfiguration)"),
    (lambda rt, f: rt.launch(0x99, 0),
     "cudaLaunchDeviceV2 was given 0x99, which is no parameter buffer of cudaGetParameterBufferV2 "
     "(or one launched already)"),
    (lambda rt, f: rt.launch(rt.parameter_buffer(f, (1, 1, 1), (1, 1, 1), 0), 0x5),
     "a device launch of `_Z9cdp_childPiii` was given stream 0x5, which is no stream of cudaStreamCreateWithFlags "
     "nor the NULL stream, cudaStreamTailLaunch or cudaStreamFireAndForget"),
])
def test_what_the_device_runtime_refuses(call, message):
    rt, functions = _runtime()
    with pytest.raises(cdp.DeviceRuntimeError) as e:
        call(rt, functions[_name(functions, "cdp_child")])
    assert str(e.value) == message
    assert rt.memory.allocations == []          # a refused launch leaves no parameter buffer behind
