"""numba kernels -> PTX -> ``ptxvm.Module``: ``numba.cuda.compile_ptx`` with no GPU present.

numba asks the CUDA driver for the current device's compute capability while it compiles
(kernels: to pick the target; ``cuda.jit(device=True)`` helpers: every time a kernel calls
one). With no driver that is a ``CudaSupportError``, so compilation runs with numba's lookup
answered by the compute capability ptxvm targets. Every failure of numba, NVVM or a missing
toolkit wheel becomes one :class:`NumbaError` with numba's own message (which names the
kernel's source file and line), never a traceback from numba's internals.
"""

from __future__ import annotations

import contextlib
import threading
import types as pytypes
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import PtxError, PtxVersionWarning

# sm_80 (Ampere): every feature numba's CUDA target lowers (native f64 atomics, f16/bf16,
# the *_sync warp intrinsics) exists there, and ptxvm implements its PTX.
DEFAULT_CC = (8, 0)
INSTALL_HINT = "pip install 'ptxvm[numba]'"
_CC_LOCK = threading.RLock()


class NumbaError(PtxError):
    """numba could not compile a kernel for ptxvm: a typing error, a feature ptxvm's numba
    front door does not support, or numba / its NVVM wheel missing."""


def import_numba_cuda():
    """``numba.cuda``, or a NumbaError saying what to install."""
    try:
        from numba import cuda
    except ImportError as e:
        raise NumbaError(f"the numba front door needs numba and numba-cuda ({e}); {INSTALL_HINT}") from None
    return cuda


@dataclass(frozen=True)
class CompiledKernel:
    """One signature of a kernel: numba's PTX and the ptxvm kernel loaded from it."""

    argtypes: tuple            # numba types, one per Python argument
    ptx: str
    module: object             # ptxvm.Module
    kernel: object             # ptxvm.Kernel (its PTX name is numba's mangled name)


@contextlib.contextmanager
def numba_target(cc: tuple[int, int] = DEFAULT_CC, what: str = "the kernel") -> Iterator[None]:
    """While numba compiles: its 'current device' lookups answer ``cc`` (no driver needed);
    numba's and NVVM's failures become NumbaError about ``what``."""
    import_numba_cuda()
    import numba.cuda.compiler as ncompiler
    import numba.cuda.dispatcher as ndispatcher
    fake = pytypes.SimpleNamespace(compute_capability=tuple(cc), name=f"ptxvm sm_{cc[0]}{cc[1]}", id=0)
    with _CC_LOCK:
        saved = ndispatcher.get_current_device, ncompiler.get_current_device
        ndispatcher.get_current_device = ncompiler.get_current_device = lambda: fake
        try:
            with _numba_errors(what):
                yield
        finally:
            ndispatcher.get_current_device, ncompiler.get_current_device = saved


@contextlib.contextmanager
def _numba_errors(what: str) -> Iterator[None]:
    from numba.core.errors import NumbaError as _NumbaBase
    try:
        yield
    except PtxError:
        raise
    except _NumbaBase as e:
        raise NumbaError(f"numba could not compile {what}: {_first_lines(e)}") from None
    except Exception as e:             # NVVM / NVRTC / cuda-pathfinder, by module
        mod = type(e).__module__ or ""
        if not mod.startswith(("numba", "cuda", "llvmlite")):
            raise
        hint = f"; {INSTALL_HINT}" if "not found" in str(e).lower() or "cannot be found" in str(e).lower() else ""
        raise NumbaError(f"numba could not compile {what} ({type(e).__name__}): {_first_lines(e)}{hint}") from None


def _first_lines(e: BaseException, n: int = 40) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    more = f"\n... ({len(lines) - n} more lines)" if len(lines) > n else ""
    return "\n".join(lines[:n]) + more


def _source(py_func) -> str:
    code = getattr(py_func, "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "source unknown"


def compile_kernel(py_func, argtypes: tuple, *, cc: tuple[int, int] = DEFAULT_CC, options: dict) -> CompiledKernel:
    """Compile ``py_func`` for ``argtypes`` through ``numba.cuda.compile_ptx`` and load the PTX."""
    cuda = import_numba_cuda()
    from numba.core import types
    import ptxvm
    sig = types.void(*argtypes)
    name = getattr(py_func, "__qualname__", getattr(py_func, "__name__", "kernel"))
    with numba_target(cc, f"kernel `{name}` ({_source(py_func)}) for ({', '.join(map(str, argtypes))})"):
        ptx, _ = cuda.compile_ptx(py_func, sig, cc=tuple(cc), **options)
    filename = f"<numba {name}({', '.join(map(str, argtypes))})>"
    with warnings.catch_warnings():
        # NVVM stamps its toolkit's PTX version whatever the kernel uses; every instruction
        # is still checked against ptxvm's ISA table, so the version warning says nothing here.
        warnings.simplefilter("ignore", PtxVersionWarning)
        module = ptxvm.Module(ptx, filename)
    entries = list(module.kernels)
    if len(entries) != 1:
        raise NumbaError(f"numba's PTX for `{name}` has {len(entries)} kernels ({', '.join(entries) or 'none'}); "
                         "expected exactly one .entry")
    return CompiledKernel(tuple(argtypes), ptx, module, module[entries[0]])
