"""Warp-level instructions (PTX ISA §9.7.9.6 shfl.sync, §9.7.13.x vote/activemask/bar.warp.sync).

Every participating lane's sources are read before any destination is written.
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ..program import CompileContext, reader, writer
from ..state import UINT, WARP
from . import impl


def _warp_start(b, lanes):
    """Index (in the batch) of lane 0 of each lane's warp."""
    return lanes - b.laneid[lanes]


@impl("shfl")
def _shfl(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    mode = next(m for m in ins.modifiers if m in ("up", "down", "bfly", "idx"))
    d = ins.operands[0]
    dst_pair = isinstance(d, ir.Pair)
    dst = writer(ctx, d.first if dst_pair else d, t, ins)
    pdst = writer(ctx, d.second, ScalarType.PRED, ins) if dst_pair else None
    a = reader(ctx, ins.operands[1], t, ins)
    bsrc = reader(ctx, ins.operands[2], ScalarType.U32, ins)
    c = reader(ctx, ins.operands[3], ScalarType.U32, ins)

    def run(b, lanes):
        val = np.zeros(b.n, dtype=UINT[t.bits])
        present = np.zeros(b.n, dtype=bool)
        val[lanes] = a(b, lanes)
        present[lanes] = True
        lane = b.laneid[lanes].astype(np.int64)
        bb = bsrc(b, lanes).astype(np.int64) & 0x1F
        cc = c(b, lanes).astype(np.int64)
        clamp = cc & 0x1F
        segmask = (cc >> 8) & 0x1F
        max_lane = (lane & segmask) | (clamp & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j = lane - bb
            ok = j >= max_lane
        elif mode == "down":
            j = lane + bb
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bb
            ok = j <= max_lane
        else:
            j = min_lane | (bb & ~segmask)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        src = _warp_start(b, lanes) + j
        src = np.clip(src, 0, b.n - 1)
        # A source lane outside the warp (partial warps) or not participating reads its own value.
        valid = ok & (j < WARP) & present[src] & (b.cta_slot[src] == b.cta_slot[lanes])
        out = np.where(valid, val[src], val[lanes])
        dst(b, lanes, out)
        if pdst is not None:
            pdst(b, lanes, ok)
    return run, 0, -1


def _ballot(b, lanes, pred):
    """Per lane: the 32-bit mask of lanes of its warp (among ``lanes``) whose pred is true."""
    bits = np.zeros(b.n, dtype=np.uint64)
    bits[lanes] = np.where(pred, np.uint64(1) << b.laneid[lanes].astype(np.uint64), np.uint64(0))
    start = _warp_start(b, lanes)
    warps, inv = np.unique(start, return_inverse=True)
    masks = np.zeros(warps.size, dtype=np.uint64)
    np.bitwise_or.at(masks, inv, bits[lanes])
    return masks[inv].astype(np.uint32)


@impl("vote")
def _vote(ctx: CompileContext, ins: ir.Instruction):
    mode = next(m for m in ins.modifiers if m in ("all", "any", "uni", "ballot"))
    src = reader(ctx, ins.operands[1], ScalarType.PRED, ins)
    out_t = ScalarType.B32 if mode == "ballot" else ScalarType.PRED
    dst = writer(ctx, ins.operands[0], out_t, ins)
    # vote.sync's membermask: each lane votes with the lanes its mask names (tiled groups).
    member = reader(ctx, ins.operands[2], ScalarType.B32, ins) if len(ins.operands) > 2 else None

    def run(b, lanes):
        p = src(b, lanes)
        mask = _ballot(b, lanes, p)
        members = _ballot(b, lanes, np.ones(lanes.shape, dtype=bool))
        if member is not None:
            mm = member(b, lanes)
            mask, members = mask & mm, members & mm
        if mode == "ballot":
            dst(b, lanes, mask)
            return
        if mode == "all":
            dst(b, lanes, mask == members)
        elif mode == "any":
            dst(b, lanes, mask != 0)
        else:
            dst(b, lanes, (mask == members) | (mask == 0))
    return run, 0, -1


@impl("activemask")
def _activemask(ctx: CompileContext, ins: ir.Instruction):
    dst = writer(ctx, ins.operands[0], ScalarType.B32, ins)
    return (lambda b, lanes: dst(b, lanes, _ballot(b, lanes, np.ones(lanes.shape, dtype=bool)))), 0, -1


@impl("bar.warp.sync")
def _warp_sync(ctx, ins):
    # Lanes reaching it together under lowest-PC-first scheduling are already in step.
    return (lambda b, lanes: None), 0, -1


def _group_reduce(keys: np.ndarray, values: np.ndarray, ufunc, identity) -> np.ndarray:
    """Reduce ``values`` within groups of equal ``keys``; each element gets its group's result."""
    uniq, inv = np.unique(keys, return_inverse=True)
    acc = np.full(uniq.size, identity, dtype=values.dtype)
    ufunc.at(acc, inv, values)
    return acc[inv]


_REDUX = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}


@impl("redux.sync")
def _redux(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    op = next(m for m in ins.modifiers if m in _REDUX)
    if t.kind == "f":
        raise ctx.unsupported(ins, "(floating-point redux) is not executable yet")
    src = reader(ctx, ins.operands[1], t, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    vt = np.dtype(np.int32 if t.kind == "s" else np.uint32)
    ufunc = _REDUX[op]
    if op == "add":
        calc, ident = np.dtype(np.int64), 0          # exact sum, wrapped to 32 bits afterwards
    elif op in ("min", "max"):
        calc = vt
        ident = np.iinfo(vt).max if op == "min" else np.iinfo(vt).min
    else:
        calc, ident = np.dtype(np.uint32), (0xFFFFFFFF if op == "and" else 0)

    member = reader(ctx, ins.operands[2], ScalarType.B32, ins) if len(ins.operands) > 2 else None

    def run(b, lanes):
        v = src(b, lanes).view(vt).astype(calc)
        key = _warp_start(b, lanes).astype(np.int64)
        if member is not None:      # lanes reduce with the lanes sharing their membermask
            key = (key << 32) | member(b, lanes).astype(np.int64)
        r = _group_reduce(key, v, ufunc, calc.type(ident))
        dst(b, lanes, (r & 0xFFFFFFFF).astype(np.uint32) if op == "add" else r.astype(vt).view(np.uint32))
    return run, 0, -1


@impl("match")
def _match(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    mode = next(m for m in ins.modifiers if m in ("any", "all"))
    d = ins.operands[0]
    pair = isinstance(d, ir.Pair)
    dst = writer(ctx, d.first if pair else d, ScalarType.B32, ins)
    pdst = writer(ctx, d.second, ScalarType.PRED, ins) if pair else None
    src = reader(ctx, ins.operands[1], t, ins)
    member = reader(ctx, ins.operands[2], ScalarType.B32, ins) if len(ins.operands) > 2 else None

    def run(b, lanes):
        v = src(b, lanes).astype(np.uint64)
        start = _warp_start(b, lanes).astype(np.uint64)
        if member is not None:
            start = (start << np.uint64(32)) | member(b, lanes).astype(np.uint64)
        bits = np.uint64(1) << b.laneid[lanes].astype(np.uint64)
        members = _ballot(b, lanes, np.ones(lanes.shape, dtype=bool)).astype(np.uint64)
        if member is not None:
            members &= member(b, lanes).astype(np.uint64)
        keys = np.stack([start, v], axis=1)
        _, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        masks = np.zeros(inv.max() + 1 if inv.size else 0, dtype=np.uint64)
        np.bitwise_or.at(masks, inv, bits)
        same = masks[inv]
        if mode == "any":
            dst(b, lanes, same.astype(np.uint32))
        else:
            all_same = same == members
            dst(b, lanes, np.where(all_same, members, np.uint64(0)).astype(np.uint32))
            if pdst is not None:
                pdst(b, lanes, all_same)
    return run, 0, -1
