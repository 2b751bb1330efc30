"""Triton's ``@triton.jit`` kernels on ptxvm, through Triton's own backend and driver hooks.

    import ptxvm.triton
    ptxvm.triton.activate(device="interp")          # or "cpu"; PTXVM_TRITON=1 does it too
    add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)   # numpy arrays or ptxvm DeviceArrays

Triton compiles for a CUDA target with no GPU present (its NVIDIA backend, stopped at the PTX
stage: ``compiler``), and ptxvm's driver (``driver``) launches the PTX: the block is
``32 * num_warps`` threads, the dynamic shared memory the compiled metadata's ``shared``, and
the two trailing scratch pointers Triton's ABI adds are given buffers of the sizes the metadata
asks for (or null). numpy arrays are copied to device memory for the launch and back after it
(``launch``). The autotuner's configurations run and are timed on the chosen executor.
"""

from __future__ import annotations

import os

from ..errors import PtxError

DEFAULT_ARCH = 80               # sm_80: what Triton's tl.dot and cp.async code is written for
BACKEND = "ptxvm"


class TritonError(PtxError):
    """A Triton kernel ptxvm cannot run (a GPU-only runtime feature, a bad argument)."""


def activate(device: str | None = None, arch: int = DEFAULT_ARCH) -> None:
    """Make ptxvm Triton's active driver: ``@triton.jit`` kernels launched from now on run on
    ``device`` (an executor name: "interp", "cpu"; default ``$PTXVM_DEVICE`` or the
    interpreter), compiled for ``sm_<arch>``."""
    from .driver import install
    install(device, arch)


def deactivate() -> None:
    """Give Triton its own driver back."""
    from .driver import uninstall
    uninstall()


def env_active() -> bool:
    return os.environ.get("PTXVM_TRITON", "").strip() not in ("", "0")


__all__ = ["TritonError", "activate", "deactivate"]
