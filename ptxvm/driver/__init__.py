"""Runtime API: modules, kernels, launches and device memory; the executor registry.

The API (``Module``, ``Kernel``...) imports numpy and the interpreter, so it loads on first use:
``ptxvm.driver.executors`` (what ``ptxvm --help`` and ``ptxvm info`` list) stays light.
"""

from __future__ import annotations

_API = ("Device", "DeviceArray", "Kernel", "Module", "Param", "default_device", "to_device")
_ARRAYS = ("empty", "zeros", "memset", "from_dlpack")
_STREAMS = ("Stream", "Event", "get_elapsed_time")


def __getattr__(name: str):
    if name in _API:
        from . import api
        return getattr(api, name)
    if name in _ARRAYS:
        from . import arrays
        return getattr(arrays, name)
    if name in _STREAMS:
        from . import streams
        return getattr(streams, name)
    if name == "KernelAttributes":
        from .attributes import KernelAttributes
        return KernelAttributes
    raise AttributeError(f"module 'ptxvm.driver' has no attribute {name!r}")


__all__ = [*_API, *_ARRAYS, *_STREAMS, "KernelAttributes"]
