"""The `hip` executor (ROCm's libamdhip64 through ctypes). Without ROCm or a GPU it is registered
and unavailable with a one-line reason; what can be checked without a GPU is checked with a
stand-in for the library (the gcnArchName lookup, error reporting). The kernarg packing it
uses is tests/test_kernarg.py's subject; a launch on a real GPU is the last test."""

from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest
from models.fixtures import FIXTURES

import ptxvm
from ptxvm.driver import executors
from ptxvm.driver.executors import hip


def test_hip_is_registered_with_a_reason_when_unavailable():
    e = executors.get("hip")
    why = executors.why_unavailable(e)
    if why is None:
        pytest.skip("a HIP runtime and an AMD GPU are here")
    assert "\n" not in why and ("libamdhip64.so" in why or "no AMD GPU" in why or "not installed" in why)
    assert "hip" not in executors.available()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = ptxvm.Module.from_file(FIXTURES / "nvcc" / "sm80" / "elementwise.ptx").get_function("vector_add")
    with pytest.raises(ptxvm.LaunchError) as err:
        k(1, 32, (np.zeros(32, np.float32),) * 3 + (np.int32(32),), device="hip")
    assert "\n" not in err.value.message and err.value.message.startswith("device `hip`")


class _FakeHip:
    """hipGetDevicePropertiesR0600 writing a device name at 0 and the arch name further on."""

    def __init__(self, arch: bytes, at: int = 1160, err: int = 0) -> None:
        self.arch, self.at, self.err = arch, at, err

    def hipGetDevicePropertiesR0600(self, buf, device):
        ctypes.memmove(buf, b"AMD Instinct MI210\0", 19)
        ctypes.memmove(ctypes.addressof(buf) + self.at, self.arch + b"\0", len(self.arch) + 1)
        return self.err

    def hipGetErrorName(self, err):
        return b"hipErrorInvalidDevice"

    def hipGetErrorString(self, err):
        return b"invalid device ordinal"


def test_gcn_arch_name_is_found_in_the_properties():
    assert hip.gcn_arch_name(_FakeHip(b"gfx90a:sramecc+:xnack-")) == "gfx90a:sramecc+:xnack-"
    assert hip.gcn_arch_name(_FakeHip(b"gfx1100", at=396)) == "gfx1100"


def test_hip_errors_carry_hips_name_and_string():
    with pytest.raises(ptxvm.LaunchError, match="hipGetDeviceProperties failed on device `hip`: "
                                                "hipErrorInvalidDevice: invalid device ordinal"):
        hip.gcn_arch_name(_FakeHip(b"gfx942", err=101))


@pytest.mark.skipif(executors.why_unavailable(executors.get("hip")) is not None, reason="no HIP runtime or AMD GPU")
def test_vector_add_on_the_gpu_equals_numpy():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k = ptxvm.Module.from_file(FIXTURES / "nvcc" / "sm80" / "elementwise.ptx").get_function("vector_add")
    n = 1000
    a, b = np.arange(n, dtype=np.float32), np.full(n, 0.5, np.float32)
    c = np.zeros(n, np.float32)
    k(4, 256, (a, b, c, np.int32(n)), device="hip")
    assert np.array_equal(c, a + b)
