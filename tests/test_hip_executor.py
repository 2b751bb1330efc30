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


class _FakeRuntime(_FakeHip):
    """_FakeHip plus hipRuntimeGetVersion (HIP_VERSION = major * 10^7 + minor * 10^5 + patch)."""

    def hipRuntimeGetVersion(self, out):
        ctypes.cast(out, ctypes.POINTER(ctypes.c_int))[0] = 60241134
        return 0


def test_device_info_names_the_gpu_arch_and_versions(monkeypatch, tmp_path):
    monkeypatch.setenv("ROCM_PATH", str(tmp_path))
    fake = _FakeRuntime(b"gfx90a:sramecc+:xnack-")
    assert hip.device_info(fake) == {"gpu": "AMD Instinct MI210", "gcn_arch": "gfx90a:sramecc+:xnack-",
                                     "hip_runtime": "6.2.41134", "rocm": "6.2.41134"}
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("6.2.4-120\n")
    assert hip.device_info(fake)["rocm"] == "6.2.4-120"


def test_a_recording_on_hip_carries_the_gpu_and_rocm_as_provenance(monkeypatch):
    from ptxvm.testing import golden
    info = {"gpu": "AMD Instinct MI210", "gcn_arch": "gfx90a:sramecc+:xnack-", "hip_runtime": "6.2.41134",
            "rocm": "6.2.4-120"}
    monkeypatch.setattr(hip, "device_info", lambda *a, **k: info)
    p = golden.executor_provenance("hip")
    assert {k: p[k] for k in info} == info and p["executor"] == "hip"
    assert p["device"] == "AMD Instinct MI210 (gfx90a:sramecc+:xnack-), ROCm 6.2.4-120, through ptxvm hip"
    assert "gpu" not in golden.executor_provenance("interp")


def test_record_on_hip_without_rocm_is_one_line(capsys, tmp_path):
    if executors.why_unavailable(executors.get("hip")) is None:
        pytest.skip("a HIP runtime and an AMD GPU are here")
    from ptxvm.cli import main
    rc = main(["record", str(FIXTURES / "nvcc" / "sm80" / "elementwise.ptx"), "--kernel", "vector_add",
               "--grid", "1", "--block", "32", "--arg", "f32[32]=arange", "--arg", "f32[32]=arange",
               "--arg", "f32[32]=zeros", "--arg", "32", "--executor", "hip", "-o", str(tmp_path / "g.npz")])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and "\n" not in err and err.startswith("ptxvm: error: --device hip is unavailable here: ")
    assert not (tmp_path / "g.npz").exists()


@pytest.mark.skipif(executors.why_unavailable(executors.get("hip")) is not None, reason="no HIP runtime or AMD GPU")
def test_record_on_the_gpu_saves_its_name_and_rocm(tmp_path):
    from ptxvm.testing import golden
    n = 64
    launch = golden.make_launch((FIXTURES / "nvcc" / "sm80" / "elementwise.ptx").read_text(), "vector_add", 1, n,
                                [np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32),
                                 np.int32(n)])
    g = golden.load_golden(golden.save_golden(golden.record(launch, "hip"), tmp_path / "g.npz"))
    assert np.array_equal(g.outputs[2], np.arange(n, dtype=np.float32) + 1)
    info = hip.device_info()
    assert {k: g.provenance[k] for k in info} == info and info["gcn_arch"].startswith("gfx")
