"""The kernarg segment of an AMD GPU kernel, packed from its code object's metadata.

Shared by the executors that launch translated code objects (``emu:<target>``, ``hip``), so
the emulator tests exercise the packing a real GPU gets. The layout is the metadata's
(``CodeObject.metadata[kernel]["args"]``: offset, size, kind of every argument), never
recomputed here:

* explicit arguments: a PTX kernel's `.param`s, all ``by_value`` in ptxvm's code objects (a
  pointer is a ``.u64`` value); a numpy array given for a 64-bit parameter is device memory and
  its slot gets the device address the launcher chooses (``Kernarg.fill``), anything else is
  packed as the driver packs it for the host executors (same checks, same messages);
* hidden arguments (AMDGPUUsage, "Code Object V5 Metadata", hidden kernel arguments): the
  launch geometry (``hidden_block_count_*`` u32, ``hidden_group_size_*`` u16,
  ``hidden_remainder_*`` u16, ``hidden_global_offset_*`` u64, ``hidden_grid_dims`` u16) and
  ``hidden_dynamic_lds_size`` u32 are filled here; the ones only a runtime can know (queue,
  printf/hostcall buffers, heap, apertures...) stay zero and are listed in ``runtime_filled``.

Arrays whose host bytes overlap are one device buffer (as the driver does for the host
executors), each argument a pointer into it, so their writes alias as on a GPU.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import LaunchError
from .arrays import DeviceArray, host_array_problem

# hidden kind -> (struct format, value from the launch); the sizes are the v5 table's.
_GEOMETRY = {
    "hidden_block_count_x": ("<I", lambda g, b, d, n: g[0]),
    "hidden_block_count_y": ("<I", lambda g, b, d, n: g[1]),
    "hidden_block_count_z": ("<I", lambda g, b, d, n: g[2]),
    "hidden_group_size_x": ("<H", lambda g, b, d, n: b[0]),
    "hidden_group_size_y": ("<H", lambda g, b, d, n: b[1]),
    "hidden_group_size_z": ("<H", lambda g, b, d, n: b[2]),
    # The size of a partial last workgroup: a grid counted in whole blocks has none.
    "hidden_remainder_x": ("<H", lambda g, b, d, n: 0),
    "hidden_remainder_y": ("<H", lambda g, b, d, n: 0),
    "hidden_remainder_z": ("<H", lambda g, b, d, n: 0),
    "hidden_global_offset_x": ("<Q", lambda g, b, d, n: 0),
    "hidden_global_offset_y": ("<Q", lambda g, b, d, n: 0),
    "hidden_global_offset_z": ("<Q", lambda g, b, d, n: 0),
    "hidden_grid_dims": ("<H", lambda g, b, d, n: n),
    "hidden_dynamic_lds_size": ("<I", lambda g, b, d, n: d),
}
# Hidden arguments left zero here on purpose: no ptxvm code object reads their contents, or
# only the runtime that owns the queue / buffers / apertures can provide them.
_RUNTIME = frozenset({
    "hidden_none", "hidden_printf_buffer", "hidden_hostcall_buffer", "hidden_default_queue",
    "hidden_completion_action", "hidden_multigrid_sync_arg", "hidden_heap_v1", "hidden_queue_ptr",
    "hidden_private_base", "hidden_shared_base"})


@dataclass
class Buffer:
    """Host arrays whose bytes overlap, and the one device buffer that holds their union."""

    start: int                                          # host address of the union's first byte
    end: int
    members: list[tuple[int, np.ndarray]] = field(default_factory=list)   # (argument index, array)

    @property
    def nbytes(self) -> int:
        return self.end - self.start

    def offset(self, a: np.ndarray) -> int:
        return _address(a) - self.start

    def host_bytes(self) -> np.ndarray:
        """The union's current host contents (members copied in; overlaps are the same bytes)."""
        buf = np.zeros(self.nbytes, dtype=np.uint8)
        for _, a in self.members:
            o = self.offset(a)
            buf[o:o + a.nbytes] = a.reshape(-1).view(np.uint8)
        return buf


@dataclass(frozen=True)
class Kernarg:
    """One launch's kernarg segment: ``data`` with every pointer slot zero until ``fill``."""

    kernel: str
    data: bytes                                          # the whole segment (kernarg_size bytes)
    explicit_size: int                                   # bytes up to the end of the last explicit argument
    values: tuple[bytes | np.ndarray, ...]               # per explicit argument: its bytes, or its array
    buffers: tuple[Buffer, ...]
    pointers: tuple[tuple[int, int, int], ...]           # (kernarg offset, buffer index, offset in buffer)
    runtime_filled: tuple[str, ...]                      # hidden kinds present that the runtime provides

    def fill(self, bases: Sequence[int]) -> bytes:
        """The segment with each pointer slot set to its buffer's device address + offset."""
        if len(bases) != len(self.buffers):
            raise ValueError(f"{len(self.buffers)} buffer addresses needed, got {len(bases)}")
        out = bytearray(self.data)
        for at, which, off in self.pointers:
            struct.pack_into("<Q", out, at, int(bases[which]) + off)
        return bytes(out)


def grid_dims(grid: tuple[int, int, int], block: tuple[int, int, int]) -> int:
    """The dispatch's dimension count (HSA packet ``setup.dimensions``): up to the last axis
    whose global size is above 1."""
    return 3 if grid[2] * block[2] > 1 else 2 if grid[1] * block[1] > 1 else 1


def pack(meta: Mapping[str, Any], params: Sequence[Any], args: Sequence[Any], grid: tuple[int, int, int],
         block: tuple[int, int, int], dynamic_lds: int = 0, *, device: str = "this device") -> Kernarg:
    """Pack ``args`` (the launch's, one per PTX parameter ``params``: driver ``Param``s) into
    the kernarg segment that ``meta`` (one kernel's ``CodeObject.metadata`` entry) describes."""
    name = str(meta.get("name"))
    entries = list(meta.get("args", []))
    explicit = [a for a in entries if not str(a.get("kind", "")).startswith("hidden_")]
    if len(explicit) != len(params):
        raise LaunchError(f"kernel `{name}`: the code object lists {len(explicit)} explicit arguments, the PTX "
                          f"declares {len(params)} parameters (a translator bug: the metadata check missed it)")
    if len(args) != len(params):
        raise LaunchError(f"kernel `{name}` takes {len(params)} arguments, got {len(args)}")
    size = max(int(meta.get("kernarg_size", 0)), max((int(a["offset"]) + int(a["size"]) for a in entries), default=0))
    data = bytearray(size)
    values: list[bytes | np.ndarray] = []
    arrays: list[tuple[int, np.ndarray]] = []
    for i, (entry, p, a) in enumerate(zip(explicit, params, args)):
        v = _explicit(entry, p, a, device)
        values.append(v)
        if isinstance(v, np.ndarray):
            arrays.append((i, v))
        else:
            data[int(entry["offset"]):int(entry["offset"]) + len(v)] = v
    buffers = _buffers(arrays)
    where = {i: (bi, b.offset(a)) for bi, b in enumerate(buffers) for i, a in b.members}
    pointers = tuple((int(explicit[i]["offset"]), *where[i]) for i, _ in arrays)
    runtime = _hidden(entries, data, grid, block, int(dynamic_lds), name)
    explicit_end = max((int(e["offset"]) + int(e["size"]) for e in explicit), default=0)
    return Kernarg(name, bytes(data), explicit_end, tuple(values), tuple(buffers), pointers, runtime)


def _explicit(entry: Mapping[str, Any], p: Any, a: Any, device: str) -> bytes | np.ndarray:
    """One explicit argument: an array for a pointer slot, else its packed bytes."""
    kind, size = str(entry.get("kind")), int(entry["size"])
    if kind not in ("by_value", "global_buffer"):
        raise LaunchError(f"argument `{p.name}`: kernarg kind `{kind}` is not one ptxvm's launchers pass "
                          "(by_value, global_buffer)")
    if isinstance(a, DeviceArray):
        raise LaunchError(f"argument `{p.name}`: a ptxvm.DeviceArray lives in the host executors' memory, "
                          f"which {device} cannot reach; pass a numpy array (a.copy_to_host())")
    from ..machine.textures import SurfaceObject, TextureObject
    if isinstance(a, (TextureObject, SurfaceObject)):
        raise LaunchError(f"argument `{p.name}`: a ptxvm.{type(a).__name__} is a handle into the host executors' "
                          f"texture table; {device} reads HIP's image descriptors (hipCreateTextureObject), "
                          "which ptxvm's AMD launchers do not build yet")
    from ..machine.tensormap import TensorMap
    if isinstance(a, TensorMap):
        raise LaunchError(f"argument `{p.name}`: a ptxvm.TensorMap holds a global address in the host executors' "
                          f"memory, which {device} cannot relocate inside a by-value argument; tensor maps run on "
                          "interp and cpu (the AMD code itself translates: a software copy loop)")
    if isinstance(a, np.ndarray) and not p.array:
        problem = host_array_problem(a)
        if problem:
            raise LaunchError(f"argument `{p.name}` (.{p.type}) {problem}")
        if size != 8:
            raise LaunchError(f"argument `{p.name}` is .{p.type}; a numpy array can only be passed to a "
                              "64-bit pointer parameter")
        if not a.flags.c_contiguous:
            raise LaunchError(f"argument `{p.name}`: the array must be C-contiguous (np.ascontiguousarray(a))")
        return a
    if kind == "global_buffer" and a is None:
        return bytes(8)                                  # nullptr
    from .args import bind
    from .arrays import default_device
    # The host executors' packing: the same type and range checks and messages.
    raw = bind(default_device(), (p,), (a,), share=False).raw[0]
    if len(raw) != size:
        raise LaunchError(f"argument `{p.name}`: {len(raw)} bytes packed, the code object's slot holds {size} "
                          "(a translator bug: the metadata check missed it)")
    return raw


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def _buffers(arrays: list[tuple[int, np.ndarray]]) -> list[Buffer]:
    """Arrays merged by overlapping host byte ranges; an empty array overlaps nothing."""
    spans = sorted(((_address(a), _address(a) + a.nbytes, i, a) for i, a in arrays), key=lambda s: (s[0], s[1]))
    out: list[Buffer] = []
    for lo, hi, i, a in spans:
        if out and a.nbytes and out[-1].end > lo and out[-1].nbytes:
            out[-1].end = max(out[-1].end, hi)
        else:
            out.append(Buffer(lo, hi))
        out[-1].members.append((i, a))
    return out


def _hidden(entries: list[Mapping[str, Any]], data: bytearray, grid: tuple[int, int, int],
            block: tuple[int, int, int], dynamic_lds: int, name: str) -> tuple[str, ...]:
    """Write the hidden arguments this module can know; returns the runtime-provided kinds."""
    dims = grid_dims(grid, block)
    runtime = []
    for e in entries:
        kind = str(e.get("kind", ""))
        if not kind.startswith("hidden_"):
            continue
        at, size = int(e["offset"]), int(e["size"])
        if kind in _GEOMETRY:
            fmt, value = _GEOMETRY[kind]
            if struct.calcsize(fmt) != size:
                raise LaunchError(f"kernel `{name}`: hidden argument `{kind}` has {size} bytes in the metadata; "
                                  f"code object v5 gives it {struct.calcsize(fmt)}")
            v = value(grid, block, dynamic_lds, dims)
            if v >= 1 << (8 * size):
                raise LaunchError(f"kernel `{name}`: `{kind}` = {v} does not fit its {size} bytes")
            struct.pack_into(fmt, data, at, v)
        else:
            runtime.append(kind)          # zero here; _RUNTIME lists the known ones, others too
    return tuple(runtime)


def runtime_kinds() -> frozenset[str]:
    """The hidden kinds that only a runtime can fill (left zero by ``pack``)."""
    return _RUNTIME
