"""Tensor copies through a tensor map (PTX ISA 9.0 §9.7.9.25.5.2 cp.async.bulk.tensor), tile mode.

``[dstMem], [tensorMap, {c0, ..}], [mbar]`` copies the box at tensor coordinates c (s32,
dimension 0 first) from global memory into shared memory and completes the box's bytes on the
mbarrier (out-of-bounds elements included: they are written with the map's fill and count);
``[tensorMap, {c0, ..}], [srcMem]`` (`.bulk_group`) writes a box from shared memory back, and
elements outside the tensor are not written. The tensor map is ptxvm's documented encoding
(``machine/tensormap.py``), read through its generic address (nvcc passes the kernel parameter's
``cvta.param`` address) or a `.param`/`.global`/`.const` symbol; a map that is not one, or whose
rank differs from the instruction's `.dim`, traps naming the instruction.

As with cp.async.bulk (interp/ops/mbarrier.py), the copy is done when the instruction executes:
the ISA lets it complete any time before the mbarrier phase (or the bulk_group wait) that
covers it, so this is one legal execution. ``cp.reduce.async.bulk.tensor`` (§9.7.9.25.5.3) walks the
same box and combines each in-bounds element into global memory (integer maps; see
``tensormap.REDUCE_DTYPES``). im2col modes, multicast and interleaved layouts are refused by name.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import mbarrier as mb
from ...machine import tensormap as tm
from ...machine.memory import MemoryFault
from ..access import fault_for, faulting_lanes
from ..program import CompileContext, address, reader
from . import impl
from .common import _thread_ids
from .control import _Trap
from .mbarrier import object_offsets, update

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def check_form(ins: ir.Instruction, unsupported) -> int:
    """The rank of a tensor copy ptxvm executes; refuses the forms it does not (located)."""
    mode = ins.mod("load_mode") or "tile"
    if mode != "tile":
        raise unsupported(ins, f"uses the `.{mode}` load mode; ptxvm's tensor maps model tile mode only")
    if ins.has("multicast::cluster") or ins.mod("ctagroup"):
        raise unsupported(ins, "multicasts to, or pairs, CTAs of a cluster, which needs cluster launches")
    return int(ins.mod("dim")[0])


def map_operand(ins: ir.Instruction, op: ir.Operand, rank: int, unsupported) -> tuple[ir.Address, tuple]:
    """``[tensorMap, {c0, ..}]`` -> (the map's address operand, the coordinate operands)."""
    if not isinstance(op, ir.Address) or len(op.extra) != 1 or not isinstance(op.extra[0], ir.Vector) \
            or len(op.extra[0].elements) != rank:
        raise unsupported(ins, f"needs `[tensorMap, {{{rank} coordinates}}]` as its tensor operand")
    return ir.Address(op.base, op.offset), op.extra[0].elements


def read_map(b, lane: int, addr: int, ins: ir.Instruction, rank: int) -> tm.TensorMap:
    one = np.full(tm.SIZE, lane, dtype=np.int64)
    # one 128-byte, 8-aligned read, checked as the compiled targets check it (same fault text)
    if faulting_lanes(b, "generic", np.array([addr], dtype=np.uint64), tm.SIZE, write=False, align=8) is not None:
        raise fault_for(b, "generic", addr, tm.SIZE, lane, write=False, align=8)
    try:
        raw = b.load("generic", np.uint64(addr) + np.arange(tm.SIZE, dtype=np.uint64), np.uint8, one, aligned=True)
    except MemoryFault as e:
        e.lane = lane
        raise
    try:
        tmap = tm.TensorMap.decode(raw.tobytes(), f"tensor map at 0x{addr:x}")
    except ValueError as e:
        raise _Trap(lane, f"`{ins}`: {e}") from None
    if tmap.rank != rank:
        raise _Trap(lane, f"`{ins}`: the tensor map has rank {tmap.rank}, the instruction copies a "
                          f"{rank}d box (PTX ISA 9.7.9.25.5.2)")
    if tmap.interleave:
        raise _Trap(lane, f"`{ins}`: interleaved tensor maps are not executable yet")
    return tmap


def _layout(tmap: tm.TensorMap, coords: tuple[int, ...], base: int):
    pairs = tm.box_layout(tmap, coords, base)
    sh = np.array([s for s, _ in pairs], dtype=np.int64)
    gl = np.array([-1 if g is None else g for _, g in pairs], dtype=np.int64)
    return sh, gl


@impl("cp.async.bulk.tensor")
def _tensor_copy(ctx: CompileContext, ins: ir.Instruction):
    rank = check_form(ins, ctx.unsupported)
    to_shared = ins.form == "to-shared"
    map_op, coord_ops = map_operand(ins, ins.operands[1 if to_shared else 0], rank, ctx.unsupported)
    tmap_at = address(ctx, map_op, "generic", ins)
    coords = [reader(ctx, c, ScalarType.S32, ins) for c in coord_ops]
    smem = address(ctx, ins.operands[0 if to_shared else 1], "shared", ins)
    mbar = object_offsets(ctx, ins, ins.operands[2], "shared") if to_shared else None

    def run(b, lanes):
        at, s = tmap_at(b, lanes), smem(b, lanes)
        cs = np.stack([c(b, lanes).astype(np.uint32).view(np.int32).astype(np.int64) for c in coords])
        counts = np.zeros(lanes.size, dtype=np.int64)
        for i in range(lanes.size):
            lane = int(lanes[i])
            tmap = read_map(b, lane, int(at[i]), ins, rank)
            if int(s[i]) % 16:
                raise _Trap(lane, f"`{ins}`: shared address 0x{int(s[i]):x} is not 16-byte aligned")
            sh, gl = _layout(tmap, tuple(int(x) for x in cs[:, i]), int(s[i]))
            (_load_box if to_shared else _store_box)(b, lane, tmap, np.uint64(int(s[i])) + sh.astype(np.uint64), gl)
            counts[i] = tm.box_bytes(tmap)
        if mbar is not None:
            update(b, lanes, mbar(b, lanes), lambda w, i: (mb.complete_tx(w, int(counts[i]), ins.opcode), 0),
                   str(ins))
    return run, 0, -1


def _load_box(b, lane: int, tmap: tm.TensorMap, sh: np.ndarray, gl: np.ndarray) -> None:
    dt = np.dtype(_UINT[tmap.element_size])
    fill = np.frombuffer(tm.oob_fill_bytes(tmap), dtype=dt)[0]
    values = np.full(sh.size, fill, dtype=dt)
    inside = gl >= 0
    one = np.full(sh.size, lane, dtype=np.int64)
    try:
        if inside.any():
            values[inside] = b.load("global", np.uint64(tmap.global_address) + gl[inside].astype(np.uint64), dt,
                                    one[inside], aligned=True)
        b.store("shared", sh, values, one, aligned=True)
    except MemoryFault as e:
        e.lane = lane
        raise


def _store_box(b, lane: int, tmap: tm.TensorMap, sh: np.ndarray, gl: np.ndarray) -> None:
    dt = np.dtype(_UINT[tmap.element_size])
    inside = gl >= 0
    if not inside.any():
        return
    one = np.full(int(inside.sum()), lane, dtype=np.int64)
    dst = np.uint64(tmap.global_address) + gl[inside].astype(np.uint64)
    try:
        values = b.load("shared", sh[inside], dt, one, aligned=True)
        b.store("global", dst, values, one, aligned=True)
    except MemoryFault as e:
        e.lane = lane
        raise
    if b.memory.writes is not None:
        b.memory.writes.record(dst, tmap.element_size, _thread_ids(b, one))


# -- cp.reduce.async.bulk.tensor (§9.7.9.25.5.3), tile mode, shared::cta -> global ------------

_SIGNED = {4: np.int32, 8: np.int64}


def _combine(op: str, g: np.ndarray, s: np.ndarray, signed: bool) -> np.ndarray:
    """global = global redOp shared, element-wise, in the map's integer type (atom's semantics)."""
    if op in ("and", "or", "xor", "add"):
        with np.errstate(over="ignore"):
            return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "add": np.add}[op](g, s)
    if op in ("min", "max"):
        if signed:
            gv, sv = g.view(_SIGNED[g.itemsize]), s.view(_SIGNED[g.itemsize])
            return (np.minimum if op == "min" else np.maximum)(gv, sv).view(g.dtype)
        return (np.minimum if op == "min" else np.maximum)(g, s)
    one = g.dtype.type(1)
    if op == "inc":                     # (old >= b) ? 0 : old + 1
        return np.where(g >= s, g.dtype.type(0), g + one)
    return np.where((g == 0) | (g > s), s, g - one)     # dec: (old == 0 || old > b) ? b : old - 1


@impl("cp.reduce.async.bulk")
def _tensor_reduce(ctx: CompileContext, ins: ir.Instruction):
    if ins.form != "tensor":
        raise ctx.unsupported(ins, "(the non-tensor bulk reduction) is not executable yet")
    rank = check_form(ins, ctx.unsupported)
    op = ins.mod("redop")
    map_op, coord_ops = map_operand(ins, ins.operands[0], rank, ctx.unsupported)
    tmap_at = address(ctx, map_op, "generic", ins)
    coords = [reader(ctx, c, ScalarType.S32, ins) for c in coord_ops]
    smem = address(ctx, ins.operands[1], "shared", ins)

    def run(b, lanes):
        at, s = tmap_at(b, lanes), smem(b, lanes)
        cs = np.stack([c(b, lanes).astype(np.uint32).view(np.int32).astype(np.int64) for c in coords])
        for i in range(lanes.size):
            lane = int(lanes[i])
            tmap = read_map(b, lane, int(at[i]), ins, rank)
            if tmap.dtype not in tm.REDUCE_DTYPES[op]:
                raise _Trap(lane, f"`{ins}`: .{op} on a {tmap.dtype} tensor map is not executable "
                                  f"(ptxvm reduces {', '.join(sorted(tm.REDUCE_DTYPES[op]))} maps; PTX ISA 9.7.9.25.5.3)")
            if int(s[i]) % 16:
                raise _Trap(lane, f"`{ins}`: shared address 0x{int(s[i]):x} is not 16-byte aligned")
            sh, gl = _layout(tmap, tuple(int(x) for x in cs[:, i]), int(s[i]))
            _reduce_box(b, lane, tmap, op, np.uint64(int(s[i])) + sh.astype(np.uint64), gl)
    return run, 0, -1


def _reduce_box(b, lane: int, tmap: tm.TensorMap, op: str, sh: np.ndarray, gl: np.ndarray) -> None:
    """Each in-bounds box element combined into global memory in shared order (elements outside
    the tensor are skipped, as the tile-mode store skips them); distinct box elements are distinct
    global elements, so the order does not change the result."""
    dt = np.dtype(_UINT[tmap.element_size])
    inside = gl >= 0
    if not inside.any():
        return
    one = np.full(int(inside.sum()), lane, dtype=np.int64)
    dst = np.uint64(tmap.global_address) + gl[inside].astype(np.uint64)
    try:
        src = b.load("shared", sh[inside], dt, one, aligned=True)
        old = b.load("global", dst, dt, one, aligned=True)
        b.store("global", dst, _combine(op, old, src, tmap.dtype in tm.SIGNED_DTYPES), one, aligned=True)
    except MemoryFault as e:
        e.lane = lane
        raise
    if b.memory.writes is not None:
        b.memory.writes.record(dst, tmap.element_size, _thread_ids(b, one))
