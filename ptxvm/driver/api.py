"""The public runtime API: modules, kernels, launches, device arrays.

    mod = ptxvm.Module(ptx_text)                      # or Module.from_file("k.ptx")
    k = mod.get_function("vadd")                      # or mod["vadd"]
    k((blocks,), (threads,), (x, y, out, np.int32(n)))          # CuPy style
    k[blocks, threads](x, y, out, n)                            # numba style

numpy arrays are passed by reference: after the launch (also after a fault) they hold the
kernel's writes. The interpreter works on a writable array in place; the JIT, and an argument
that overlaps another one, get a device copy that is copied back. A read-only array is an
input: a kernel write to it is a LaunchError.
"""

from __future__ import annotations

import struct
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import LaunchError
from ..ir import nodes as ir
from ..ir.types import ScalarType
from ..interp.executor import (
    DEFAULT_MAX_STEPS, LaunchStats, ModuleImage, param_block, place_globals, prepare, run_kernel,
)
from ..interp.memory import Allocation, DeviceMemory
from ..interp.state import Geometry

MAX_THREADS_PER_BLOCK = 1024

# Executors a launch can run on (``device=``); the host JIT adds "cpu" when it is built.
DEVICES: tuple[str, ...] = ("interp", "cpu")


def default_launch_device() -> str:
    """The executor a launch uses when it names none: ``$PTXVM_DEVICE``, else the interpreter."""
    import os
    return os.environ.get("PTXVM_DEVICE", "").strip() or "interp"


def available_devices() -> tuple[str, ...]:
    """Names accepted by ``Kernel.__call__(..., device=...)`` in this build."""
    return DEVICES


class Device:
    """One simulated device: its memory and the modules placed in it."""

    def __init__(self) -> None:
        self.memory = DeviceMemory()
        # Keyed by the Module itself, weakly: keyed by id(), a new Module that got a dead one's
        # id was handed the dead module's globals (found reading a `.global` initialiser).
        self.images: weakref.WeakKeyDictionary[Module, ModuleImage] = weakref.WeakKeyDictionary()

    def image(self, module: "Module") -> ModuleImage:
        img = self.images.get(module)
        if img is None:
            funcs = {name: 0xF000_0000_0000 + i * 16 for i, name in enumerate(module.ir.functions)}
            img = self.images[module] = place_globals(module.ir, self.memory, funcs)
        return img


_DEVICE: Device | None = None


def default_device() -> Device:
    global _DEVICE
    if _DEVICE is None:
        _DEVICE = Device()
    return _DEVICE


class DeviceArray:
    """An array in device memory; ``ptr`` is its device address, slicing gives views."""

    def __init__(self, alloc: Allocation, shape: tuple[int, ...], dtype: np.dtype, offset: int = 0) -> None:
        self._alloc, self.shape, self.dtype, self._offset = alloc, tuple(shape), np.dtype(dtype), offset

    @property
    def ptr(self) -> int:
        return self._alloc.base + self._offset

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def copy_to_host(self) -> np.ndarray:
        raw = self._alloc.data[self._offset:self._offset + self.nbytes]
        return raw.view(self.dtype).reshape(self.shape).copy()

    def copy_from_host(self, array) -> None:
        a = np.ascontiguousarray(array, dtype=self.dtype)
        if a.nbytes != self.nbytes:
            raise LaunchError(f"copy_from_host: {a.nbytes} bytes into a {self.nbytes}-byte device array")
        self._alloc.data[self._offset:self._offset + self.nbytes] = a.reshape(-1).view(np.uint8)

    def __getitem__(self, key) -> "DeviceArray":
        if len(self.shape) != 1 or not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("DeviceArray supports contiguous 1-D slices like d[k:] or d[a:b]")
        start, stop, _ = key.indices(self.shape[0])
        stop = max(stop, start)
        return DeviceArray(self._alloc, (stop - start,), self.dtype, self._offset + start * self.dtype.itemsize)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, ptr=0x{self.ptr:x})"


def to_device(array, device: Device | None = None) -> DeviceArray:
    a = np.ascontiguousarray(array)
    dev = device or default_device()
    alloc = dev.memory.alloc(a.nbytes, f"device array {a.dtype}{list(a.shape)}", data=a)
    return DeviceArray(alloc, a.shape, a.dtype)


def _share(array: np.ndarray, dev: Device) -> DeviceArray:
    """A device allocation whose bytes are ``array``'s own (no copy in, none back)."""
    alloc = dev.memory.alloc(array.nbytes, f"device array {array.dtype}{list(array.shape)}",
                             share=array.reshape(-1).view(np.uint8))
    return DeviceArray(alloc, array.shape, array.dtype)


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
        self.ir: ir.Module = load_text(ptx, filename)
        self.filename = filename
        self._programs: dict[tuple, object] = {}

    @classmethod
    def from_file(cls, path) -> "Module":
        p = Path(path)
        return cls(p.read_bytes(), str(p))

    @property
    def kernels(self) -> Mapping[str, tuple[Param, ...]]:
        return {name: _params(f) for name, f in self.ir.kernels.items()}

    def get_function(self, name: str) -> "Kernel":
        """A kernel by its PTX name, or by its C++ name when that is unambiguous
        (``vector_add`` finds ``_Z10vector_addPKfS0_Pfi``)."""
        f = self.ir.kernels.get(name)
        if f is None:
            hits = [k for k in self.ir.kernels if k.startswith(f"_Z{len(name)}{name}")]
            f = self.ir.kernels[hits[0]] if len(hits) == 1 else None
        if f is None:
            known = ", ".join(self.ir.kernels) or "none"
            raise LaunchError(f"no kernel named `{name}` in {self.filename or 'this module'} (kernels: {known})")
        return Kernel(self, f)

    __getitem__ = get_function


def _dim3(v, what: str) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    try:
        t = tuple(int(x) for x in v)
    except (TypeError, ValueError):
        raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints, got {v!r}") from None
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        raise LaunchError(f"{what} must have 1 to 3 positive dimensions, got {v!r}")
    return (t + (1, 1))[:3]


_INT_RANGE = {"u": lambda b: (0, (1 << b) - 1), "s": lambda b: (-(1 << (b - 1)), (1 << (b - 1)) - 1),
              "b": lambda b: (-(1 << (b - 1)), (1 << b) - 1)}


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
        shared = int(cfg[3]) if len(cfg) == 4 else 0
        return lambda *args, **kw: self(grid, block, args, shared_mem=shared, **kw)

    def __call__(self, grid, block, args=(), shared_mem: int = 0, device: str | None = None,
                 max_steps: int | None = None, trace=None, trace_out=None) -> LaunchStats:
        """Launch; ``trace`` is an iterable of (block, thread) pairs (ints or 1-3 tuples) whose
        executed instructions are written to ``trace_out`` (default: stderr)."""
        device = device or default_launch_device()
        if device not in available_devices():
            raise LaunchError(f"device `{device}` is not available; this build has: {', '.join(available_devices())}")
        g, b = _dim3(grid, "grid"), _dim3(block, "block")
        tpb = b[0] * b[1] * b[2]
        if tpb > MAX_THREADS_PER_BLOCK:
            raise LaunchError(f"block {b} has {tpb} threads; the limit is {MAX_THREADS_PER_BLOCK}")
        for dname in ("maxntid", "reqntid"):
            d = self.ir.directive(dname)
            if d is not None:
                lim = int(np.prod([v for v in d.values if v] or [1]))
                if (dname == "maxntid" and tpb > lim) or (dname == "reqntid" and tuple(d.values) != b[:len(d.values)]):
                    raise LaunchError(f"kernel `{self.name}` declares .{dname} {', '.join(map(str, d.values))}; "
                                      f"block {b} does not fit it")
        if shared_mem < 0:
            raise LaunchError(f"shared_mem must be >= 0, got {shared_mem}")
        args = tuple(args)
        if len(args) != len(self.params):
            sig = ", ".join(map(str, self.params))
            raise LaunchError(f"kernel `{self.name}` takes {len(self.params)} arguments ({sig}), got {len(args)}")
        dev = default_device()
        image = dev.image(self.module)
        key = (self.name, shared_mem, device)
        program = self.module._programs.get(key)
        if program is None:
            if device == "cpu":
                from ..jit.executor import compile_kernel
                program = compile_kernel(self.module.ir, self.ir, image, shared_mem)
            else:
                program = prepare(self.module.ir, self.ir, image, shared_mem)
            self.module._programs[key] = program
        raw, copy_back, wrote_readonly = [], [], []
        try:
            arrays = [(i, a) for i, a in enumerate(args) if isinstance(a, np.ndarray)]
            for i, (p, a) in enumerate(zip(self.params, args)):
                raw.append(self._pack(dev, p, a, copy_back, share=device == "interp" and not any(
                    j != i and np.may_share_memory(a, o) for j, o in arrays)))
            params = param_block(self.ir, program.symbols, raw)
            stats = LaunchStats()
            try:
                if device == "cpu":
                    if trace:
                        raise LaunchError("--trace/trace= needs device='interp'")
                    from ..jit.executor import run_kernel as run_jit
                    run_jit(program, Geometry(g, b), dev.memory, params, shared_mem,
                            max_steps or DEFAULT_MAX_STEPS, stats=stats)
                else:
                    run_kernel(program, Geometry(g, b), dev.memory, params, shared_mem,
                               max_steps or DEFAULT_MAX_STEPS, stats=stats,
                               trace=_trace_ids(trace, g, b), out=trace_out)
            finally:
                self.stats = stats
        finally:
            for name, host, darr, shared in copy_back:
                if shared:
                    pass
                elif host.flags.writeable:
                    host.reshape(-1).view(np.uint8)[:] = darr._alloc.data[:darr.nbytes]
                elif not np.array_equal(host.reshape(-1).view(np.uint8), darr._alloc.data[:darr.nbytes]):
                    wrote_readonly.append(name)
                dev.memory.free(darr._alloc)
        if wrote_readonly:
            raise LaunchError(f"the kernel wrote to read-only numpy argument(s) "
                              f"{', '.join(f'`{n}`' for n in wrote_readonly)}; pass writable arrays "
                              "to receive the writes")
        return stats

    def _pack(self, dev: Device, p: Param, a, copy_back: list, share: bool = False) -> bytes:
        t = ScalarType(p.type)
        if p.array:
            data = bytes(a) if isinstance(a, (bytes, bytearray, memoryview)) else \
                np.ascontiguousarray(a).tobytes() if isinstance(a, (np.ndarray, np.void)) else None
            if data is None or len(data) != p.size:
                raise LaunchError(f"argument `{p.name}` is a {p.size}-byte by-value parameter; pass "
                                  f"{p.size} bytes (bytes, a numpy array or a structured scalar)")
            return data
        if isinstance(a, np.ndarray):
            if t.bits != 64:
                raise LaunchError(f"argument `{p.name}` is .{p.type}; a numpy array can only be passed to "
                                  "a 64-bit pointer parameter")
            if not a.flags.c_contiguous:
                raise LaunchError(f"argument `{p.name}`: the array must be C-contiguous")
            # The interpreter works on a writable numpy argument in place (the kernel's writes are
            # the array's final contents either way); the JIT, and arguments that overlap another
            # argument, get a copy of their own (so both executors see the same aliasing).
            shared = share and a.flags.writeable and a.nbytes >= 16
            d = _share(a, dev) if shared else to_device(a, dev)
            copy_back.append((p.name, a, d, shared))
            return struct.pack("<Q", d.ptr)
        if isinstance(a, DeviceArray):
            if t.bits != 64:
                raise LaunchError(f"argument `{p.name}` is .{p.type}; a DeviceArray needs a 64-bit parameter")
            return struct.pack("<Q", a.ptr)
        if t.kind == "f":
            if not isinstance(a, (int, float, np.integer, np.floating)) or isinstance(a, bool):
                raise LaunchError(f"argument `{p.name}` is .{p.type}; got {type(a).__name__}")
            fmt = {16: "<e", 32: "<f", 64: "<d"}[t.bits]
            return struct.pack(fmt, float(a))
        if isinstance(a, (np.floating, float)) or not isinstance(a, (int, np.integer)):
            raise LaunchError(f"argument `{p.name}` is .{p.type} (an integer); got {type(a).__name__} {a!r}")
        v = int(a)
        lo, hi = _INT_RANGE.get(t.kind, _INT_RANGE["b"])(t.bits)
        if not lo <= v <= hi:
            raise LaunchError(f"argument `{p.name}` = {v} does not fit .{p.type} [{lo}, {hi}]")
        return (v & ((1 << t.bits) - 1)).to_bytes(p.size, "little")


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
