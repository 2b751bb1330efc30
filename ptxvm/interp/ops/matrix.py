"""Warp-level matrix instructions (PTX ISA 9.0 §9.7.14): wmma.load/store/mma (§9.7.14.4),
mma.sync (§9.7.14.5.14), ldmatrix, stmatrix, movmatrix (§9.7.14.5.15-17).

Each runs once per warp: the warp's fragment registers become matrices (the layouts of
ptxvm.machine.fragments), the result goes back into registers or memory (ops.tensor_regs).
The arithmetic is ops.tensor_math's one rule per type (documented in isa/instructions.toml).
"""

from __future__ import annotations

import numpy as np

from ...errors import UnsupportedError
from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine import fragments as F
from ..program import CompileContext, address, reader, writer
from . import impl, tensor_math
from .control import _Trap
from .memory import space_of
from .tensor_regs import (bad, frag_reader, frag_writer, from_matrix, load_elements, shared_only,
                          store_elements, to_matrix, uniform, warps_of, check_regs)


def mma_types(ins: ir.Instruction, wmma: bool) -> tuple[str, str, str, str]:
    """(dtype, atype, btype, ctype) as written: d.a.b.c, d.c with the sub-byte .atype.btype
    modifiers, or (wmma .f16) d.c with .f16 inputs implied."""
    types = F.operand_types([t.value for t in ins.types], ins.mod("mma_sub"), wmma)
    if types is None:
        raise bad(ins, "needs the types .dtype.atype.btype.ctype (PTX ISA §9.7.14)")
    return types


def product(ins: ir.Instruction, types: tuple[str, str, str, str]):
    """(A, B, C element-bit matrices) -> D element bits, by the type's accumulation rule."""
    dtype, atype, btype, ctype = types
    if atype == "b1":
        op = ins.mod("mma_bitop")
        if op is None or ins.mod("popc") is None:
            raise bad(ins, "with .b1 operands needs .xor.popc or .and.popc (PTX ISA §9.7.14.5.14)")
        return lambda a, b_, c: tensor_math.bit_mma(a, b_, c, op)
    if atype in ("s8", "u8", "s4", "u4"):
        sat = ins.mod("satfinite") is not None
        return lambda a, b_, c: tensor_math.int_mma(a, b_, c, atype, btype, sat)
    if ins.mod("satfinite") is not None:
        s = ins.span
        raise UnsupportedError(f"`{ins.full_opcode}`: .satfinite with floating-point operands is not "
                               "executable yet", filename=s.filename, line=s.line or None, column=s.column or None)
    rnd = ins.mod("rnd") or "rn"
    if rnd != "rn" and dtype != "f64":
        raise bad(ins, f"allows a rounding modifier only with .f64, not `.{rnd}`")
    return lambda a, b_, c: tensor_math.float_mma(a, b_, c, atype, btype, ctype, dtype, rnd)


def _fragments(ins: ir.Instruction, op: str, shape: str, types, layouts=(None, None)) -> tuple[F.Fragment, ...]:
    dtype, atype, btype, ctype = types
    try:
        return (F.fragment(op, shape, "a", atype, layouts[0]), F.fragment(op, shape, "b", btype, layouts[1]),
                F.fragment(op, shape, "c", ctype), F.fragment(op, shape, "d", dtype))
    except F.FragmentError as e:
        raise bad(ins, str(e)) from None


def mma_layouts(ins: ir.Instruction) -> tuple[str, str]:
    """The .alayout.blayout as written (.row.col when absent, as the parser requires them)."""
    parts = (ins.mod("layout") or "row.col").split(".")
    return (parts[0], parts[-1])


def build_mma(ctx: CompileContext, ins: ir.Instruction, op: str, shape: str, types, layouts=(None, None)):
    fa, fb, fc, fd = _fragments(ins, op, shape, types, layouts)
    if op == "wmma" and types[1] != types[2]:
        raise bad(ins, f"takes A and B of one type, not `.{types[1]}` and `.{types[2]}`")
    ra = frag_reader(ctx, ins, ins.operands[1], fa, "the A fragment")
    rb = frag_reader(ctx, ins, ins.operands[2], fb, "the B fragment")
    rc = frag_reader(ctx, ins, ins.operands[3], fc, "the C fragment")
    wd = frag_writer(ctx, ins, ins.operands[0], fd, "the D fragment")
    compute = product(ins, types)

    def run(b, lanes):
        wl = warps_of(b, lanes, ins)
        a, bb, c = to_matrix(fa, ra(b, wl)), to_matrix(fb, rb(b, wl)), to_matrix(fc, rc(b, wl))
        wd(b, wl, from_matrix(fd, compute(a, bb, c)))
    return run, 0, -1


@impl("mma")
def _mma(ctx: CompileContext, ins: ir.Instruction):
    shape = ins.mod("mma_shape")
    if ins.mod("mma_kind") is not None or ins.mod("block_scale") is not None:
        raise ctx.unsupported(ins, "(.kind and block-scaled forms, sm_120) is not executable yet")
    if len(ins.operands) != 4:
        raise ctx.unsupported(ins, "with more than four operands is not executable yet")
    types = mma_types(ins, False)
    layouts = mma_layouts(ins)
    try:
        sm = F.mma_sm(shape, types[1], types[2], types[3], types[0], layouts)
    except F.FragmentError as e:
        raise bad(ins, str(e)) from None
    if ctx.module.sm is not None and ctx.module.sm < sm:
        raise bad(ins, f"needs sm_{sm} or later; the module targets sm_{ctx.module.sm}")
    return build_mma(ctx, ins, "mma", shape, types, layouts)


@impl("wmma.mma")
def _wmma_mma(ctx: CompileContext, ins: ir.Instruction):
    return build_mma(ctx, ins, "wmma", ins.mod("wmma_shape"), mma_types(ins, True))


# ------------------------------------------------------------------ wmma.load / wmma.store

def _wmma_frag(ins: ir.Instruction, role: str) -> F.Fragment:
    elem = ins.types[0].value if ins.types else ins.mod("mma_sub")
    try:
        return F.fragment("wmma", ins.mod("wmma_shape"), role, elem)
    except F.FragmentError as e:
        raise bad(ins, str(e)) from None


def _wmma_addresses(ctx: CompileContext, ins: ir.Instruction, frag: F.Fragment, a_op, s_op):
    """A closure: [warps, 32] lanes -> (element addresses [W, 32, E], who [W, 32, E]); addresses
    of sub-byte elements are bit addresses. p and stride (in elements) must be warp-uniform."""
    space = space_of(ins)
    addr = address(ctx, a_op, space, ins)
    stride = reader(ctx, s_op, ScalarType.U32, ins) if s_op is not None else None
    row_major = ins.mod("layout") == "row"
    default = frag.cols if row_major else frag.rows
    bits = frag.elem_bits
    r = frag.coords[..., 0].astype(np.uint64)[None]
    c = frag.coords[..., 1].astype(np.uint64)[None]

    def elements(b, wl):
        flat = wl.reshape(-1)
        base = uniform(addr(b, flat).reshape(wl.shape), wl, ins, "address")
        if stride is not None:
            ld = uniform(stride(b, flat).astype(np.uint64).reshape(wl.shape), wl, ins, "stride")
        else:
            ld = np.full(wl.shape[0], default, dtype=np.uint64)
        ld = ld[:, None, None]
        lin = r * ld + c if row_major else c * ld + r
        if bits >= 8:
            a = base[:, None, None] + lin * np.uint64(bits // 8)
        else:
            a = base[:, None, None] * np.uint64(8) + lin * np.uint64(bits)
        return a, np.broadcast_to(wl[:, :, None], a.shape)
    return space, elements


@impl("wmma.load")
def _wmma_load(ctx: CompileContext, ins: ir.Instruction):
    frag = _wmma_frag(ins, ins.mod("frag_abc"))
    s_op = ins.operands[2] if len(ins.operands) > 2 else None
    space, elements = _wmma_addresses(ctx, ins, frag, ins.operands[1], s_op)
    wd = frag_writer(ctx, ins, ins.operands[0], frag, f"the {ins.mod('frag_abc').upper()} fragment")

    def run(b, lanes):
        wl = warps_of(b, lanes, ins)
        a, who = elements(b, wl)
        wd(b, wl, load_elements(b, space, a, who, frag.elem_bits))
    return run, 0, -1


@impl("wmma.store")
def _wmma_store(ctx: CompileContext, ins: ir.Instruction):
    frag = _wmma_frag(ins, "d")
    s_op = ins.operands[2] if len(ins.operands) > 2 else None
    space, elements = _wmma_addresses(ctx, ins, frag, ins.operands[0], s_op)
    rd = frag_reader(ctx, ins, ins.operands[1], frag, "the D fragment")

    def run(b, lanes):
        wl = warps_of(b, lanes, ins)
        a, who = elements(b, wl)
        store_elements(b, space, a, who, rd(b, wl), frag.elem_bits)
    return run, 0, -1


# ------------------------------------------------------------------ ldmatrix / stmatrix / movmatrix

def _ldm_form(ctx: CompileContext, ins: ir.Instruction) -> tuple[int, bool, str]:
    """(matrices, trans, space) of an m8n8 .b16 ldmatrix/stmatrix; others refused by name."""
    if ins.form != "b16" or ins.types[0] is not ScalarType.B16 or ins.mod("ldm_shape") != "m8n8":
        raise ctx.unsupported(ins, "(the .b8 and sub-byte forms of sm_100) is not executable yet")
    space = space_of(ins)
    if space not in ("shared", "generic"):
        raise bad(ins, f"reads and writes .shared only, not .{space} (PTX ISA §9.7.14.5.15)")
    return F.LDMATRIX_COUNT[ins.mod("ldm_num")], ins.mod("trans") is not None, space


def _row_addresses(b, ins, addr, wl, count: int, space: str) -> tuple[np.ndarray, np.ndarray]:
    """[W, count, 8, 8] element addresses of each matrix's rows, and the lanes that gave them."""
    rows = F.ldmatrix_row_lanes(f"x{count}")
    a = addr(b, wl.reshape(-1)).reshape(wl.shape)[:, rows]      # [W, count, 8]
    who = wl[:, rows]
    odd = (a & np.uint64(15)) != 0
    if odd.any():
        i = int(np.argmax(odd.reshape(-1)))
        raise _Trap(int(who.reshape(-1)[i]), f"`{ins.full_opcode}`: the row address "
                    f"{int(a.reshape(-1)[i]):#x} is not 16-byte aligned (PTX ISA §9.7.14.5.15)")
    shared_only(b, space, a, who, ins)
    el = a[..., None] + np.arange(8, dtype=np.uint64) * np.uint64(2)
    return el, np.broadcast_to(who[..., None], el.shape)


@impl("ldmatrix")
def _ldmatrix(ctx: CompileContext, ins: ir.Instruction):
    count, trans, space = _ldm_form(ctx, ins)
    addr = address(ctx, ins.operands[1], space, ins)
    ws = [writer(ctx, e, ScalarType.B32, ins)
          for e in check_regs(ctx, ins, ins.operands[0], count, 32, "the destination")]
    at = F.ldmatrix_coords(trans)

    def run(b, lanes):
        wl = warps_of(b, lanes, ins)
        el, who = _row_addresses(b, ins, addr, wl, count, space)
        m = load_elements(b, space, el, who, 16)                  # [W, count, 8, 8]
        v = m[:, :, at[..., 0], at[..., 1]]                        # [W, count, 32, 2]
        regs = (v[..., 0] | (v[..., 1] << np.uint64(16))).astype(np.uint32)
        flat = wl.reshape(-1)
        for i, w in enumerate(ws):
            w(b, flat, regs[:, i].reshape(-1))
    return run, 0, -1


@impl("stmatrix")
def _stmatrix(ctx: CompileContext, ins: ir.Instruction):
    count, trans, space = _ldm_form(ctx, ins)
    addr = address(ctx, ins.operands[0], space, ins)
    rs = [reader(ctx, e, ScalarType.B32, ins)
          for e in check_regs(ctx, ins, ins.operands[1], count, 32, "the source")]
    at = F.ldmatrix_coords(trans)

    def run(b, lanes):
        wl = warps_of(b, lanes, ins)
        flat = wl.reshape(-1)
        regs = np.stack([r(b, flat).astype(np.uint64).reshape(wl.shape) for r in rs], axis=1)
        v = np.stack([regs & np.uint64(0xFFFF), regs >> np.uint64(16)], axis=-1)   # [W, count, 32, 2]
        m = np.zeros(wl.shape[:1] + (count, 8, 8), dtype=np.uint64)
        m[:, :, at[..., 0], at[..., 1]] = v
        el, who = _row_addresses(b, ins, addr, wl, count, space)
        store_elements(b, space, el, who, m, 16)
    return run, 0, -1


@impl("movmatrix")
def _movmatrix(ctx: CompileContext, ins: ir.Instruction):
    if ins.mod("ldm_shape") != "m8n8":
        raise bad(ins, "takes the shape .m8n8 only (PTX ISA §9.7.14.5.17)")
    (dst,) = check_regs(ctx, ins, ins.operands[0], 1, 32, "the destination")
    (src,) = check_regs(ctx, ins, ins.operands[1], 1, 32, "the source")
    w, r = writer(ctx, dst, ScalarType.B32, ins), reader(ctx, src, ScalarType.B32, ins)
    plain, trans = F.ldmatrix_coords(False), F.ldmatrix_coords(True)

    def run(b, lanes):
        wl = warps_of(b, lanes, ins)
        flat = wl.reshape(-1)
        reg = r(b, flat).astype(np.uint64).reshape(wl.shape)
        v = np.stack([reg & np.uint64(0xFFFF), reg >> np.uint64(16)], axis=-1)     # [W, 32, 2]
        m = np.zeros((wl.shape[0], 8, 8), dtype=np.uint64)
        m[:, plain[..., 0], plain[..., 1]] = v
        t = m[:, trans[..., 0], trans[..., 1]]
        w(b, flat, (t[..., 0] | (t[..., 1] << np.uint64(16))).astype(np.uint32).reshape(-1))
    return run, 0, -1


@impl("mma.sp", "mma.sp::ordered_metadata")
def _mma_sp(ctx: CompileContext, ins: ir.Instruction):
    from .matrix_sparse import build           # (§9.7.14.6; imports this module's helpers)
    return build(ctx, ins)
