"""ptxvm as a Triton driver: the target Triton compiles for, the "binary" it loads (the PTX
text), the launcher that runs it on a ptxvm executor, and the benchmarker the autotuner uses.

Triton finds drivers through the ``triton.backends`` entry point (``ptxvm.triton``: this
module and ``compiler``), each asked ``is_active()``; with ``PTXVM_TRITON=1`` ptxvm's is.
``install`` makes it the active driver directly (``triton.runtime.driver.set_active``).
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from triton.backends.compiler import GPUTarget
from triton.backends.driver import DriverBase

from . import BACKEND, DEFAULT_ARCH, TritonError, env_active
from .launch import PtxvmLauncher, specialize_numpy

# What ptxvm's executors offer a Triton kernel (Triton asks before it launches).
PROPERTIES = {"max_shared_mem": 227 * 1024, "multiprocessor_count": 108, "max_num_regs": 65536,
              "warpSize": 32, "sm_clock_rate": 1410000, "mem_clock_rate": 1215000, "mem_bus_width": 5120}
MAX_THREADS = 1024


class _Utils:
    """``driver.utils``: module loading and device properties."""

    def load_binary(self, name, kernel, shared, device):
        import ptxvm
        text = kernel.decode() if isinstance(kernel, bytes) else kernel
        module = ptxvm.Module(text, f"{name}.ptx")
        return module, module[name], 0, 0, MAX_THREADS

    def unload_module(self, module) -> None:
        pass

    def get_device_properties(self, device) -> dict:
        return dict(PROPERTIES)


def _bench(kernel_call, quantiles=None, warmup: int = 1, rep: int = 3, return_mode: str = "mean", **_):
    """The autotuner's timer: wall milliseconds of ``kernel_call`` on the CPU executor."""
    for _ in range(warmup):
        kernel_call()
    times = []
    for _ in range(max(rep, 1)):
        t0 = time.perf_counter()
        kernel_call()
        times.append((time.perf_counter() - t0) * 1000.0)
    if quantiles is not None:
        out = [float(np.quantile(times, q)) for q in quantiles]
        return out[0] if len(out) == 1 else out
    return {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max}[return_mode](times)


class PtxvmDriver(DriverBase):
    """Triton's driver interface, for ptxvm's executors."""

    device_name: str | None = None              # the executor launches use (None: the default)
    arch: int = DEFAULT_ARCH

    def __init__(self) -> None:
        super().__init__()
        self.utils = _Utils()
        self.launcher_cls = PtxvmLauncher
        _patch_run()                # made by Triton itself under PTXVM_TRITON=1: numpy arguments too

    @classmethod
    def is_active(cls) -> bool:
        return env_active()

    def map_python_to_cpp_type(self, ty: str) -> str:
        from triton.backends.nvidia.driver import ty_to_cpp
        return ty_to_cpp(ty)

    def get_current_target(self) -> GPUTarget:
        return GPUTarget(BACKEND, self.arch, 32)

    def get_active_torch_device(self):
        raise TritonError("ptxvm's Triton driver has no torch device: pass numpy arrays or ptxvm DeviceArrays")

    def get_benchmarker(self):
        return _bench

    def get_current_device(self) -> int:
        # Triton keys its compiled kernels by device: one "device" per compute capability, so
        # activate(arch=90) after arch=80 compiles anew instead of reusing sm_80 code.
        return self.arch

    def set_current_device(self, device) -> None:
        pass

    def get_current_stream(self, device=None) -> int:
        return 0

    def get_device_capability(self, device=None) -> tuple[int, int]:
        return divmod(self.arch, 10)

    def get_empty_cache_for_benchmark(self):
        return np.zeros(1, np.int8)

    def clear_cache(self, cache) -> None:
        pass

    def allocate_default_profile_scratch(self, size: int, alignment: int, stream):
        return None                                  # the launcher gives the scratch itself


_saved: dict = {}


def install(device: str | None, arch: int) -> None:
    from triton.runtime import driver as rt_driver
    from triton.backends import Backend, backends
    from .compiler import PtxvmBackend
    if device is not None:
        from ..driver import executors
        executors.require(device)                   # an unknown name is refused now, not at launch
    backends.setdefault(BACKEND, Backend(compiler=PtxvmBackend, driver=PtxvmDriver))
    drv = PtxvmDriver()
    drv.device_name, drv.arch = device, int(arch)
    rt_driver.set_active(drv)


def _patch_run() -> None:
    """Triton's argument specialisation takes numpy arrays (as pointers). It runs before the
    first compile of each kernel, after Triton made its driver: here is early enough both for
    ``install`` and for Triton's own discovery under PTXVM_TRITON=1."""
    import triton.runtime.jit as jit
    if "specialize" not in _saved:
        _saved["specialize"] = jit.native_specialize_impl
        jit.native_specialize_impl = specialize_numpy(jit.native_specialize_impl)


def uninstall() -> None:
    import triton.runtime.jit as jit
    from triton.runtime import driver as rt_driver
    if "specialize" in _saved:
        jit.native_specialize_impl = _saved.pop("specialize")
    if isinstance(rt_driver._active, PtxvmDriver):
        rt_driver._active = None if isinstance(rt_driver._default, PtxvmDriver) else rt_driver._default
