"""Warpgroup-level matrix multiply-accumulate (PTX ISA 9.0 §9.7.15): wgmma.mma_async (§9.7.15.5.2)
and wgmma.fence / commit_group / wait_group (§9.7.15.7).

A warpgroup is four consecutive warps of the CTA (threads 128g .. 128g + 127); the instruction
is `.sync.aligned` over it, so all 128 threads must execute it together (else a located fault:
the ISA leaves it undefined). The interpreter runs the whole product when `mma_async` executes:
the ISA makes reading D (or writing A's registers or the shared operands) before the matching
`wgmma.wait_group` undefined, so finishing early is one of the behaviours a program may see, and
fence / commit_group / wait_group have nothing left to order. A and B are read from shared memory
through their matrix descriptors (ptxvm.machine.wgmma's canonical layouts and swizzles), A
perhaps from registers; the arithmetic is mma's rule (ops.tensor_math, isa/instructions.toml).
"""

from __future__ import annotations

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import wgmma as W
from ..program import CompileContext, reader, writer
from . import impl, tensor_math
from .control import _Trap
from .tensor_regs import bad, check_regs, load_elements


def parse_form(ins: ir.Instruction) -> W.Form:
    try:
        return W.parse(ins)
    except W.WgmmaError as e:
        raise bad(ins, str(e)) from None


def warpgroups_of(b, lanes: np.ndarray, ins: ir.Instruction) -> np.ndarray:
    """``lanes`` as [warpgroups, 128]; a fault unless all 128 threads of each are here."""
    start = lanes - (b.tid_linear[lanes] % W.WARPGROUP)
    _, first, counts = np.unique(start, return_index=True, return_counts=True)
    short = np.nonzero(counts != W.WARPGROUP)[0]
    if short.size:
        k = short[0]
        raise _Trap(int(lanes[first[k]]), f"`{ins.full_opcode}` is warpgroup-collective (.sync.aligned): "
                    f"only {int(counts[k])} of the 128 threads of this warpgroup (four consecutive warps) "
                    "executed it together (a divergent or guarded call, or a partial warpgroup; "
                    "PTX ISA §9.7.15: undefined)")
    return lanes.reshape(-1, W.WARPGROUP)


def _uniform(values: np.ndarray, groups: np.ndarray, ins: ir.Instruction, what: str) -> np.ndarray:
    diff = np.nonzero((values != values[:, :1]).any(axis=1))[0]
    if diff.size:
        g = diff[0]
        t = int(np.argmax(values[g] != values[g, 0]))
        raise _Trap(int(groups[g, t]), f"`{ins.full_opcode}`: thread {t} of the warpgroup gives a "
                    f"different {what} from thread 0's; the warpgroup's threads must agree (PTX ISA §9.7.15)")
    return values[:, 0]


def _to_elements(regs: np.ndarray, bits: int) -> np.ndarray:
    """[..., R] 32-bit register values -> [..., R * 32/bits] element bits, low element first."""
    per = 32 // bits
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(bits)
    el = (regs.astype(np.uint64)[..., None] >> shifts) & np.uint64((1 << bits) - 1)
    return el.reshape(regs.shape[:-1] + (regs.shape[-1] * per,))


def _to_regs(el: np.ndarray, bits: int) -> np.ndarray:
    per = 32 // bits
    e = el.astype(np.uint64).reshape(el.shape[:-1] + (-1, per))
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(bits)
    return np.bitwise_or.reduce(e << shifts, axis=-1).astype(np.uint32)


def _shared_operand(b, ins, desc: np.ndarray, groups: np.ndarray, rows: int, k: int, bits: int,
                    major: str) -> np.ndarray:
    """[G, rows, K] element bits of an operand in .shared through its descriptor ([G] uint64)."""
    f = W.decode_fields(desc)
    if (f["base_offset"] != 0).any():
        g = int(np.argmax(f["base_offset"] != 0))
        raise _Trap(int(groups[g, 0]), f"`{ins.full_opcode}`: a matrix descriptor with a nonzero base "
                    "offset is not executable yet (PTX ISA §9.7.15.5.1.2)")
    if (f["swizzle"] != f["swizzle"][0]).any():
        raise _Trap(int(groups[0, 0]), f"`{ins.full_opcode}`: warpgroups with different swizzle modes")
    i = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    col = lambda x: x[:, None, None]
    byte, bit = W.element_addresses(col(f["start"]), col(f["lbo"]), col(f["sbo"]), int(f["swizzle"][0]),
                                    major, bits, i[None], kk[None])
    who = np.broadcast_to(groups[:, :1, None], byte.shape)
    if bits < 8:
        return load_elements(b, "shared", byte * np.uint64(8) + bit, who, bits)
    return load_elements(b, "shared", byte, who, bits)


def _negate(m: np.ndarray, elem: str) -> np.ndarray:
    return m ^ np.uint64(1 << W.SIGN_BIT[elem])


@impl("wgmma.mma_async")
def _mma_async(ctx: CompileContext, ins: ir.Instruction):
    form = parse_form(ins)
    ops = ins.operands
    dbits = 16 if form.dtype == "f16" else 32
    _, abits = W.AB_TYPES[form.atype]
    d_regs = check_regs(ctx, ins, ops[0], W.d_regs(form.dtype, form.n), 32, "the D fragment")
    rd = [reader(ctx, e, ScalarType.B32, ins) for e in d_regs]
    wd = [writer(ctx, e, ScalarType.B32, ins) for e in d_regs]
    if form.a_in_regs:
        ra = [reader(ctx, e, ScalarType.B32, ins) for e in check_regs(ctx, ins, ops[1], 4, 32, "the A fragment")]
    else:
        ra_desc = reader(ctx, ops[1], ScalarType.B64, ins)
    rb_desc = reader(ctx, ops[2], ScalarType.B64, ins)
    scale_d = reader(ctx, ops[3], ScalarType.PRED, ins)
    dc = W.d_coords(form.n)
    ac = W.a_coords(form.atype)
    zero = {"f32": 0x80000000, "f16": 0x8000, "s32": 0}[form.dtype]      # -0.0: D = A*B exactly

    def run(b, lanes):
        groups = warpgroups_of(b, lanes, ins)
        flat = groups.reshape(-1)
        g = groups.shape[0]
        if form.a_in_regs:
            regs = np.stack([r(b, flat) for r in ra], axis=-1).reshape(g, W.WARPGROUP, 4)
            el = _to_elements(regs, abits)
            a = np.zeros((g, W.M, form.k), dtype=np.uint64)
            a[:, ac[..., 0], ac[..., 1]] = el
        else:
            desc = _uniform(ra_desc(b, flat).astype(np.uint64).reshape(g, -1), groups, ins, "A descriptor")
            a = _shared_operand(b, ins, desc, groups, W.M, form.k, abits, "mn" if form.trans_a else "k")
        desc_b = _uniform(rb_desc(b, flat).astype(np.uint64).reshape(g, -1), groups, ins, "B descriptor")
        bt = _shared_operand(b, ins, desc_b, groups, form.n, form.k, abits, "mn" if form.trans_b else "k")
        bm = np.swapaxes(bt, 1, 2)                                     # [G, K, N]
        if form.scale_a < 0:
            a = _negate(a, form.atype)
        if form.scale_b < 0:
            bm = _negate(bm, form.btype)
        dregs = np.stack([r(b, flat) for r in rd], axis=-1).reshape(g, W.WARPGROUP, len(rd))
        c = np.zeros((g, W.M, form.n), dtype=np.uint64)
        c[:, dc[..., 0], dc[..., 1]] = _to_elements(dregs, dbits)
        keep = _uniform(scale_d(b, flat).reshape(g, -1), groups, ins, "scale-d")
        c = np.where(keep[:, None, None], c, np.uint64(zero))
        if form.atype == "b1":
            d = tensor_math.bit_mma(a, bm, c, "and")
        elif form.atype in ("s8", "u8"):
            d = tensor_math.int_mma(a, bm, c, form.atype, form.btype, form.satfinite)
        else:
            d = tensor_math.float_mma(a, bm, c, form.atype, form.btype, form.dtype, form.dtype)
        out = _to_regs(d[:, dc[..., 0], dc[..., 1]], dbits).reshape(g * W.WARPGROUP, len(wd))
        for i, w in enumerate(wd):
            w(b, flat, out[:, i])
    return run, 0, -1


@impl("wgmma.fence", "wgmma.commit_group")
def _ordering(ctx: CompileContext, ins: ir.Instruction):
    # mma_async completes when it executes (module docstring): nothing is in flight to order.
    return (lambda b, lanes: None), 0, -1


@impl("wgmma.wait_group")
def _wait_group(ctx: CompileContext, ins: ir.Instruction):
    if len(ins.operands) != 1 or not isinstance(ins.operands[0], ir.Immediate):
        raise bad(ins, "takes one integer constant N (PTX ISA §9.7.15.7.3)")
    return (lambda b, lanes: None), 0, -1


__all__ = ["parse_form", "warpgroups_of"]
