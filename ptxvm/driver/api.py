"""The public runtime API: modules, kernels, launches, device arrays.

    mod = ptxvm.Module(ptx_text)                      # or Module.from_file("k.ptx")
    k = mod.get_function("vadd")                      # or mod["vadd"]
    k((blocks,), (threads,), (x, y, out, np.int32(n)))          # CuPy style
    k[blocks, threads](x, y, out, n)                            # numba style

numpy arrays are passed by reference: after the launch (also after a fault) they hold the
kernel's writes. The interpreter works on a writable array in place; the JIT gets a device copy
that is copied back. Arguments that overlap (``(a, a)``, ``(a[0:], a[1:])``) share one device
buffer, so their writes alias as on a GPU. A read-only array is an input: a kernel write to it
is a LaunchError.

Before anything runs, a launch checks its geometry against CUDA's limits (1024 threads per
block; blocks up to 2^31-1 in x, 65535 in y and z) and ``ptxvm.limits`` (threads per grid,
shared memory per block, memory of one CTA); a module's declarations are checked against
``ptxvm.limits`` when it is loaded. Launches may come from several threads; they run one at a
time (see ``arrays``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import limits
from ..errors import LaunchError, PtxSyntaxError
from ..ir import nodes as ir
from ..ir.resources import check_resources
from ..machine.cooperative import check_resident
from ..machine.launch import Geometry, LaunchStats
from . import executors
from .arrays import LAUNCH_LOCK, Device, DeviceArray, default_device, to_device  # noqa: F401
from .attributes import KernelAttributes, kernel_attributes
from .streams import check_stream

MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK = (1024, 1024, 64)              # CUDA: maxThreadsDim
MAX_GRID = ((1 << 31) - 1, 65535, 65535)  # CUDA: maxGridSize


def default_launch_device() -> str:
    """The executor a launch uses when it names none: ``$PTXVM_DEVICE``, else the reference
    executor (the interpreter)."""
    import os
    return os.environ.get("PTXVM_DEVICE", "").strip() or executors.names()[0]


def available_devices() -> tuple[str, ...]:
    """Names ``Kernel.__call__(..., device=...)`` can run here: the registered executors whose
    Python packages are installed (``executors.names()`` lists every registered one)."""
    return executors.available()


@dataclass(frozen=True)
class Param:
    name: str
    type: str            # PTX type name, e.g. "u64", "f32", "b8"
    size: int            # bytes
    align: int
    array: tuple[int | None, ...] = ()

    def __str__(self) -> str:
        dims = "".join(f"[{d}]" for d in self.array)
        return f"{self.name}: .{self.type}{dims}"


def _params(f: ir.Function) -> tuple[Param, ...]:
    return tuple(Param(p.name, p.type.value, p.size_bytes() or 0, p.align or max(p.element_bytes(), 1), p.array)
                 for p in f.params)


class Module:
    """A PTX module loaded for execution."""

    def __init__(self, ptx: str | bytes, filename: str | None = None) -> None:
        from ..frontend.cache import load_text
        _refuse_path(ptx)
        self.ir: ir.Module = load_text(ptx, filename)
        self.filename = filename
        # Declarations beyond ptxvm.limits are refused here, before any executor allocates them.
        text = ptx if isinstance(ptx, str) else ptx.decode("utf-8", "replace")
        check_resources(self.ir, text.split("\n"))
        self._programs: dict[tuple, object] = {}
        self.textures: dict[str, object] = {}        # bound .texref/.surfref (bind_texture)

    @classmethod
    def from_file(cls, path) -> "Module":
        """A module from a file: PTX, CUDA C++ (``.cu``, through NVRTC), or what nvcc writes
        (``.cubin``, ``.fatbin``, an executable or shared library): see ``frontend.sources``."""
        from ..frontend.sources import read_ptx
        return cls(*read_ptx(path))

    @property
    def kernels(self) -> Mapping[str, tuple[Param, ...]]:
        return {name: _params(f) for name, f in self.ir.kernels.items()}

    def get_function(self, name: str) -> "Kernel":
        """A kernel by its PTX name, or by its C++ name (``vector_add``, ``ns::k<int>`` or the
        whole signature) when that is unambiguous: ``vector_add`` finds ``_Z10vector_addPKfS0_Pfi``."""
        from ..demangle import display_name, kernel_matches
        hits = kernel_matches(self.ir.kernels, name)
        if len(hits) == 1:
            return Kernel(self, self.ir.kernels[hits[0]])
        where = self.filename or "this module"
        if hits:
            listed = "; ".join(f"{display_name(k)} [{k}]" for k in hits)
            raise LaunchError(f"`{name}` names {len(hits)} kernels in {where}: {listed}; give the PTX name")
        known = "; ".join(f"{display_name(k)} [{k}]" if display_name(k) != k else k for k in self.ir.kernels) or "none"
        raise LaunchError(f"no kernel named `{name}` in {where} (kernels: {known})")

    __getitem__ = get_function

    def bind_texture(self, name: str, obj, **texture_desc) -> None:
        """Bind the module's texture or surface reference ``name`` (a ``.texref``/``.surfref``
        global; cudaBindTextureToArray): to a TextureObject/SurfaceObject, or to a resource (a
        CudaArray or numpy array) with TextureObject's keyword arguments (address_mode=...)."""
        from ..ir.types import ScalarType
        from ..machine.textures import SurfaceObject, TextureObject
        decl = self.ir.globals.get(name)
        kinds = {ScalarType.TEXREF: TextureObject, ScalarType.SURFREF: SurfaceObject}
        if decl is None or decl.type not in kinds:
            refs = [n for n, d in self.ir.globals.items() if d.type in kinds] or ["none"]
            raise LaunchError(f"bind_texture: `{name}` is not a .texref/.surfref of "
                              f"{self.filename or 'this module'} (references: {', '.join(refs)})")
        want = kinds[decl.type]
        if not isinstance(obj, (TextureObject, SurfaceObject)):
            obj = want(obj, **texture_desc)
        if not isinstance(obj, want):
            raise LaunchError(f"bind_texture: `{name}` is a .{decl.type.value}; got a {type(obj).__name__}")
        self.textures[name] = obj

    def get_global(self, name: str, dtype=None, device: Device | None = None) -> DeviceArray:
        """A module-scope ``.global`` or ``.const`` variable as a DeviceArray over its memory
        (CuPy's ``RawModule.get_global``, ``cudaMemcpyToSymbol``/``FromSymbol``): writes to it
        are what the next launch of this module reads, and a kernel's writes show in it. Its
        dtype and shape come from the declaration (``.global .f32 g[4][8]`` -> float32 (4, 8)),
        or ``dtype`` reinterprets the bytes (a 1-D array of as many elements as fit)."""
        from .symbols import global_array
        return global_array(self, name, dtype, device or default_device())


_PTX_DIRECTIVE = re.compile(r"\.(version|target|entry|func|global|const|shared|visible|extern)\b")


def _refuse_path(ptx: str | bytes) -> None:
    """``Module("saxpy.ptx")``: a file name is not PTX text; say what was meant."""
    text = ptx if isinstance(ptx, str) else ptx.decode("utf-8", "replace")
    one_line = text.strip()
    if not one_line or "\n" in one_line or _PTX_DIRECTIVE.search(one_line) or len(one_line) > 4096:
        return
    if re.search(r"\.(ptx|cu|cubin|fatbin|txt)$", one_line, re.I) or Path(one_line).is_file():
        raise PtxSyntaxError(f"ptxvm.Module() takes PTX text, and {one_line!r} looks like a file name "
                             f"(it has no PTX directives); use ptxvm.Module.from_file({one_line!r})")


def _dim3(v, what: str) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        v = (int(v),)
    try:
        if isinstance(v, (str, bytes)) or any(isinstance(x, (bool, float, np.floating)) for x in v):
            raise TypeError
        t = tuple(int(x) for x in v)
    except (TypeError, ValueError):
        raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints, got {v!r}") from None
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise LaunchError(f"{what} must have 1 to 3 positive dimensions, got {v!r}")
    return (t + (1, 1))[:3]


def _within(t: tuple[int, int, int], most: tuple[int, int, int], what: str) -> None:
    for axis, n, top in zip("xyz", t, most):
        if n > top:
            raise LaunchError(f"{what} {t} has {n:,} in {axis}; CUDA's limit is {top:,} "
                              f"(x, y, z at most {', '.join(f'{m:,}' for m in most)})")


def _check_call(args, shared_mem, device, max_steps) -> tuple:
    """The launch options' types, before any is used (``k(1, 4, 4, 1.0, x, y)`` puts the
    arguments in the option slots: say so instead of failing on what they became)."""
    if not isinstance(args, (tuple, list)):
        raise LaunchError(f"kernel arguments must be one tuple or list, got {type(args).__name__} {args!r}; "
                          "call kernel(grid, block, (arg0, arg1, ...)) or kernel[grid, block](arg0, arg1, ...)")
    if device is not None and not isinstance(device, str):
        raise LaunchError(f"device must be a name such as 'interp' or 'cpu', got {type(device).__name__}; "
                          "were the kernel arguments passed without a tuple? call "
                          "kernel(grid, block, (arg0, arg1, ...))")
    if isinstance(shared_mem, (bool, np.bool_)) or not isinstance(shared_mem, (int, np.integer)):
        raise LaunchError(f"shared_mem must be a byte count (int), got {type(shared_mem).__name__} {shared_mem!r}")
    if shared_mem < 0:
        raise LaunchError(f"shared_mem must be >= 0, got {shared_mem}")
    if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer))
                                  or max_steps < 1):
        raise LaunchError(f"max_steps must be a positive int, got {max_steps!r}")
    return tuple(args)


class Kernel:
    def __init__(self, module: Module, f: ir.Function) -> None:
        self.module, self.ir, self.name = module, f, f.name
        self.params = _params(f)
        self.stats: LaunchStats | None = None

    def __repr__(self) -> str:
        return f"<ptxvm.Kernel {self.name}({', '.join(map(str, self.params))})>"

    def __getitem__(self, cfg) -> "callable":
        if not isinstance(cfg, tuple) or len(cfg) not in (2, 3, 4):
            raise LaunchError("use kernel[grid, block] or kernel[grid, block, stream, shared_mem]")
        grid, block = cfg[0], cfg[1]
        stream = cfg[2] if len(cfg) >= 3 else None     # checked by __call__ (a Stream, 0 or None)
        shared = cfg[3] if len(cfg) == 4 else 0        # checked by __call__ (an int, in range)
        return lambda *args, **kw: self(grid, block, args, shared_mem=shared, stream=stream, **kw)

    def __call__(self, grid, block, args=(), shared_mem: int = 0, device: str | None = None,
                 max_steps: int | None = None, trace=None, trace_out=None,
                 cooperative: bool = False, stream=None) -> LaunchStats:
        """Launch; ``trace`` is an iterable of (block, thread) pairs (ints or 1-3 tuples) whose
        executed instructions are written to ``trace_out`` (default: stderr). ``cooperative``:
        as ``cudaLaunchCooperativeKernel``, every block resident at once and cooperative groups'
        grid workspace provided, so ``this_grid().sync()`` works (``machine.cooperative``).
        ``stream``: a ``ptxvm.Stream`` (or 0/None, the default stream) the launch is ordered on
        (``driver.streams``: launches run to completion in order)."""
        args = _check_call(args, shared_mem, device, max_steps)
        on_stream = check_stream(stream, f"launch of `{self.name}`")
        if not isinstance(cooperative, (bool, np.bool_)):
            raise LaunchError(f"cooperative must be True or False, got {type(cooperative).__name__} {cooperative!r}")
        executor = executors.require(device or default_launch_device())
        if trace and not executor.capabilities.trace:
            able = " or ".join(f"device='{n}'" for n in executors.with_capability("trace"))
            raise LaunchError(f"--trace/trace= needs {able}")
        if cooperative and not executor.capabilities.cooperative:
            able = ", ".join(f"'{n}'" for n in executors.with_capability("cooperative"))
            raise LaunchError(f"device '{executor.name}' does not run cooperative launches yet; "
                              f"devices that do: {able}")
        g, b = self._geometry(grid, block)
        if cooperative:
            check_resident(self.name, Geometry(g, b))
        lim = limits.current()
        lim.check("shared_per_block", int(shared_mem), "the launch's dynamic shared memory (shared_mem)")
        if len(args) != len(self.params):
            sig = ", ".join(map(str, self.params))
            raise LaunchError(f"kernel `{self.name}` takes {len(self.params)} arguments ({sig}), got {len(args)}")
        request = executors.LaunchRequest(self, g, b, args, int(shared_mem), max_steps,
                                          _trace_ids(trace, g, b), trace_out, bool(cooperative))
        with LAUNCH_LOCK:
            # Host executors set self.stats themselves, also when the launch faults.
            self.stats = executor.launch(request)
        if on_stream is not None:
            on_stream._launched(self.stats)
        return self.stats

    @property
    def attributes(self) -> "KernelAttributes":
        """What ``cudaFuncGetAttributes`` reports, from the PTX (``ir.resources``)."""
        return kernel_attributes(self)

    def _geometry(self, grid, block) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        g, b = _dim3(grid, "grid"), _dim3(block, "block")
        tpb = b[0] * b[1] * b[2]
        if tpb > MAX_THREADS_PER_BLOCK:
            raise LaunchError(f"block {b} has {tpb} threads; the limit is {MAX_THREADS_PER_BLOCK}")
        _within(b, MAX_BLOCK, "block")
        _within(g, MAX_GRID, "grid")
        for dname in ("maxntid", "reqntid"):
            d = self.ir.directive(dname)
            if d is not None:
                lim = int(np.prod([v for v in d.values if v] or [1]))
                if (dname == "maxntid" and tpb > lim) or (dname == "reqntid" and tuple(d.values) != b[:len(d.values)]):
                    raise LaunchError(f"kernel `{self.name}` declares .{dname} {', '.join(map(str, d.values))}; "
                                      f"block {b} does not fit it")
        limits.current().check("threads_per_grid", g[0] * g[1] * g[2] * tpb,
                               f"grid {g} of blocks {b} ({g[0] * g[1] * g[2]:,} blocks of {tpb} threads)")
        return g, b


def _trace_ids(trace, grid: tuple[int, int, int], block: tuple[int, int, int]) -> frozenset[int] | None:
    """(block, thread) pairs -> global linear thread ids (CTA-major, x fastest)."""
    if not trace:
        return None
    tpb = block[0] * block[1] * block[2]
    ids = set()
    for blk, thr in trace:
        bx, by, bz = _dim3_index(blk, grid, "trace block")
        tx, ty, tz = _dim3_index(thr, block, "trace thread")
        cta = bx + grid[0] * (by + grid[1] * bz)
        ids.add(cta * tpb + tx + block[0] * (ty + block[1] * tz))
    return frozenset(ids)


def _dim3_index(v, bound: tuple[int, int, int], what: str) -> tuple[int, int, int]:
    t = (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
    t = (t + (0, 0))[:3]
    if any(not 0 <= x < n for x, n in zip(t, bound)):
        raise LaunchError(f"{what} {v!r} is outside the launch ({bound})")
    return t
