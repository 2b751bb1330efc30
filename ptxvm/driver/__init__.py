"""Runtime API: modules, kernels, launches and device memory; the executor registry.

The API (``Module``, ``Kernel``...) imports numpy and the interpreter, so it loads on first use:
``ptxvm.driver.executors`` (what ``ptxvm --help`` and ``ptxvm info`` list) stays light.
"""

from __future__ import annotations

_API = ("Device", "DeviceArray", "Kernel", "Module", "Param", "default_device", "to_device")


def __getattr__(name: str):
    if name in _API:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module 'ptxvm.driver' has no attribute {name!r}")


__all__ = list(_API)
