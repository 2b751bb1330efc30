"""ptxvm: a PTX binary translator and process VM.

    >>> import ptxvm
    >>> module = ptxvm.parse(open("k.ptx").read(), filename="k.ptx")
    >>> [k for k in module.kernels]
"""

from __future__ import annotations

from .errors import (  # noqa: F401
    CodegenError, DeadlockError, Diagnostic, IsaTableError, KernelFault, LaunchError, PtxEncodingError, PtxError,
    PtxSemanticError, PtxSyntaxError, PtxVersionWarning, ResourceError, TrapError, UnsupportedError, WatchdogError,
)

__version__ = "0.1.0"


def parse(text: str | bytes, filename: str | None = None, *, verify: bool = True):
    """Parse PTX text into a verified ``ptxvm.ir.Module``.

    Raises ``ptxvm.PtxError`` (``PtxSyntaxError`` / ``PtxSemanticError``) listing
    every error found, each with filename, line and column.
    """
    from .frontend.parser import parse as _parse
    return _parse(text, filename, verify=verify)


def load(path, *, verify: bool = True, cache: bool | None = None):
    """Parse a file's PTX, through the content-hash cache unless disabled: a PTX file, CUDA C++
    (``.cu``, through NVRTC) or what nvcc writes (``.cubin``, ``.fatbin``, executables)."""
    from .frontend.cache import load_file
    return load_file(path, verify=verify, use_cache=cache)


def format_ptx(module) -> str:
    """Print a module back as canonical PTX text."""
    from .frontend.printer import format_module
    return format_module(module)


def __getattr__(name: str):
    # The runtime API imports numpy and the interpreter: load it on first use only.
    if name in ("Module", "DeviceArray", "Kernel", "to_device", "Device", "default_device", "empty", "zeros",
                "memset", "from_dlpack", "Stream", "Event", "get_elapsed_time", "KernelAttributes"):
        from . import driver
        return getattr(driver, name)
    if name in ("CudaArray", "MipmappedArray", "TextureObject", "SurfaceObject"):   # textures and surfaces (CUDA's names)
        from .machine import textures
        return getattr(textures, name)
    if name == "TensorMap":             # cp.async.bulk.tensor's map (ptxvm's encoding of CUtensorMap)
        from .machine.tensormap import TensorMap
        return TensorMap
    if name in ("RawModule", "RawKernel"):   # CUDA C++ through NVRTC, in CuPy's shape
        from .driver import cuda_source
        return getattr(cuda_source, name)
    if name == "compile":               # PTX -> AMD GPU code object (pulls in llvmlite)
        from .amdgpu import compile
        return compile
    raise AttributeError(f"module 'ptxvm' has no attribute {name!r}")


__all__ = ["Module", "RawModule", "RawKernel", "DeviceArray", "Kernel", "to_device", "Device", "default_device",
           "empty", "zeros", "memset", "from_dlpack", "Stream", "Event", "get_elapsed_time", "KernelAttributes", "CudaArray", "MipmappedArray", "TextureObject", "SurfaceObject", "TensorMap", "KernelFault", "LaunchError", "ResourceError", "parse", "load", "format_ptx", "PtxError", "PtxSyntaxError", "PtxSemanticError",
           "PtxEncodingError", "Diagnostic", "UnsupportedError", "CodegenError", "__version__"]
