"""mov and cvt (PTX ISA §9.7.9.1, §9.7.9.21)."""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ..program import CompileContext, numpy_dtype, reader, writer
from ..state import FLOAT, SINT, UINT
from . import impl
from .arith import ftz


@impl("mov")
def _mov(ctx: CompileContext, ins: ir.Instruction):
    t = ins.types[0]
    d, s = ins.operands[0], ins.operands[1]
    if isinstance(d, ir.Vector) or isinstance(s, ir.Vector):
        return _pack(ctx, ins, t, d, s), 0, -1
    src, dst = reader(ctx, s, t, ins), writer(ctx, d, t, ins)
    return (lambda b, lanes: dst(b, lanes, src(b, lanes))), 0, -1


def _pack(ctx, ins, t, d, s):
    """`mov.b64 {lo, hi}, %rd` / `mov.b64 %rd, {lo, hi}`: element 0 is the least significant part."""
    vec = d if isinstance(d, ir.Vector) else s
    parts = len(vec.elements)
    pbits = t.bits // parts
    pt = ScalarType(f"b{pbits}")
    whole_t = UINT[t.bits]
    if isinstance(d, ir.Vector):
        src = reader(ctx, s, t, ins)
        dsts = [writer(ctx, e, pt, ins) for e in d.elements]

        def unpack(b, lanes):
            v = src(b, lanes)
            for i, w in enumerate(dsts):
                w(b, lanes, ((v >> whole_t(i * pbits)) & whole_t((1 << pbits) - 1)).astype(UINT[pbits]))
        return unpack
    srcs = [reader(ctx, e, pt, ins) for e in s.elements]
    dst = writer(ctx, d, t, ins)

    def pack(b, lanes):
        v = np.zeros(lanes.shape, dtype=whole_t)
        for i, r in enumerate(srcs):
            v |= r(b, lanes).astype(whole_t) << whole_t(i * pbits)
        dst(b, lanes, v)
    return pack


def _int_to_int(v: np.ndarray, src: ScalarType, dst: ScalarType, sat: bool) -> np.ndarray:
    sv = v.view(numpy_dtype(src) if src.kind in "su" else UINT[src.bits])
    if sat and dst.kind in "su":
        info = np.iinfo(numpy_dtype(dst))
        wide = sv.astype(np.int64) if sv.dtype != np.uint64 else sv
        if sv.dtype == np.uint64:
            r = np.minimum(wide, np.uint64(info.max)) if info.max >= 0 else wide
            return r.astype(numpy_dtype(dst)).view(UINT[dst.bits])
        return np.clip(wide, info.min, info.max).astype(numpy_dtype(dst)).view(UINT[max(dst.bits, 8)])
    # Truncate or extend; extension follows the *source* signedness (PTX ISA cvt).
    if dst.bits > src.bits:
        base = SINT[src.bits] if src.kind == "s" else UINT[src.bits]
        return sv.view(base).astype(SINT[dst.bits] if src.kind == "s" else UINT[dst.bits]).view(UINT[dst.bits])
    return sv.view(UINT[src.bits]).astype(UINT[max(dst.bits, 8)])


_IRND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


@impl("cvt")
def _cvt(ctx: CompileContext, ins: ir.Instruction):
    dst_t, src_t = ins.types[0], ins.types[1]
    src = reader(ctx, ins.operands[1], src_t, ins)
    dst = writer(ctx, ins.operands[0], dst_t, ins)
    sat = ins.has("sat")
    use_ftz = ins.has("ftz")
    rnd = ins.mod("rnd") or ins.mod("irnd") or next((m for m in ins.modifiers if m in
                                                     ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), None)
    if dst_t.kind in "sub" and src_t.kind in "sub":
        return (lambda b, lanes: dst(b, lanes, _int_to_int(src(b, lanes), src_t, dst_t, sat))), 0, -1
    if src_t.kind == "f" and dst_t.kind in "su":
        if src_t.bits not in (32, 64):
            raise ctx.unsupported(ins, "(half precision source) is not executable yet")
        fn = _IRND.get(rnd or "rzi")
        if fn is None:
            raise ctx.unsupported(ins, f"with `.{rnd}` is not executable")
        info = np.iinfo(numpy_dtype(dst_t))

        def f2i(b, lanes):
            x = src(b, lanes).view(FLOAT[src_t.bits]).astype(np.float64)
            if use_ftz:
                x = ftz(x.astype(np.float32)).astype(np.float64) if src_t.bits == 32 else x
            r = fn(x)
            # Float-to-integer conversions saturate; NaN converts to 0 (PTX ISA cvt).
            r = np.where(np.isnan(r), 0, r)
            lo, hi = float(info.min), float(info.max)
            over, under = r >= hi, r <= lo
            clipped = np.clip(r, lo, hi)
            out = clipped.astype(np.int64) if info.min < 0 else \
                np.where(over, 0, clipped).astype(np.uint64)
            out = out.astype(numpy_dtype(dst_t))
            if info.min >= 0:
                out = np.where(over, numpy_dtype(dst_t).type(info.max), out)
            else:
                out = np.where(over, numpy_dtype(dst_t).type(info.max), np.where(under, numpy_dtype(dst_t).type(info.min), out))
            dst(b, lanes, out.view(UINT[dst_t.bits]))
        return f2i, 0, -1
    if dst_t.kind == "f" and src_t.kind in "su":
        if (rnd or "rn") != "rn" or dst_t.bits not in (32, 64):
            raise ctx.unsupported(ins, "is not executable yet")
        if dst_t.bits == 32 and src_t.bits == 64:
            raise ctx.unsupported(ins, "(64-bit integer to f32) is not executable yet")

        def i2f(b, lanes):
            v = src(b, lanes).view(numpy_dtype(src_t))
            dst(b, lanes, v.astype(FLOAT[dst_t.bits]).view(UINT[dst_t.bits]))
        return i2f, 0, -1
    if dst_t.kind == "f" and src_t.kind == "f" and {dst_t.bits, src_t.bits} <= {32, 64}:
        if rnd in _IRND:
            fn = _IRND[rnd]

            def f2f_int(b, lanes):
                x = src(b, lanes).view(FLOAT[src_t.bits])
                if use_ftz and src_t.bits == 32:
                    x = ftz(x)
                r = fn(x)
                if sat:
                    r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(r.dtype)
                dst(b, lanes, r.astype(FLOAT[dst_t.bits]).view(UINT[dst_t.bits]))
            return f2f_int, 0, -1
        if dst_t.bits < src_t.bits and (rnd or "rn") != "rn":
            raise ctx.unsupported(ins, "is not executable yet")

        def f2f(b, lanes):
            x = src(b, lanes).view(FLOAT[src_t.bits])
            if use_ftz and src_t.bits == 32:
                x = ftz(x)
            r = x.astype(FLOAT[dst_t.bits])
            if use_ftz and dst_t.bits == 32:
                r = ftz(r)
            if sat:
                r = np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(r.dtype)
            dst(b, lanes, r.view(UINT[dst_t.bits]))
        return f2f, 0, -1
    raise ctx.unsupported(ins, "is not executable yet")
