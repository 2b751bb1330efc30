"""CUDA C++ source as a module, in CuPy's shape: ``RawModule`` and ``RawKernel``.

    mod = ptxvm.RawModule(code=src, options=("-std=c++17",), name_expressions=("scale<float>",))
    k = mod.get_function("scale<float>")          # a name expression, a PTX or a C++ name
    k((blocks,), (threads,), (x, np.float32(2), np.int32(n)))

    k = ptxvm.RawKernel(src, "vadd")              # one kernel of a source
    k[blocks, threads](a, b, c, n)

The source is compiled to PTX by NVRTC (``pip install 'ptxvm[cuda]'``), or nvcc when NVRTC is
not installed, for compute_80 unless the options name an ``-arch``; the PTX then runs on every
ptxvm executor like any other module. A compile error is a ``CudaCompileError`` with NVRTC's
file, line and caret. Name expressions are looked up as NVRTC lowers them
(``nvrtcGetLoweredName``), which also instantiates the templates they name.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import LaunchError, UnsupportedError
from ..frontend.nvrtc import CompiledCuda, compile_cuda
from ..frontend.sources import CUDA_SUFFIXES, read_ptx
from .api import Kernel, Module

_BACKENDS = {"nvrtc": "nvrtc", "nvcc": "nvcc", "auto": "auto"}


def _refuse(what: str, asked: bool) -> None:
    if asked:
        raise UnsupportedError(f"RawModule: {what} is not supported by ptxvm")


class RawModule(Module):
    """A CUDA C++ translation unit (``code``) or a file (``path``: .cu, .ptx, .cubin, .fatbin),
    compiled with ``options`` and with the kernels ``name_expressions`` name instantiated."""

    def __init__(self, code: str | None = None, *, path: str | None = None, options: tuple[str, ...] = (),
                 backend: str = "auto", translate_cucomplex: bool = False,
                 enable_cooperative_groups: bool = False, name_expressions: tuple[str, ...] | None = None,
                 jitify: bool = False) -> None:
        _refuse("jitify", jitify)
        _refuse("translate_cucomplex", translate_cucomplex)
        _refuse("enable_cooperative_groups (relocatable device code linked with cudadevrt)",
                enable_cooperative_groups)
        if (code is None) == (path is None):
            raise LaunchError("RawModule takes one of code= (CUDA C++ source) and path= (a file)")
        if backend not in _BACKENDS:
            raise LaunchError(f"RawModule: unknown backend {backend!r}; use 'nvrtc' or 'nvcc'")
        self.name_expressions = tuple(name_expressions or ())
        self.compiled: CompiledCuda | None = None
        if path is not None and Path(path).suffix.lower() not in CUDA_SUFFIXES:
            super().__init__(*read_ptx(path))         # PTX or what nvcc wrote: nothing to compile
            self.code = None
            return
        filename = str(path) if path is not None else "kernel.cu"
        self.code = code if code is not None else Path(path).read_text(encoding="utf-8")
        self.compiled = compile_cuda(self.code, filename=filename, options=tuple(options),
                                     name_expressions=self.name_expressions, compiler=_BACKENDS[backend])
        super().__init__(self.compiled.ptx, f"{filename}[{self.compiled.arch}.ptx]")

    @property
    def ptx(self) -> str | None:
        """The PTX the source compiled to (None for a module read from a PTX or nvcc file)."""
        return self.compiled.ptx if self.compiled else None

    def get_function(self, name: str) -> Kernel:
        """A kernel by name expression (as given to ``name_expressions``), PTX name or C++ name."""
        lowered = self.compiled.lowered.get(name) if self.compiled else None
        return super().get_function(lowered or name)

    __getitem__ = get_function


class RawKernel(Kernel):
    """One kernel of a CUDA C++ source, by name (``extern "C"`` name, C++ name, or a template
    instance such as ``scale<float>``, which is instantiated for the purpose)."""

    def __init__(self, code: str, name: str, options: tuple[str, ...] = (), backend: str = "auto", *,
                 translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                 jitify: bool = False) -> None:
        # Only a template instance needs a name expression; a plain name is looked up as
        # PTX or demangled C++ name, which also finds mangled names given as they are.
        names = (name,) if "<" in name else ()
        module = RawModule(code=code, options=options, backend=backend, name_expressions=names,
                           translate_cucomplex=translate_cucomplex,
                           enable_cooperative_groups=enable_cooperative_groups, jitify=jitify)
        super().__init__(module, module.get_function(name).ir)
        self.code = code
