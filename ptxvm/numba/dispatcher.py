"""``ptxvm.numba.jit`` kernels: numba's ``cuda.jit`` dispatcher surface, launching on ptxvm.

    @ptxvm.numba.jit
    def vadd(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    vadd[blocks, threads](a, b, out)             # numpy arrays: the kernel's writes come back
    vadd[blocks, threads, 0, 1024](a, b, out)    # stream, dynamic shared memory bytes

Each distinct tuple of argument types compiles once (``numba.cuda.compile_ptx``) and is kept
in ``overloads``; with explicit signatures (``jit("void(float32[:])")``) those are compiled
when the kernel is defined and an argument converts to the first that accepts it, as numba's
dispatcher does.
"""

from __future__ import annotations

import functools
import inspect
import threading

from ..errors import LaunchError
from . import abi
from .compile import DEFAULT_CC, CompiledKernel, compile_kernel, numba_target


class Dispatcher:
    """A numba CUDA kernel run by ptxvm (what ``ptxvm.numba.jit`` returns for a kernel)."""

    def __init__(self, py_func, signatures=(), *, executor: str | None = None,
                 cc: tuple[int, int] = DEFAULT_CC, options: dict | None = None,
                 _shared: "Dispatcher | None" = None) -> None:
        self.py_func = py_func
        functools.update_wrapper(self, py_func)
        self.executor = executor           # None: $PTXVM_DEVICE at launch, else the interpreter
        self.cc = tuple(cc)
        self.options = dict(options or {})
        self._arg_names = _arg_names(py_func)
        if _shared is not None:            # with_device(): one compile cache for both
            self.overloads, self._lock, self._signatures = _shared.overloads, _shared._lock, _shared._signatures
            return
        self.overloads: dict[tuple, CompiledKernel] = {}
        self._lock = threading.RLock()
        self._signatures: list[tuple] = []
        for sig in signatures:
            self._signatures.append(self.compile(sig).argtypes)

    def __repr__(self) -> str:
        return f"<ptxvm.numba kernel {self.py_func.__qualname__} on {self.executor or 'the default executor'}>"

    # -- numba's dispatcher surface ----------------------------------------------------------

    def __getitem__(self, config) -> "_Launch":
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise LaunchError(f"launch `{self.__name__}` as kernel[grid, block], kernel[grid, block, stream] "
                              f"or kernel[grid, block, stream, shared_bytes]; got kernel[{config!r}]")
        grid, block, stream, shared = (tuple(config) + (0, 0))[:4]
        return _Launch(self, grid, block, stream, shared)

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"kernel `{self.__name__}` needs a launch configuration: "
                          f"{self.__name__}[blocks, threads_per_block](...)")

    def configure(self, grid, block, stream=0, sharedmem=0) -> "_Launch":
        return _Launch(self, grid, block, stream, sharedmem)

    def forall(self, ntasks: int, tpb: int = 0, stream=0, sharedmem: int = 0) -> "_Launch":
        """numba's ``kernel.forall(n)``: enough blocks of ``tpb`` threads (default 128) for n tasks."""
        if not isinstance(ntasks, int) or ntasks < 0:
            raise LaunchError(f"forall needs a task count >= 0, got {ntasks!r}")
        tpb = tpb or 128
        return _Launch(self, max(1, -(-ntasks // tpb)), tpb, stream, sharedmem, skip=ntasks == 0)

    def compile(self, sig) -> CompiledKernel:
        """Compile one signature (a string, a numba signature or a tuple of argument types)."""
        from numba.cuda.core import sigutils
        with numba_target(self.cc):
            argtypes, restype = sigutils.normalize_signature(sig)
        from numba.core import types
        if restype not in (None, types.none):
            raise LaunchError(f"kernel `{self.__name__}` is declared to return {restype}; a CUDA kernel "
                              "returns nothing (void): write results into an array argument")
        return self._compiled(tuple(argtypes))

    def inspect_asm(self, signature=None) -> str | dict:
        """The PTX of one compiled signature, or a dict over all of them (numba's API)."""
        if signature is not None:
            return self.compile(signature).ptx
        return {k: v.ptx for k, v in self.overloads.items()}

    inspect_ptx = inspect_asm

    @property
    def signatures(self) -> list[tuple]:
        return list(self.overloads)

    def with_device(self, executor: str | None) -> "Dispatcher":
        """The same kernel (and compile cache) launching on ``executor`` ('interp', 'cpu', ...)."""
        return Dispatcher(self.py_func, executor=executor, cc=self.cc, options=self.options, _shared=self)

    # -- launching ----------------------------------------------------------------------------

    def _compiled(self, argtypes: tuple) -> CompiledKernel:
        with self._lock:
            hit = self.overloads.get(argtypes)
            if hit is None:
                hit = self.overloads[argtypes] = compile_kernel(self.py_func, argtypes, cc=self.cc,
                                                                options=self.options)
            return hit

    def _argtypes(self, args: tuple) -> tuple:
        names = self._arg_names
        if len(args) != len(names) and not any(n.startswith("*") for n in names):
            raise LaunchError(f"kernel `{self.__name__}({', '.join(names)})` takes {len(names)} arguments, "
                              f"got {len(args)}")
        actual = tuple(abi.typeof_arg(a, self._what(i)) for i, a in enumerate(args))
        if not self._signatures:
            return actual
        return self._pick_signature(actual)

    def _pick_signature(self, actual: tuple) -> tuple:
        from numba.cuda.descriptor import cuda_target
        ctx = cuda_target.typing_context
        best, best_rank = None, None
        for sig in self._signatures:
            if len(sig) != len(actual):
                continue
            convs = [None if a != d and ctx.can_convert(a, d) is None else (0 if a == d else int(ctx.can_convert(a, d)))
                     for a, d in zip(actual, sig)]
            if any(c is None for c in convs):
                continue
            rank = max(convs, default=0)
            if best is None or rank < best_rank:
                best, best_rank = sig, rank
        if best is None:
            listed = "; ".join("(" + ", ".join(map(str, s)) + ")" for s in self._signatures)
            raise LaunchError(f"kernel `{self.__name__}` was compiled for {listed}; the arguments are "
                              f"({', '.join(map(str, actual))}), which convert to none of them")
        return best

    def _what(self, i: int) -> str:
        name = self._arg_names[i] if i < len(self._arg_names) else f"#{i}"
        return f"argument {i} (`{name}`) of kernel `{self.__name__}`"

    def launch(self, args: tuple, grid, block, stream=0, shared_mem: int = 0):
        argtypes = self._argtypes(args)
        ck = self._compiled(argtypes)
        values: list = []
        after: list = []
        for i, (t, v) in enumerate(zip(argtypes, args)):
            abi.flatten(t, v, self._what(i), values, after)
        values = abi.fit_params(values, ck.kernel.params, self.__name__)
        try:
            return ck.kernel[grid, block, stream, shared_mem](*values, device=self.executor)
        finally:
            for f in after:
                f()


class _Launch:
    """``kernel[grid, block, stream, shared]``: call it with the kernel's arguments."""

    def __init__(self, dispatcher: Dispatcher, grid, block, stream, shared_mem, skip: bool = False) -> None:
        self.dispatcher, self.grid, self.block = dispatcher, grid, block
        self.stream, self.shared_mem, self._skip = stream, shared_mem, skip

    def __call__(self, *args):
        if self._skip:
            return None
        self.dispatcher.launch(args, self.grid, self.block, self.stream, self.shared_mem)
        return None


def _arg_names(py_func) -> list[str]:
    try:
        params = inspect.signature(py_func).parameters.values()
    except (TypeError, ValueError):
        return []
    return [("*" if p.kind == p.VAR_POSITIONAL else "") + p.name for p in params]
