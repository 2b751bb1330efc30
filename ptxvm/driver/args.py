"""Kernel arguments: Python and numpy values checked against the `.param` types and packed.

numpy arrays are device memory for the launch. Arguments whose bytes overlap (``(a, a)``,
``(a[0:], a[1:])``) get ONE device buffer for the union of their bytes, each argument a
pointer into it at its own offset, so their writes alias as they do on a GPU; each array
gets the kernel's writes back after the launch (also after a fault).
Every mistake is a ``LaunchError`` naming the parameter, what was given and what is accepted.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field

import numpy as np

from ..errors import LaunchError
from ..ir.types import ScalarType
from ..machine.tensormap import TensorMap
from ..machine.textures import SurfaceObject, TextureObject
from .arrays import Device, DeviceArray, host_array_problem, to_device

# Largest finite value of each float `.param` type (PTX ISA §5.2.1: IEEE 754 binary16/32/64).
_FLOAT = {16: (np.float16, "<e"), 32: (np.float32, "<f"), 64: (np.float64, "<d")}
_INT_RANGE = {"u": lambda b: (0, (1 << b) - 1), "s": lambda b: (-(1 << (b - 1)), (1 << (b - 1)) - 1),
              "b": lambda b: (-(1 << (b - 1)), (1 << b) - 1)}
SHARE_MIN_BYTES = 16      # the interpreter views smaller arrays through a padded copy


@dataclass
class _Group:
    """Host arrays whose bytes overlap, and the one device buffer that holds their union."""

    start: int                                            # host address of the union's first byte
    end: int
    members: list[tuple[str, np.ndarray]] = field(default_factory=list)
    device: DeviceArray | None = None
    shared: bool = False                                  # the device buffer IS the host memory

    def offset(self, a: np.ndarray) -> int:
        return _address(a) - self.start


@dataclass
class Binding:
    """One launch's packed parameter values and the device buffers made for numpy arguments."""

    raw: list[bytes]
    groups: list[_Group]

    def finish(self, dev: Device) -> list[str]:
        """Copy the kernel's writes back into the numpy arguments and free their buffers;
        returns the names of read-only arguments whose bytes the kernel changed."""
        wrote_readonly: list[str] = []
        for g in self.groups:
            try:
                if not g.shared and g.device is not None:
                    wrote_readonly += _copy_back(g)
            finally:
                if g.device is not None:
                    dev.memory.free(g.device._alloc)
        return wrote_readonly


def bind(dev: Device, params, args: tuple, share: bool, share_align: int = 1) -> Binding:
    """Check and pack every argument; ``share``: a writable array that overlaps no other one
    may be used in place, instead of a copy in and back, when its host address is a multiple
    of ``share_align`` (the JIT's generated code assumes the device address's alignment of
    the host address: a device buffer starts on a 256-byte boundary, a copy on 16 bytes)."""
    arrays: list[tuple[str, np.ndarray]] = []
    for p, a in zip(params, args):
        if isinstance(a, np.ndarray) and not p.array:
            _check_host_array(p, a)
            arrays.append((p.name, a))
    groups = _groups(arrays)
    binding = Binding([], groups)
    try:
        _place(dev, groups, share, share_align)
        where = {id(a): g for g in groups for _, a in g.members}
        for p, a in zip(params, args):
            binding.raw.append(_pack(dev, p, a, where))
    except BaseException:
        binding.finish(dev)
        raise
    return binding


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _check_host_array(p, a: np.ndarray) -> None:
    problem = host_array_problem(a)
    if problem:
        raise LaunchError(f"argument `{p.name}` (.{p.type}) {problem}")
    if ScalarType(p.type).bits != 64:
        raise LaunchError(f"argument `{p.name}` is .{p.type}; a numpy array can only be passed to "
                          "a 64-bit pointer parameter")
    if not a.flags.c_contiguous:
        raise LaunchError(f"argument `{p.name}`: the array must be C-contiguous (np.ascontiguousarray(a))")


def _groups(arrays: list[tuple[str, np.ndarray]]) -> list[_Group]:
    """Arrays merged by overlapping host byte ranges (contiguous arrays: a range is exact).
    An empty array overlaps nothing and gets a buffer of its own."""
    spans = sorted(((_address(a), _address(a) + a.nbytes, name, a) for name, a in arrays),
                   key=lambda s: (s[0], s[1]))
    out: list[_Group] = []
    for lo, hi, name, a in spans:
        if out and a.nbytes and out[-1].end > lo and out[-1].end > out[-1].start:
            out[-1].end = max(out[-1].end, hi)
        else:
            out.append(_Group(lo, hi))
        out[-1].members.append((name, a))
    return out


def _place(dev: Device, groups: list[_Group], share: bool, share_align: int) -> None:
    for g in groups:
        name, first = g.members[0]
        if len(g.members) == 1:
            if (share and first.flags.writeable and first.nbytes >= SHARE_MIN_BYTES
                    and g.start % share_align == 0):
                alloc = dev.memory.alloc(first.nbytes, f"device array {first.dtype}{list(first.shape)}",
                                         share=first.reshape(-1).view(np.uint8))
                g.device, g.shared = DeviceArray(alloc, first.shape, first.dtype, device=dev), True
            else:
                g.device = to_device(first, dev)
            continue
        buf = np.empty(g.end - g.start, dtype=np.uint8)
        for _, a in g.members:     # overlapping bytes are the same host bytes: any order
            off = g.offset(a)
            buf[off:off + a.nbytes] = a.reshape(-1).view(np.uint8)
        names = ", ".join(f"`{n}`" for n, _ in g.members)
        alloc = dev.memory.alloc(buf.size, f"device array uint8[{buf.size}] (arguments {names} overlap)",
                                 data=buf)
        g.device = DeviceArray(alloc, buf.shape, buf.dtype, device=dev)


def _copy_back(g: _Group) -> list[str]:
    data = g.device._alloc.data
    if len(g.members) == 1:
        name, a = g.members[0]
        if a.flags.writeable:
            a.reshape(-1).view(np.uint8)[:] = data[:a.nbytes]
            return []
        return [] if np.array_equal(a.reshape(-1).view(np.uint8), data[:a.nbytes]) else [name]
    # A read-only member is wrong only where bytes changed that no writable member covers
    # (a write through `a` to bytes a read-only view of `a` also shows is legitimate).
    size = g.end - g.start
    covered = np.zeros(size, dtype=bool)
    for _, a in g.members:
        if a.flags.writeable:
            covered[g.offset(a):g.offset(a) + a.nbytes] = True
    bad = []
    for name, a in g.members:
        off = g.offset(a)
        if not a.flags.writeable:
            changed = a.reshape(-1).view(np.uint8) != data[off:off + a.nbytes]
            if (changed & ~covered[off:off + a.nbytes]).any():
                bad.append(name)
    for _, a in g.members:
        if a.flags.writeable:
            off = g.offset(a)
            a.reshape(-1).view(np.uint8)[:] = data[off:off + a.nbytes]
    return bad


def _pack(dev: Device, p, a, where: dict[int, _Group]) -> bytes:
    t = ScalarType(p.type)
    if p.array:
        return _by_value(p, a)
    if isinstance(a, np.ndarray):
        g = where[id(a)]
        return struct.pack("<Q", g.device.ptr + (g.offset(a) if len(g.members) > 1 else 0))
    if isinstance(a, DeviceArray):
        return _device_array(dev, p, t, a)
    if isinstance(a, (TextureObject, SurfaceObject)):
        return _object_handle(p, t, a)
    if t.kind == "f":
        return _float(p, t, a)
    return _int(p, t, a)


def _by_value(p, a) -> bytes:
    if isinstance(a, np.ndarray) and a.dtype.hasobject:
        raise LaunchError(f"argument `{p.name}` is a {p.size}-byte by-value parameter; a numpy array of "
                          f"dtype {a.dtype} holds Python objects, not bytes")
    if isinstance(a, TensorMap):
        a = a.encode()                   # a CUtensorMap __grid_constant__: the 128 bytes by value
    data = bytes(a) if isinstance(a, (bytes, bytearray, memoryview)) else \
        np.ascontiguousarray(a).tobytes() if isinstance(a, (np.ndarray, np.void)) else None
    if data is None or len(data) != p.size:
        raise LaunchError(f"argument `{p.name}` is a {p.size}-byte by-value parameter; pass "
                          f"{p.size} bytes (bytes, a numpy array or a structured scalar)")
    return data


def _device_array(dev: Device, p, t: ScalarType, a: DeviceArray) -> bytes:
    if t.bits != 64:
        raise LaunchError(f"argument `{p.name}` is .{p.type}; a DeviceArray needs a 64-bit parameter")
    if a.device is not dev:
        raise LaunchError(f"argument `{p.name}`: the DeviceArray at 0x{a.ptr:x} belongs to another "
                          "ptxvm.Device; launches run on ptxvm.default_device(), so pass an array made "
                          "with ptxvm.to_device(x) (or its data copied with copy_to_host())")
    a.check_live(f"argument `{p.name}`")
    return struct.pack("<Q", a.ptr)


def _object_handle(p, t: ScalarType, a) -> bytes:
    # cudaTextureObject_t / cudaSurfaceObject_t are 64-bit handles (machine.textures).
    if t.bits != 64:
        raise LaunchError(f"argument `{p.name}` is .{p.type}; a {type(a).__name__} is a 64-bit handle")
    return struct.pack("<Q", a.handle)


def _float(p, t: ScalarType, a) -> bytes:
    if not isinstance(a, (int, float, np.integer, np.floating)) or isinstance(a, (bool, np.bool_)):
        raise LaunchError(f"argument `{p.name}` is .{p.type} (a float); got {type(a).__name__} {a!r}")
    kind, fmt = _FLOAT[t.bits]
    try:
        v = float(a)
    except OverflowError:            # an int beyond any float
        v = None
    with np.errstate(over="ignore"):
        rounded = None if v is None else float(kind(v))
    # Rounding to nearest may overflow to infinity: that is not the value asked for.
    if v is None or math.isfinite(v) and not math.isfinite(rounded):
        top = float(np.finfo(kind).max)
        raise LaunchError(f"argument `{p.name}` = {a!r} is out of range for .{p.type} (finite values up "
                          f"to ±{top:.9g}); pass a value in range, or float('inf') for infinity")
    return struct.pack(fmt, rounded)


def _int(p, t: ScalarType, a) -> bytes:
    if isinstance(a, (np.floating, float)) or not isinstance(a, (int, np.integer)):
        raise LaunchError(f"argument `{p.name}` is .{p.type} (an integer); got {type(a).__name__} {a!r}")
    v = int(a)
    lo, hi = _INT_RANGE.get(t.kind, _INT_RANGE["b"])(t.bits)
    if not lo <= v <= hi:
        raise LaunchError(f"argument `{p.name}` = {v} does not fit .{p.type} [{lo}, {hi}]")
    return (v & ((1 << t.bits) - 1)).to_bytes(p.size, "little")
