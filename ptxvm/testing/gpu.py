"""Record a launch on a real NVIDIA GPU: through CuPy, else cuda-python's driver bindings.

Both load the PTX text itself (the driver JIT-compiles it for the GPU present),
pass the same arguments (arrays copied to fresh device buffers, scalars as
their ``.param`` types) and copy every array back after the launch. Nothing
here is needed, or imported, unless the ``cuda`` executor is asked for.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from ..errors import KernelFault, LaunchError
from .golden import ExecutorUnavailable, Launch, provenance

NO_GPU = "no NVIDIA GPU/CuPy available: the `cuda` executor needs CuPy or cuda-python and a CUDA device"


def _cupy():
    """The cupy module when it imports and sees a device, else None."""
    try:
        import cupy
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # noqa: BLE001 - ImportError, or CUDARuntimeError without a driver/device
        return None


def _driver():
    """cuda-python's driver module, initialised, when a device exists, else None."""
    try:
        from cuda.bindings import driver
    except ImportError:
        try:
            from cuda import cuda as driver  # cuda-python before 12.6
        except ImportError:
            return None
    try:
        ok = driver.CUresult.CUDA_SUCCESS
        if driver.cuInit(0)[0] != ok:
            return None
        err, n = driver.cuDeviceGetCount()
        return driver if err == ok and n > 0 else None
    except Exception:  # noqa: BLE001 - a broken install is "not available"
        return None


def backend() -> str | None:
    """"cupy", "cuda-python" or None: what ``run_on_gpu`` would use here."""
    if _cupy() is not None:
        return "cupy"
    return "cuda-python" if _driver() is not None else None


def run_on_gpu(launch: Launch) -> tuple[list[np.ndarray | None], dict[str, str]]:
    """Launch on GPU 0; (outputs per argument, provenance)."""
    cp = _cupy()
    if cp is not None:
        return _run_cupy(cp, launch)
    drv = _driver()
    if drv is not None:
        return _run_driver(drv, launch)
    raise ExecutorUnavailable(NO_GPU)


def _run_cupy(cp, launch: Launch):
    args: list = []
    for a in launch.args:
        if a.kind == "bytes":
            raise LaunchError(f"argument `{a.name}` is a by-value byte array; CuPy cannot pass one "
                              "(install cuda-python to record this kernel)")
        args.append(cp.asarray(a.value) if a.kind == "array" else a.value[()])
    try:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "kernel.ptx"       # RawModule loads PTX from a path (code= is CUDA C++)
            path.write_text(launch.ptx)
            fn = cp.RawModule(path=str(path)).get_function(launch.kernel)
            if launch.shared_mem > 48 * 1024:   # above 48 KiB dynamic shared memory is opt-in
                fn.max_dynamic_shared_size_bytes = launch.shared_mem
            fn(launch.grid, launch.block, tuple(args), shared_mem=launch.shared_mem)
            cp.cuda.Device().synchronize()
        outputs = [cp.asnumpy(v) if a.kind == "array" else None for a, v in zip(launch.args, args)]
    except cp.cuda.driver.CUDADriverError as e:
        raise KernelFault(f"kernel `{launch.kernel}` failed on the GPU: {e}") from None
    dev = cp.cuda.Device().id
    name = cp.cuda.runtime.getDeviceProperties(dev)["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    return outputs, provenance("cupy", cp.__version__, "cuda", name)


def _run_driver(drv, launch: Launch):
    ok = drv.CUresult.CUDA_SUCCESS

    def check(result, what: str):
        err, *values = result
        if err != ok:
            raise KernelFault(f"kernel `{launch.kernel}`: {what} failed on the GPU: {err!r}")
        return values[0] if len(values) == 1 else values

    dev = check(drv.cuDeviceGet(0), "cuDeviceGet")
    ctx = check(drv.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    buffers: dict[int, object] = {}
    module = None
    try:
        check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        module = check(drv.cuModuleLoadData(launch.ptx.encode() + b"\0"), "loading the PTX")
        fn = check(drv.cuModuleGetFunction(module, launch.kernel.encode()), "cuModuleGetFunction")
        slots = []      # host memory holding each parameter's value; kernelParams points at them
        for i, a in enumerate(launch.args):
            if a.kind == "array":
                buffers[i] = check(drv.cuMemAlloc(max(a.value.nbytes, 1)), "cuMemAlloc")
                src = np.ascontiguousarray(a.value)     # host pointers as ints: accepted by every version
                check(drv.cuMemcpyHtoD(buffers[i], src.ctypes.data, src.nbytes), "cuMemcpyHtoD")
                slots.append(np.array([int(buffers[i])], dtype=np.uint64))
            else:
                slots.append(np.ascontiguousarray(a.value.reshape(-1)).copy())
        pointers = np.array([s.ctypes.data for s in slots], dtype=np.uint64)
        check(drv.cuLaunchKernel(fn, *launch.grid, *launch.block, launch.shared_mem, 0,
                                 pointers.ctypes.data, 0), "cuLaunchKernel")
        check(drv.cuCtxSynchronize(), "the launch")
        outputs: list[np.ndarray | None] = []
        for i, a in enumerate(launch.args):
            out = None
            if a.kind == "array":
                out = np.empty_like(a.value, order="C")
                check(drv.cuMemcpyDtoH(out.ctypes.data, buffers[i], out.nbytes), "cuMemcpyDtoH")
            outputs.append(out)
        name = check(drv.cuDeviceGetName(256, dev), "cuDeviceGetName")
    finally:
        for b in buffers.values():
            drv.cuMemFree(b)
        if module is not None:
            drv.cuModuleUnload(module)
        drv.cuDevicePrimaryCtxRelease(dev)
    name = name.split(b"\0")[0].decode() if isinstance(name, bytes) else str(name)
    return outputs, provenance("cuda-python", _version("cuda-python"), "cuda", name)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"
