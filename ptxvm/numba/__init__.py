"""numba ``@cuda.jit`` kernels on ptxvm, with no GPU.

    from numba import cuda
    import ptxvm.numba

    @ptxvm.numba.jit                      # instead of @cuda.jit; the body is unchanged
    def vadd(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    vadd[64, 256](a, b, out)              # numpy arrays in, the kernel's writes come back

Or leave the code alone: ``ptxvm.numba.install()`` (or ``PTXVM_NUMBA=1`` with the ptxvm
pytest plugin, or ``python -m ptxvm.numba script.py``) makes ``numba.cuda.jit`` itself build
these kernels, as ``NUMBA_ENABLE_CUDASIM=1`` does for numba's simulator.

The executor is ``jit(device="interp"|"cpu")``, else ``$PTXVM_DEVICE``, else the interpreter;
``kernel.with_device(name)`` gives the same kernel on another one. ``jit(device=True)`` is
still numba's device function. Needs ``pip install 'ptxvm[numba]'`` (numba, numba-cuda and
NVIDIA's NVVM/NVRTC wheels); see docs/numba.md.
"""

from __future__ import annotations

import os

from .compile import DEFAULT_CC, NumbaError, import_numba_cuda, numba_target
from .dispatcher import Dispatcher

# Options of numba's cuda.jit that compile_ptx takes as they are.
_PASSED = ("debug", "lineinfo", "fastmath", "opt", "forceinline", "launch_bounds")
# Options that change nothing a kernel computes on ptxvm (caching, register and cache hints).
_IGNORED = ("cache", "max_registers", "lto", "shared_memory_carveout", "inline")

_saved: dict[str, object] = {}


def jit(func_or_sig=None, device: bool | str = False, *, executor: str | None = None,
        cc: tuple[int, int] = DEFAULT_CC, link=(), **options):
    """``numba.cuda.jit`` for ptxvm: ``@jit``, ``@jit(sig)``, ``@jit([sigs])``, ``@jit(device=True)``.

    ``device`` keeps numba's meaning when it is a bool (``True``: a device function, returned
    as numba's own); a string names the ptxvm executor (``device="cpu"``), as ``executor=`` does.
    """
    import_numba_cuda()                 # numba missing: a NumbaError saying what to install, now
    if isinstance(device, str):
        executor, device = device, False
    if link:
        raise NumbaError("jit(link=...): linking extra PTX or CUDA C files into a numba kernel is not "
                         "supported by ptxvm's numba front door; write the helper as a "
                         "@cuda.jit(device=True) function, or load the PTX with ptxvm.Module")
    if options.get("debug"):
        raise NumbaError("jit(debug=True): numba's device-side exception checking is not supported by "
                         "ptxvm's numba front door; ptxvm's executors already bounds-check every access "
                         "and name the faulting thread and PTX line")
    unknown = sorted(set(options) - set(_PASSED) - set(_IGNORED))
    if unknown:
        raise NumbaError(f"jit() got option(s) {', '.join(unknown)} that ptxvm's numba front door does not "
                         f"know (it passes {', '.join(_PASSED)} to numba and ignores {', '.join(_IGNORED)})")
    passed = {k: v for k, v in options.items() if k in _PASSED}

    if device:
        return _device_function(func_or_sig, cc, {k: v for k, v in options.items() if k != "cache"})

    def decorate(func, sigs=()):
        return Dispatcher(func, sigs, executor=executor, cc=cc, options=passed)

    if func_or_sig is None:
        return decorate
    if callable(func_or_sig) and not _is_signature(func_or_sig):
        return decorate(func_or_sig)
    sigs = func_or_sig if isinstance(func_or_sig, list) else [func_or_sig]
    return lambda func: decorate(func, sigs)


def _is_signature(obj) -> bool:
    from numba.core import typing
    return isinstance(obj, (str, tuple, typing.Signature))


def _device_function(func_or_sig, cc, options: dict):
    """numba's own device-function dispatcher (a kernel's compile resolves it), compiled for
    ptxvm's compute capability when it has signatures."""
    cuda = import_numba_cuda()
    real_jit = _saved.get("jit", cuda.jit)
    with numba_target(cc):
        if func_or_sig is None:
            return lambda f: _device_function(f, cc, options)
        return real_jit(func_or_sig, device=True, **options)


def install(executor: str | None = None) -> None:
    """Make ``numba.cuda.jit`` (and ``cuda.to_device``, ``cuda.device_array[_like]``,
    ``cuda.synchronize``) ptxvm's, for kernels defined from now on; ``uninstall()`` undoes it."""
    cuda = import_numba_cuda()
    import numba.cuda.decorators as decorators
    import numpy as np
    import ptxvm
    if not _saved:
        _saved.update(jit=cuda.jit, decorators_jit=decorators.jit, to_device=cuda.to_device,
                      device_array=cuda.device_array, device_array_like=cuda.device_array_like,
                      synchronize=cuda.synchronize, stream=cuda.stream, event=cuda.event,
                      event_elapsed_time=cuda.event_elapsed_time)

    def patched_jit(func_or_sig=None, device=False, **kw):
        return jit(func_or_sig, device, executor=kw.pop("executor", executor), **kw)

    patched_jit.__doc__ = jit.__doc__
    patched_jit._ptxvm = True
    cuda.jit = decorators.jit = patched_jit
    cuda.to_device = lambda obj, stream=0, copy=True, to=None: ptxvm.to_device(obj)
    cuda.device_array = lambda shape, dtype=np.float64, strides=None, order="C", stream=0: \
        ptxvm.to_device(np.zeros(shape, dtype=dtype, order=order))
    cuda.device_array_like = lambda ary, stream=0: ptxvm.to_device(np.zeros_like(ary))
    cuda.synchronize = lambda: None        # ptxvm launches are synchronous
    cuda.stream = ptxvm.Stream             # the stream slot of kernel[g, b, stream, smem] takes these
    cuda.event = lambda timing=True: ptxvm.Event(timing=timing)
    cuda.event_elapsed_time = ptxvm.get_elapsed_time


def uninstall() -> None:
    """Give ``numba.cuda`` its own functions back."""
    if not _saved:
        return
    cuda = import_numba_cuda()
    import numba.cuda.decorators as decorators
    decorators.jit = _saved["decorators_jit"]
    for name in ("jit", "to_device", "device_array", "device_array_like", "synchronize", "stream", "event",
                 "event_elapsed_time"):
        setattr(cuda, name, _saved[name])
    _saved.clear()


def installed() -> bool:
    return bool(_saved)


def install_from_env() -> bool:
    """``install()`` when ``PTXVM_NUMBA`` is set to 1 (what the pytest plugin and
    ``python -m ptxvm.numba`` call); returns whether it did."""
    if os.environ.get("PTXVM_NUMBA", "").strip() in ("1", "true", "yes", "on"):
        install()
        return True
    return False


__all__ = ["Dispatcher", "NumbaError", "install", "install_from_env", "installed", "jit", "uninstall"]
