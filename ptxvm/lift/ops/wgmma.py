"""Warpgroup-level matrix multiply-accumulate (PTX ISA 9.0 §9.7.15) on LLVM targets:
wgmma.mma_async, and wgmma.fence / commit_group / wait_group (nothing to order: see below).

The same semantics as the interpreter's interp/ops/wgmma.py, from the same tables
(ptxvm.machine.wgmma: descriptor fields, canonical layouts as ``Term`` data, fragments) and
mma's accumulation rule (ops.matrix). Each thread computes only its own D elements: rows
16 w + l/4 + {0, 8} of its warp w and N/4 columns. It reads those two rows of A and, one
column at a time, B's columns from shared memory through the descriptors (the swizzle mode is
a run-time value: one copy of the load loop per mode). A in registers needs other lanes' values,
but only of the thread's own warp (warp w holds exactly rows 16w .. 16w + 15 of A), so one warp
exchange brings it, as for mma.

Like the interpreter, the product is complete when mma_async executes (reading D before the
matching wait_group is undefined). Checked: the thread's warp takes part whole and agrees on the
descriptors, and the CTA has all 128 threads of the warpgroup; *not* checked here (the JIT
exchanges values within a warp only): that the other three warps of the warpgroup execute the
same instruction together, which the interpreter does check.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...machine import wgmma as W
from ..function import I32, I64, FunctionLowering
from . import lowers
from .matrix import _accumulate            # mma's one accumulation rule per type (one source)
from .matrix_frag import Published, bad, full_warp_check, load_element, matrix_local, regs_of, uniform_check


def _form(ins: ptx.Instruction) -> W.Form:
    try:
        return W.parse(ins)
    except W.WgmmaError as e:
        raise bad(ins, str(e)) from None


@cache
def _check_d_rule(n: int) -> None:
    """The loop below visits D element e = 4 (j/2) + 2 s + j%2 of a lane as row l/4 + 8 s,
    column 8 (j/2) + 2 (l%4) + j%2; that must be machine.wgmma's D layout (one source)."""
    dc = W.d_coords(n)[:32]
    lane = np.arange(32)[:, None, None]
    j = np.arange(n // 4)[None, :, None]
    s = np.arange(2)[None, None, :]
    e, lanes = np.broadcast_arrays(4 * (j // 2) + 2 * s + j % 2, lane)
    row, col = lane // 4 + 8 * s, 8 * (j // 2) + 2 * (lane % 4) + j % 2
    got = dc[lanes, e]
    if not ((got[..., 0] == row).all() and (got[..., 1] == col).all()):
        raise AssertionError("lift/ops/wgmma.py's D traversal disagrees with machine.wgmma.d_coords")


def _for(fl: FunctionLowering, count: int, name: str, body) -> None:
    """for x in 0 .. count-1: body(x (i64)), as an IR loop (state lives in memory)."""
    b = fl.b
    pre = b.block
    loop, done = fl.new_block(name), fl.new_block(f"{name}_done")
    b.branch(loop)
    b.position_at_end(loop)
    x = b.phi(I64)
    x.add_incoming(I64(0), pre)
    body(x)
    nxt = b.add(x, I64(1))
    x.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_unsigned("<", nxt, I64(count)), loop, done)
    b.position_at_end(done)


def _trap_if(fl: FunctionLowering, ins: ptx.Instruction, cond: ir.Value, name: str) -> None:
    b = fl.b
    bad_, ok = fl.new_block(f"{name}_bad"), fl.new_block(name)
    b.cbranch(cond, bad_, ok)
    b.position_at_end(bad_)
    fl.hooks.trap(fl, ins, ins.opcode)
    b.position_at_end(ok)


class _Desc:
    """A matrix descriptor's fields (i64 values); a nonzero base offset traps (refused by name
    in the interpreter: the ISA does not say how it combines with the address)."""

    def __init__(self, fl: FunctionLowering, ins: ptx.Instruction, d: ir.Value) -> None:
        b = fl.b
        field = lambda shift, mask: b.and_(b.lshr(d, I64(shift)), I64(mask)) if shift else b.and_(d, I64(mask))
        self.start = b.shl(field(0, 0x3FFF), I64(4))
        self.lbo = b.shl(field(16, 0x3FFF), I64(4))
        self.sbo = b.shl(field(32, 0x3FFF), I64(4))
        self.mode = field(62, 3)
        _trap_if(fl, ins, b.icmp_unsigned("!=", field(49, 7), I64(0)), "wgmma_base_offset")


def _offset_bits(b: ir.IRBuilder, terms: tuple[W.Term, ...], i: ir.Value, k: ir.Value, desc: _Desc) -> ir.Value:
    out = I64(0)
    for t in terms:
        x = i if t.axis == "i" else k
        x = b.udiv(x, I64(t.div)) if t.div > 1 else x
        x = b.urem(x, I64(t.mod)) if t.mod is not None else x
        scale = I64(t.bits) if not t.unit else b.shl(desc.lbo if t.unit == "lbo" else desc.sbo, I64(3))
        out = b.add(out, b.mul(x, scale))
    return out


def _load_operand(fl: FunctionLowering, ins: ptx.Instruction, desc: _Desc, major: str, elem: str,
                  count: int, k: int, index_of, dest: ir.Value, negate: bool, name: str) -> None:
    """dest[j * K + kk] = element (index_of(j), kk) of the operand (i32 bits), j < count, read
    through the descriptor; one loop per swizzle mode, chosen at run time."""
    b = fl.b
    bits = W.AB_TYPES[elem][1]
    width = max(bits // 8, 1)
    join = fl.new_block(f"{name}_loaded")
    blocks = {mode: fl.new_block(f"{name}_swz{mode}") for mode in W.SWIZZLE_MODES}
    sw = b.switch(desc.mode, blocks[3])
    for mode in (0, 1, 2):
        sw.add_case(I64(mode), blocks[mode])
    for mode, swz in W.SWIZZLE_MODES.items():
        b.position_at_end(blocks[mode])
        terms = W.layout(major, swz, bits)

        def body(x, terms=terms, swz=swz):
            j, kk = b.udiv(x, I64(k)), b.urem(x, I64(k))
            off = _offset_bits(b, terms, index_of(j), kk, desc)
            byte = b.add(desc.start, b.lshr(off, I64(3)))
            if swz:
                byte = b.xor(byte, b.shl(b.and_(b.lshr(byte, I64(7)), I64(swz // 16 - 1)), I64(4)))
            p = fl.hooks.access(fl, "shared", byte, width, ins, write=False)
            v = b.zext(b.load(b.bitcast(p, ir.PointerType(ir.IntType(8 * width))), align=1), I32)
            if bits < 8:
                v = b.and_(b.lshr(v, b.trunc(b.and_(off, I64(7)), I32)), I32(1))
            if negate:
                v = b.xor(v, I32(1 << W.SIGN_BIT[elem]))
            b.store(v, b.gep(dest, [x]))
        _for(fl, count * k, f"{name}_ld{mode}", body)
        b.branch(join)
    b.position_at_end(join)


def _i32_array(fl: FunctionLowering, count: int, name: str) -> ir.Value:
    return fl.b.bitcast(fl.alloca_bytes(4 * count, 4, name), ir.PointerType(I32))


@lowers("wgmma.mma_async")
def _mma_async(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    form = _form(ins)
    n, k = form.n, form.k
    _check_d_rule(n)
    ops = ins.operands
    dbits = 16 if form.dtype == "f16" else 32
    rd = regs_of(fl, ins, ops[0], W.d_regs(form.dtype, n), 32, "the D fragment")
    ra = regs_of(fl, ins, ops[1], 4, 32, "the A fragment") if form.a_in_regs else None
    b = fl.b
    desc_b = fl.read(ops[2], ScalarType.B64)
    desc_a = None if form.a_in_regs else fl.read(ops[1], ScalarType.B64)
    extra = [desc_b] + ([desc_a] if desc_a is not None else [])
    afrag = W.a_warp_fragment(form.atype)
    pub = Published(fl, ins, [(afrag, list(ra))] if ra else [], extra=extra)
    full_warp_check(fl, ins, pub.view.mask)
    desc_b = fl.read(ops[2], ScalarType.B64)           # values do not cross the exchange
    uniform_check(fl, ins, pub, 0, desc_b)
    if not form.a_in_regs:
        desc_a = fl.read(ops[1], ScalarType.B64)
        uniform_check(fl, ins, pub, 1, desc_a)
    tid = _check_warpgroup(fl, ins)
    lane = b.zext(pub.view.lane, I64)
    warp = b.zext(b.and_(b.lshr(tid, I32(5)), I32(3)), I64)
    group, quad = b.lshr(lane, I64(2)), b.and_(lane, I64(3))

    # The thread's two rows of A: a_loc[s * K + kk] (i32 element bits), s = 0, 1.
    a_loc = _i32_array(fl, 2 * k, "wg_a_rows")
    if form.a_in_regs:
        a_mat = matrix_local(fl, pub, 0, afrag, "wg_a")      # the warp's 16 rows x K

        def copy(x):
            s, kk = b.udiv(x, I64(k)), b.urem(x, I64(k))
            v = b.trunc(load_element(b, a_mat, b.add(b.mul(b.add(group, b.mul(s, I64(8))), I64(k)), kk)), I32)
            if form.scale_a < 0:
                v = b.xor(v, I32(1 << W.SIGN_BIT[form.atype]))
            b.store(v, b.gep(a_loc, [x]))
        _for(fl, 2 * k, "wg_a_copy", copy)
    else:
        da = _Desc(fl, ins, desc_a)
        _load_operand(fl, ins, da, "mn" if form.trans_a else "k", form.atype, 2, k,
                      lambda s: b.add(b.add(b.mul(warp, I64(16)), group), b.mul(s, I64(8))),
                      a_loc, form.scale_a < 0, "wg_a")
    db = _Desc(fl, ins, desc_b)

    d_loc = _unpack_d(fl, rd, dbits, n // 2, fl.read(ops[3], ScalarType.PRED), form.dtype)

    types = (form.dtype, form.atype, form.btype, form.dtype)
    b_col = _i32_array(fl, k, "wg_b_col")

    def column(jb):
        col = b.add(b.add(b.mul(b.lshr(jb, I64(1)), I64(8)), b.mul(quad, I64(2))), b.and_(jb, I64(1)))
        _load_operand(fl, ins, db, "mn" if form.trans_b else "k", form.btype, 1, k, lambda _j: col,
                      b_col, form.scale_b < 0, "wg_b")
        for s in range(2):
            e = b.add(b.add(b.mul(b.lshr(jb, I64(1)), I64(4)), I64(2 * s)), b.and_(jb, I64(1)))
            slot = b.gep(d_loc, [e])

            def operand(kk, s=s):
                x = b.zext(b.load(b.gep(a_loc, [b.add(I64(s * k), kk)])), I64)
                return x, b.zext(b.load(b.gep(b_col, [kk])), I64)
            b.store(_accumulate(fl, ins, types, operand, b.load(slot), k), slot)
    _for(fl, n // 4, "wg_cols", column)

    _pack_d(fl, rd, dbits, d_loc)


def _check_warpgroup(fl: FunctionLowering, ins: ptx.Instruction) -> ir.Value:
    """The thread's linear id, after a trap unless the CTA holds its whole warpgroup (threads
    128 g .. 128 g + 127)."""
    b = fl.b
    tid = fl.hooks.linear_tid(fl)
    ntid = [fl.hooks.special_register(fl, "%ntid", c, 32, ins) for c in "xyz"]
    total = b.mul(b.mul(ntid[0], ntid[1]), ntid[2])
    _trap_if(fl, ins, b.icmp_unsigned(">", b.add(b.or_(tid, I32(127)), I32(1)), total), "wgmma_warpgroup")
    return tid


def _unpack_d(fl: FunctionLowering, rd, dbits: int, count: int, keep: ir.Value, dtype: str) -> ir.Value:
    """The thread's D (and C) elements as i64 bits in a local array; scale-d = 0 (``keep``
    false) starts from -0.0 (D = A*B)."""
    b = fl.b
    d_loc = b.bitcast(fl.alloca_bytes(8 * count, 8, "wg_d"), ir.PointerType(I64))
    zero = I64({"f32": 0x80000000, "f16": 0x8000, "s32": 0}[dtype])
    per = 32 // dbits
    for r, reg in enumerate(rd):
        v = b.zext(fl.read(reg, ScalarType.B32), I64)
        for j in range(per):
            el = b.and_(b.lshr(v, I64(j * dbits)), I64((1 << dbits) - 1)) if per > 1 else v
            b.store(b.select(keep, el, zero), b.gep(d_loc, [I64(r * per + j)]))
    return d_loc


def _pack_d(fl: FunctionLowering, rd, dbits: int, d_loc: ir.Value) -> None:
    """Write the D elements of ``d_loc`` back into the fragment's 32-bit registers."""
    b = fl.b
    per = 32 // dbits
    for r, reg in enumerate(rd):
        acc = None
        for j in range(per):
            el = b.and_(b.load(b.gep(d_loc, [I64(r * per + j)])), I64((1 << dbits) - 1))
            el = b.shl(el, I64(j * dbits)) if j else el
            acc = el if acc is None else b.or_(acc, el)
        fl.write(reg, ScalarType.B32, b.trunc(acc, I32))


@lowers("wgmma.fence", "wgmma.commit_group", "wgmma.wait_group")
def _ordering(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    # mma_async is complete when it executes (module docstring): nothing is in flight to order.
    if ins.opcode == "wgmma.wait_group" and (len(ins.operands) != 1 or not isinstance(ins.operands[0], ptx.Immediate)):
        raise bad(ins, "takes one integer constant N (PTX ISA §9.7.15.7.3)")
