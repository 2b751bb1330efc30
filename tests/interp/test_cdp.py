"""Dynamic parallelism (CDP2, issue 14 item 3) on the interpreter: tests/cuda/cdp.cu compiled by nvcc
13 with -rdc=true, every variant, against numpy models of the sources; the device runtime's
refusals with their exact messages."""

from __future__ import annotations

import numpy as np
import pytest

import ptxvm
from models import devrt
from models.fixture_kernels import VARIANTS, kernel

DEVICE = "interp"


@pytest.fixture
def limits():
    yield ptxvm.limits
    ptxvm.limits.reset()


@pytest.mark.parametrize("variant", VARIANTS)
def test_child_recursive_tail_and_heap_launches_match_the_models(variant):
    for case, got, want in devrt.run_cdp_cases(DEVICE, variant):
        np.testing.assert_array_equal(got, want, err_msg=case)


def test_cuda_11_entry_point_names_work_the_same():
    # CDP1-era PTX (CUDA 11) calls the entry points without the __cudaCDP2 prefix, same signatures.
    from models.fixtures import FIXTURES
    text = (FIXTURES / "nvcc" / "sm80" / "cdp.ptx").read_text()
    text = text.replace("__cudaCDP2GetParameterBufferV2", "cudaGetParameterBufferV2")
    text = text.replace("__cudaCDP2LaunchDeviceV2", "cudaLaunchDeviceV2")
    assert "__cudaCDP2LaunchDeviceV2" not in text
    out = np.zeros(2 * 32, np.int32)
    ptxvm.Module(text)["_Z10cdp_parentPii"]((2,), (32,), (out, np.int32(32)), device=DEVICE)
    np.testing.assert_array_equal(out, np.concatenate([b * 32 + 2 * np.arange(32) for b in range(2)]))


def test_nesting_deeper_than_cdp_depth_stops_the_launching_thread(limits):
    limits.configure(cdp_depth=5)
    out = np.zeros(1, np.int32)
    with pytest.raises(ptxvm.TrapError) as e:
        kernel("cdp", "cdp_fib")((1,), (1,), (out, np.int32(8)), device=DEVICE)
    assert e.value.message.split("\n")[0] == (
        "a device launch of `_Z7cdp_fibPii` needs nesting depth 6, more than ptxvm's limit of 5 (cdp_depth; "
        "raise it with PTXVM_LIMIT_CDP_DEPTH=... or ptxvm.limits.configure(cdp_depth=...))")
    assert "__cudaCDP2LaunchDeviceV2" in e.value.message.split("\n")[2]


def test_pending_launches_past_the_limit_stop_the_launching_thread(limits):
    limits.configure(cdp_pending_launches=2)
    out = np.zeros(3 * 32, np.int32)
    with pytest.raises(ptxvm.TrapError) as e:
        kernel("cdp", "cdp_parent")((3,), (32,), (out, np.int32(32)), device=DEVICE)
    assert e.value.message.split("\n")[0] == (
        "a device launch of `_Z9cdp_childPiii` needs pending launches 3, more than ptxvm's limit of 2 "
        "(cdp_pending_launches; raise it with PTXVM_LIMIT_CDP_PENDING_LAUNCHES=... or "
        "ptxvm.limits.configure(cdp_pending_launches=...))")
    assert e.value.block == (2, 0, 0)


def test_device_side_cuda_device_synchronize_is_refused_with_why():
    mod = ptxvm.Module(devrt.SYNC_PTX)
    with pytest.raises(ptxvm.UnsupportedError) as e:
        mod["waits"]((1,), (1,), (np.zeros(1, np.int32),), device=DEVICE)
    assert e.value.message == "`call.uni` " + devrt.SYNC_WHY
    assert e.value.line == 14
