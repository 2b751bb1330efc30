"""AMD keeps refusing CUDA's device runtime (HIP has no device-side launch): each stream, event
and last-error call of tests/cuda/cdp_streams.cu, by its CDP2 name, CUDA 11's CDP1 name and the
_ptsz forms, is refused where it is translated, naming the call."""

from __future__ import annotations

import pytest

import ptxvm
from ptxvm.amdgpu import load_target
from ptxvm.amdgpu.lowering import lift_module

CALLS = ["StreamCreateWithFlags", "StreamDestroy", "StreamWaitEvent", "StreamWaitEvent_ptsz",
         "EventCreateWithFlags", "EventRecord", "EventRecord_ptsz", "EventRecordWithFlags",
         "EventRecordWithFlags_ptsz", "EventDestroy", "GetLastError", "PeekAtLastError"]
NAMES = [p + c for c in CALLS for p in ("__cudaCDP2", "cuda")]

PTX = """.version 7.0
.target sm_80
.address_size 64
.extern .func (.param .b32 func_retval0) {name}
(
    .param .b64 a
)
;
.visible .entry k()
{{
    {{
    .param .b64 param0;
    st.param.b64 [param0+0], 0;
    .param .b32 retval0;
    call.uni (retval0), {name}, (param0);
    }}
    ret;
}}
"""


@pytest.mark.parametrize("name", NAMES)
def test_each_stream_and_event_call_is_refused_naming_it(name):
    with pytest.raises(ptxvm.UnsupportedError) as info:
        lift_module(ptxvm.Module(PTX.format(name=name)).ir, load_target("gfx90a"))
    assert f"calls `{name}`, CUDA's device runtime (dynamic parallelism): HIP has no device-side kernel launch" \
        in str(info.value)
    assert info.value.line == 15
