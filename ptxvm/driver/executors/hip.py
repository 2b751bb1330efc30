"""`hip`: a kernel translated for the AMD GPU of this machine and run there through ROCm.

ctypes on ROCm's ``libamdhip64.so`` (``$ROCM_PATH/lib``, ``/opt/rocm/lib`` or the loader's
path); no Python package. A launch: the device's ``gcnArchName`` picks the target,
``ptxvm.compile`` translates the module once per target, ``hipModuleLoadData`` /
``hipModuleGetFunction`` load it, every numpy argument (arrays that overlap: one buffer) is
``hipMalloc``'d and copied in, the explicit kernel arguments are packed from the code
object's metadata by ``ptxvm.driver.kernarg`` (the emulator executors use the same packing)
and passed with ``HIP_LAUNCH_PARAM_BUFFER_POINTER``, dynamic shared memory is the launch's
``sharedMemBytes``; then ``hipDeviceSynchronize``, the buffers are copied back and freed.
The code object v5 hidden arguments (block counts, group sizes, dynamic LDS size, queue...)
are the runtime's: ROCclr writes them from the same metadata. A HIP error is a
``KernelFault`` (from the kernel) or ``LaunchError`` with HIP's own error name and string.

Without the library or without a GPU, ``hip`` stays registered and says which is missing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import threading
from pathlib import Path
from typing import Any

from ...errors import KernelFault, LaunchError
from . import Capabilities, Executor, LaunchRequest, Unavailable, register

_LIB_NAME = "libamdhip64.so"
# hip_runtime_api.h: extra[] markers of hipModuleLaunchKernel; hipMemcpyKind.
_BUFFER_POINTER, _BUFFER_SIZE, _END = 1, 2, 3
_H2D, _D2H = 1, 2
# Errors raised by a running kernel (hipErrorIllegalAddress 700, hipErrorLaunchFailure 719, ...).
_KERNEL_ERRORS = {700, 701, 702, 710, 719}
_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}


def _library_path() -> str | None:
    roots = [os.environ.get("ROCM_PATH", ""), "/opt/rocm"]
    for root in filter(None, roots):
        p = Path(root) / "lib" / _LIB_NAME
        if p.is_file():
            return str(p)
    found = ctypes.util.find_library("amdhip64")
    return found


def _load() -> tuple[ctypes.CDLL | None, str | None]:
    """The HIP runtime, loaded once, or why it cannot be."""
    if "lib" not in _STATE:
        path, lib, why = _library_path(), None, None
        if path is None:
            why = (f"ROCm's {_LIB_NAME} is not installed here (looked in $ROCM_PATH/lib, /opt/rocm/lib and "
                   "the loader's path)")
        else:
            try:
                lib = ctypes.CDLL(path)
                lib.hipGetErrorString.restype = ctypes.c_char_p
                lib.hipGetErrorName.restype = ctypes.c_char_p
            except (OSError, AttributeError) as e:
                lib, why = None, f"{path} does not load: {e}"
        _STATE["lib"], _STATE["why"] = lib, why
    return _STATE["lib"], _STATE["why"]


def _lib() -> ctypes.CDLL:
    lib, why = _load()
    if lib is None:
        raise Unavailable(f"device `hip` is unavailable here: {why}")
    return lib


def why_unavailable() -> str | None:
    """None when a HIP runtime and at least one AMD GPU are here; else which is missing."""
    lib, why = _load()
    if lib is None:
        return why
    n = ctypes.c_int(0)
    err = lib.hipGetDeviceCount(ctypes.byref(n))
    if err != 0 or n.value < 1:
        return f"no AMD GPU: hipGetDeviceCount gave {n.value} ({_name(lib, err)})" if err else "no AMD GPU (0 devices)"
    return None


def _name(lib: ctypes.CDLL, err: int) -> str:
    name, text = lib.hipGetErrorName(err), lib.hipGetErrorString(err)
    return f"{(name or b'?').decode()}: {(text or b'').decode()}"


def _check(lib: ctypes.CDLL, err: int, what: str, kernel: str | None = None) -> None:
    if err == 0:
        return
    message = f"{what} failed on device `hip`: {_name(lib, err)}"
    if err in _KERNEL_ERRORS:
        raise KernelFault(f"kernel `{kernel}` faulted on the GPU: {message}", kernel=kernel)
    raise LaunchError(message)


def _properties(lib: ctypes.CDLL, device: int) -> bytes:
    buf = ctypes.create_string_buffer(16384)
    fn = getattr(lib, "hipGetDevicePropertiesR0600", None) or lib.hipGetDeviceProperties
    _check(lib, fn(buf, device), "hipGetDeviceProperties")
    return buf.raw


def gcn_arch_name(lib: ctypes.CDLL, device: int = 0) -> str:
    """The device's ``gcnArchName`` (``gfx90a:sramecc+:xnack-``). hipDeviceProp_t's layout changes
    between ROCm releases, so the field is found by its form in a generously sized buffer."""
    m = re.search(rb"(gfx[0-9a-f]{3,4}(?::[a-z]+[+-])*)\x00", _properties(lib, device))
    if m is None:
        raise LaunchError("device `hip`: hipGetDeviceProperties gave no gcnArchName (gfx...)")
    return m.group(1).decode()


def _rocm_release() -> str | None:
    """The installed ROCm release ($ROCM_PATH/.info/version, e.g. ``6.2.4-120``), when it says."""
    for root in (os.environ.get("ROCM_PATH", ""), "/opt/rocm"):
        f = Path(root, ".info", "version") if root else None
        if f is not None and f.is_file():
            text = f.read_text(errors="replace").strip()
            return text.splitlines()[0] if text else None
    return None


def device_info(lib: ctypes.CDLL | None = None, device: int = 0) -> dict[str, str]:
    """What a recording on ``hip`` names as its provenance: the GPU (hipDeviceProp_t.name, the
    struct's first member in every ROCm layout), its gcnArchName, the HIP runtime's version
    (hipRuntimeGetVersion: major * 10^7 + minor * 10^5 + patch) and the ROCm release."""
    lib = lib or _lib()
    raw = _properties(lib, device)
    gpu = raw[:256].split(b"\0", 1)[0].decode(errors="replace").strip() or "unnamed AMD GPU"
    v = ctypes.c_int(0)
    _check(lib, lib.hipRuntimeGetVersion(ctypes.byref(v)), "hipRuntimeGetVersion")
    hip_version = f"{v.value // 10_000_000}.{v.value // 100_000 % 100}.{v.value % 100_000}"
    return {"gpu": gpu, "gcn_arch": gcn_arch_name(lib, device), "hip_runtime": hip_version,
            "rocm": _rocm_release() or hip_version}


def _target(lib: ctypes.CDLL) -> str:
    if "target" not in _STATE:
        from ...amdgpu.targets import available
        arch = gcn_arch_name(lib)
        base = arch.split(":")[0]
        if base not in available():
            raise LaunchError(f"device `hip`: the GPU is {arch}; ptxvm translates for {', '.join(available())}")
        _STATE["target"] = base
    return _STATE["target"]


def _function(lib: ctypes.CDLL, kernel, target: str) -> tuple[ctypes.c_void_p, Any]:
    """The loaded kernel and its code object, once per module and target."""
    key = ("hip", target)
    entry = kernel.module._programs.get(key)
    if entry is None:
        import ptxvm
        obj = ptxvm.compile(kernel.module.ir, target=target)
        module = ctypes.c_void_p()
        image = ctypes.create_string_buffer(obj.hsaco, len(obj.hsaco))
        _check(lib, lib.hipModuleLoadData(ctypes.byref(module), image), "hipModuleLoadData")
        entry = kernel.module._programs[key] = {"obj": obj, "module": module, "functions": {}}
    fn = entry["functions"].get(kernel.name)
    if fn is None:
        fn = ctypes.c_void_p()
        _check(lib, lib.hipModuleGetFunction(ctypes.byref(fn), entry["module"], kernel.name.encode()),
               f"hipModuleGetFunction({kernel.name})")
        entry["functions"][kernel.name] = fn
    return fn, entry["obj"]


def _launch(request: LaunchRequest):
    from .. import api, kernarg
    lib = _lib()
    kernel = request.kernel
    with _LOCK:
        target = _target(lib)
        fn, obj = _function(lib, kernel, target)
        ka = kernarg.pack(obj.metadata[kernel.name], kernel.params, request.args, request.grid, request.block,
                          request.shared_mem, device="device `hip`")
        stats = kernel.stats = api.LaunchStats()
        pointers: list[ctypes.c_void_p] = []
        try:
            for b in ka.buffers:
                p = ctypes.c_void_p()
                _check(lib, lib.hipMalloc(ctypes.byref(p), ctypes.c_size_t(max(b.nbytes, 1))), "hipMalloc")
                pointers.append(p)
                host = b.host_bytes()
                _check(lib, lib.hipMemcpy(p, host.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(b.nbytes), _H2D),
                       "hipMemcpy (to the device)")
            _run(lib, fn, ka, [p.value or 0 for p in pointers], request, kernel.name)
            readonly = _copy_back(lib, ka, pointers)
        finally:
            for p in pointers:
                lib.hipFree(p)
    if readonly:
        raise LaunchError(f"the kernel wrote to read-only numpy argument(s) {', '.join(readonly)}; pass writable "
                          "arrays to receive the writes")
    return stats


def _run(lib: ctypes.CDLL, fn, ka, bases: list[int], request: LaunchRequest, name: str) -> None:
    # Only the explicit arguments: ROCclr fills the hidden ones from the metadata itself.
    data = ka.fill(bases)[:ka.explicit_size]
    buf = ctypes.create_string_buffer(data, max(len(data), 1))
    size = ctypes.c_size_t(len(data))
    extra = (ctypes.c_void_p * 5)(_BUFFER_POINTER, ctypes.cast(buf, ctypes.c_void_p), _BUFFER_SIZE,
                                  ctypes.cast(ctypes.byref(size), ctypes.c_void_p), _END)
    g, b = request.grid, request.block
    _check(lib, lib.hipModuleLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], ctypes.c_uint(request.shared_mem),
                                          None, None, extra), "hipModuleLaunchKernel", name)
    _check(lib, lib.hipDeviceSynchronize(), f"kernel `{name}` (hipDeviceSynchronize)", name)


def _copy_back(lib: ctypes.CDLL, ka, pointers: list[ctypes.c_void_p]) -> list[str]:
    import numpy as np
    readonly = []
    for b, p in zip(ka.buffers, pointers):
        data = np.empty(b.nbytes, dtype=np.uint8)
        _check(lib, lib.hipMemcpy(data.ctypes.data_as(ctypes.c_void_p), p, ctypes.c_size_t(b.nbytes), _D2H),
               "hipMemcpy (from the device)")
        # Writable members first: a write through one of them may change bytes a read-only view shows.
        for i, a in sorted(b.members, key=lambda m: not m[1].flags.writeable):
            o = b.offset(a)
            if a.flags.writeable:
                a.reshape(-1).view(np.uint8)[:] = data[o:o + a.nbytes]
            elif not np.array_equal(a.reshape(-1).view(np.uint8), data[o:o + a.nbytes]):
                readonly.append(f"argument {i}")
    return readonly


EXECUTOR = register(Executor(
    "hip", "an AMD GPU through ROCm (libamdhip64), the kernel translated for its gcnArchName",
    # Not deterministic: blocks run concurrently, so atomics of different blocks land in any order.
    Capabilities(host_cpu=False, packages=("llvmlite", "ziglang"),
                 needs_why="translates the kernel to an AMD code object (LLVM, ld.lld)",
                 deterministic=False, warp=True),
    _launch, why_unavailable))
