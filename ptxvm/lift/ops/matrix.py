"""Warp-level matrix instructions (PTX ISA 9.0 §9.7.14) on LLVM targets: wmma.load/store/mma
(§9.7.14.4), mma.sync (§9.7.14.5.14), ldmatrix, stmatrix, movmatrix (§9.7.14.5.15-17).

The same semantics as the interpreter's interp/ops/matrix.py, from the same layouts
(ptxvm.machine.fragments) and the same accumulation rule per type (isa/instructions.toml):
products exact, the sum in the accumulator type in k order, one rounding per step. A and B
cross the warp in one exchange (ops.matrix_frag); each lane computes its own D elements (where
the lanes run in turn, the host JIT, one lane computes the warp's: ops.matrix_warp). A
partial warp, or a wmma address or stride that differs between lanes, traps (the ISA leaves
both undefined); so does an ldmatrix/stmatrix row address that is not 16-byte aligned.
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...machine import fragments as F
from ..function import I16, I32, I64, FunctionLowering
from . import lowers
from .matrix_frag import (DOUBLE, HALF, MmaOperands, Published, as_float, as_half_bits, as_int, coord_table,
                          elements, full_warp_check, lane_coord, load_element, matrix_local, needed_regs, pack_regs,
                          reg_type, regs_of, uniform_check)
from .matrix_warp import lower_once
from .memory import space_of


def _mma_types(fl: FunctionLowering, ins: ptx.Instruction, wmma: bool) -> tuple[str, str, str, str]:
    """(dtype, atype, btype, ctype) as written (machine.fragments.operand_types)."""
    types = F.operand_types([t.value for t in ins.types], ins.mod("mma_sub"), wmma)
    if types is None:
        raise fl.unsupported(ins, "needs the types .dtype.atype.btype.ctype (PTX ISA §9.7.14)")
    return types


def mma_layouts(ins: ptx.Instruction) -> tuple[str, str]:
    """The .alayout.blayout as written."""
    parts = (ins.mod("layout") or "row.col").split(".")
    return (parts[0], parts[-1])


def _check_mma(fl: FunctionLowering, ins: ptx.Instruction, shape: str, types) -> None:
    if ins.mod("mma_kind") is not None or ins.mod("block_scale") is not None:
        raise fl.unsupported(ins, "(.kind and block-scaled forms, sm_120) is not executable yet")
    if len(ins.operands) != 4:
        raise fl.unsupported(ins, "with more than four operands is not executable yet")
    try:
        F.mma_sm(shape, types[1], types[2], types[3], types[0], mma_layouts(ins))
    except F.FragmentError as e:
        raise fl.unsupported(ins, str(e)) from None


def _k_loop(fl: FunctionLowering, count: int, init: ir.Value, step) -> ir.Value:
    """acc = init; for k in 0..count-1: acc = step(k (i64), acc); an IR loop."""
    b = fl.b
    pre = b.block
    loop, done = fl.new_block("mma_k"), fl.new_block("mma_k_done")
    b.branch(loop)
    b.position_at_end(loop)
    k = b.phi(I64)
    acc = b.phi(init.type)
    k.add_incoming(I64(0), pre)
    acc.add_incoming(init, pre)
    new = step(k, acc)
    nxt = b.add(k, I64(1))
    k.add_incoming(nxt, b.block)
    acc.add_incoming(new, b.block)
    b.cbranch(b.icmp_unsigned("<", nxt, I64(count)), loop, done)
    b.position_at_end(done)
    return new


def _accumulate(fl: FunctionLowering, ins: ptx.Instruction, types, operand, c_bits: ir.Value, k_count: int):
    """D element bits (i64) = C + sum_k A[row,k] B[k,col], by the type's rule."""
    from ..semantics import fp, half
    dtype, atype, btype, ctype = types
    b = fl.b
    if atype == "b1":
        op = ins.mod("mma_bitop")
        if op is None or ins.mod("popc") is None:
            raise fl.unsupported(ins, "with .b1 operands needs .xor.popc or .and.popc (PTX ISA §9.7.14.5.14)")
        f = b.xor if op == "xor" else b.and_
        total = _k_loop(fl, k_count, as_int(b, c_bits, "s32"), lambda k, acc: b.add(acc, f(*operand(k))))
        return b.and_(total, I64(0xFFFFFFFF))
    if atype in ("s8", "u8", "s4", "u4"):
        def step(k, acc):
            x, y = operand(k)
            return b.add(acc, b.mul(as_int(b, x, atype), as_int(b, y, btype)))
        total = _k_loop(fl, k_count, as_int(b, c_bits, "s32"), step)
        if ins.mod("satfinite") is not None:
            total = b.select(b.icmp_signed(">", total, I64((1 << 31) - 1)), I64((1 << 31) - 1), total)
            total = b.select(b.icmp_signed("<", total, I64(-(1 << 31))), I64(-(1 << 31)), total)
        return b.and_(total, I64(0xFFFFFFFF))
    if ins.mod("satfinite") is not None:
        raise fl.unsupported(ins, ".satfinite with floating-point operands is not executable yet")
    rnd = ins.mod("rnd") or "rn"
    if rnd != "rn" and dtype != "f64":
        raise fl.unsupported(ins, f"allows a rounding modifier only with .f64, not `.{rnd}`")
    if dtype == "f64":
        def step64(k, acc):
            x, y = operand(k)
            return fp.ffma(b, b.bitcast(x, DOUBLE), b.bitcast(y, DOUBLE), acc, rnd=rnd)
        return b.bitcast(_k_loop(fl, k_count, b.bitcast(c_bits, DOUBLE), step64), I64)
    if "f32" in (ctype, dtype):
        init = as_float(b, c_bits, ctype)

        def step32(k, acc):
            x, y = operand(k)
            return fp.ffma(b, as_float(b, x, atype), as_float(b, y, btype), acc)
        acc = _k_loop(fl, k_count, init, step32)
        if dtype == "f32":
            return b.zext(b.bitcast(acc, I32), I64)
        h = b.bitcast(b.fptrunc(acc, HALF), I16)              # one RN rounding f32 -> f16
        nan = b.fcmp_unordered("uno", acc, acc)
        return b.zext(b.select(nan, I16(0x7FFF), h), I64)

    def step16(k, acc):
        x, y = operand(k)
        return half.hfma(b, as_half_bits(b, x, atype), as_half_bits(b, y, btype), acc, type="f16")
    return b.zext(_k_loop(fl, k_count, b.trunc(c_bits, I16), step16), I64)


def _lower_mma(fl: FunctionLowering, ins: ptx.Instruction, op: str, shape: str, types,
               layouts: tuple[str | None, str | None] = (None, None)) -> None:
    dtype, atype, btype, ctype = types
    try:
        fa, fb = F.fragment(op, shape, "a", atype, layouts[0]), F.fragment(op, shape, "b", btype, layouts[1])
        fc, fd = F.fragment(op, shape, "c", ctype), F.fragment(op, shape, "d", dtype)
    except F.FragmentError as e:
        raise fl.unsupported(ins, str(e)) from None
    if op == "wmma" and atype != btype:
        raise fl.unsupported(ins, f"takes A and B of one type, not `.{atype}` and `.{btype}`")
    rd = regs_of(fl, ins, ins.operands[0], fd.regs, fd.reg_bits, "the D fragment")
    ra = regs_of(fl, ins, ins.operands[1], fa.regs, fa.reg_bits, "the A fragment")
    rb = regs_of(fl, ins, ins.operands[2], fb.regs, fb.reg_bits, "the B fragment")
    rc = regs_of(fl, ins, ins.operands[3], fc.regs, fc.reg_bits, "the C fragment")
    # What the shared lowering refuses (float .satfinite, a .rnd) it still refuses by name.
    sat = ins.mod("satfinite") is not None
    # Matrix units take the one-product forms (not the four quad-pair products of m8n8k4 .f16).
    plain = fd.blocks == 1
    if plain and (not sat or atype in ("s8", "u8", "s4", "u4")) and (ins.mod("rnd") or "rn") == "rn":
        mma = MmaOperands(op, shape, tuple(types), (fa, fb, fc, fd), (ra, rb, rc, rd), sat)
        if fl.hooks.matrix_mma(fl, ins, mma):        # the target's matrix instructions
            return
    if lower_once(fl, ins, types, (fa, fb, fc, fd), (ra, rb, rc, rd), _accumulate):
        return                                       # one lane computes the warp's D (host JIT)
    # C crosses the warp too where its layout is not D's (m8n8k4: an f16 C with an f32 D).
    same_c = (fc.coords == fd.coords).all()
    groups = [(fa, list(ra[:needed_regs(fa)])), (fb, list(rb[:needed_regs(fb)]))]
    pub = Published(fl, ins, groups + ([] if same_c else [(fc, list(rc))]))
    full_warp_check(fl, ins, pub.view.mask)
    b = fl.b
    a_mat = matrix_local(fl, pub, 0, fa, "mma_a")
    b_mat = matrix_local(fl, pub, 1, fb, "mma_b")
    if same_c:
        c_vals = elements(fl, fc, [fl.read(r, reg_type(fc)) for r in rc])
    else:
        c_mat = matrix_local(fl, pub, 2, fc, "mma_c")
    k_count, n = fa.cols, fb.cols
    out = []
    for e, table in enumerate(coord_table(fd.coords)):
        row, col = lane_coord(b, table, pub.view.lane)

        def operand(k, row=row, col=col):
            return (load_element(b, a_mat, b.add(b.mul(row, I64(k_count)), k)),
                    load_element(b, b_mat, b.add(b.mul(k, I64(n)), col)))
        c_e = c_vals[e] if same_c else load_element(b, c_mat, b.add(b.mul(row, I64(fc.cols)), col))
        out.append(_accumulate(fl, ins, types, operand, c_e, k_count))
    for r, v in zip(rd, pack_regs(fl, fd, out)):
        fl.write(r, reg_type(fd), v)


@lowers("mma")
def _mma(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    shape = ins.mod("mma_shape")
    types = _mma_types(fl, ins, False)
    _check_mma(fl, ins, shape, types)
    _lower_mma(fl, ins, "mma", shape, types, mma_layouts(ins))


@lowers("wmma.mma")
def _wmma_mma(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    _lower_mma(fl, ins, "wmma", ins.mod("wmma_shape"), _mma_types(fl, ins, True))


# ------------------------------------------------------------------ wmma.load / wmma.store

def _wmma_frag(fl: FunctionLowering, ins: ptx.Instruction, role: str) -> F.Fragment:
    elem = ins.types[0].value if ins.types else ins.mod("mma_sub")
    try:
        return F.fragment("wmma", ins.mod("wmma_shape"), role, elem)
    except F.FragmentError as e:
        raise fl.unsupported(ins, str(e)) from None


def _wmma_access(fl: FunctionLowering, ins: ptx.Instruction, frag: F.Fragment, a_op: ptx.Address,
                 s_op, each) -> None:
    """Check the warp and the uniform address and stride, then ``each(e, byte address, bit
    offset or None)`` for every element of this lane."""
    space = space_of(ins)
    b = fl.b
    stride_of = (lambda: b.zext(fl.read(s_op, ScalarType.U32), I64)) if s_op is not None else None
    pub = Published(fl, ins, [], extra=[fl.address(a_op, space)] + ([stride_of()] if stride_of else []))
    full_warp_check(fl, ins, pub.view.mask)
    base = fl.address(a_op, space)                   # read again: values do not cross the exchange
    uniform_check(fl, ins, pub, 0, base)
    row_major = ins.mod("layout") == "row"
    if stride_of is not None:
        ld = stride_of()
        uniform_check(fl, ins, pub, 1, ld)
    else:
        ld = I64(frag.cols if row_major else frag.rows)
    bits = frag.elem_bits
    for e, table in enumerate(coord_table(frag.coords)):
        row, col = lane_coord(b, table, pub.view.lane)
        lin = b.add(b.mul(row, ld), col) if row_major else b.add(b.mul(col, ld), row)
        if bits >= 8:
            each(e, space, b.add(base, b.mul(lin, I64(bits // 8))), None)
        else:
            bit = b.add(b.mul(base, I64(8)), b.mul(lin, I64(bits)))
            each(e, space, b.lshr(bit, I64(3)), b.and_(bit, I64(7)))


@lowers("wmma.load")
def _wmma_load(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    frag = _wmma_frag(fl, ins, ins.mod("frag_abc"))
    rd = regs_of(fl, ins, ins.operands[0], frag.regs, frag.reg_bits, f"the {ins.mod('frag_abc').upper()} fragment")
    b = fl.b
    out: list[ir.Value] = [None] * frag.elements
    width = max(frag.elem_bits // 8, 1)

    def load(e, space, addr, bit):
        p = fl.hooks.access(fl, space, addr, width, ins, write=False)
        v = b.zext(b.load(b.bitcast(p, ir.PointerType(ir.IntType(width * 8))), align=1), I64)
        if bit is not None:
            v = b.and_(b.lshr(v, bit), I64((1 << frag.elem_bits) - 1))
        out[e] = v
    _wmma_access(fl, ins, frag, ins.operands[1], ins.operands[2] if len(ins.operands) > 2 else None, load)
    for r, v in zip(rd, pack_regs(fl, frag, out)):
        fl.write(r, reg_type(frag), v)


@lowers("wmma.store")
def _wmma_store(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    frag = _wmma_frag(fl, ins, "d")
    rs = regs_of(fl, ins, ins.operands[1], frag.regs, frag.reg_bits, "the D fragment")
    if frag.elem_bits < 8:
        raise fl.unsupported(ins, "stores sub-byte elements, which wmma.store does not have")
    b = fl.b
    vals: list[ir.Value] = []
    width = frag.elem_bits // 8

    def store(e, space, addr, _bit):
        if not vals:                                   # registers read after the exchange
            vals.extend(elements(fl, frag, [fl.read(r, reg_type(frag)) for r in rs]))
        p = fl.hooks.access(fl, space, addr, width, ins, write=True)
        b.store(b.trunc(vals[e], ir.IntType(width * 8)) if width < 8 else vals[e],
                b.bitcast(p, ir.PointerType(ir.IntType(width * 8))), align=1)
    _wmma_access(fl, ins, frag, ins.operands[0], ins.operands[2] if len(ins.operands) > 2 else None, store)


# ------------------------------------------------------------------ ldmatrix / stmatrix / movmatrix

def _ldm_form(fl: FunctionLowering, ins: ptx.Instruction) -> tuple[int, bool, str]:
    if ins.form != "b16" or ins.types[0] is not ScalarType.B16 or ins.mod("ldm_shape") != "m8n8":
        raise fl.unsupported(ins, "(the .b8 and sub-byte forms of sm_100) is not executable yet")
    space = space_of(ins)
    if space not in ("shared", "generic"):
        raise fl.unsupported(ins, f"reads and writes .shared only, not .{space} (PTX ISA §9.7.14.5.15)")
    return F.LDMATRIX_COUNT[ins.mod("ldm_num")], ins.mod("trans") is not None, space


def _rows(fl: FunctionLowering, ins: ptx.Instruction, a_op: ptx.Address, count: int, trans: bool, space: str,
          each) -> None:
    """After the exchange of the row addresses: ``each(i, j, element address)`` for element j of
    this lane's register i (matrix i), 16-byte row alignment checked."""
    b = fl.b
    pub = Published(fl, ins, [], extra=[fl.address(a_op, space)])
    full_warp_check(fl, ins, pub.view.mask)
    # The lanes that give row addresses (0 .. 8 * count - 1) check their own: the first lane
    # with a bad one is the one that traps, as in the interpreter.
    mine = fl.address(a_op, space)
    wrong = b.icmp_unsigned("!=", b.and_(mine, I64(15)), I64(0))
    if space == "generic":                   # a generic row address must lie in .shared (§9.7.14.5.15)
        wrong = b.or_(wrong, b.not_(fl.hooks.isspacep(fl, mine, "shared")))
    bad, ok = fl.new_block("ldm_bad_row"), fl.new_block("ldm_rows")
    b.cbranch(b.and_(wrong, b.icmp_unsigned("<", pub.view.lane, I32(8 * count))), bad, ok)
    b.position_at_end(bad)
    fl.hooks.trap(fl, ins, ins.opcode)
    b.position_at_end(ok)
    row_lanes = F.ldmatrix_row_lanes(f"x{count}")
    tables = coord_table(F.ldmatrix_coords(trans))
    for i in range(count):
        lanes = ir.Constant(ir.VectorType(I32, 8), [int(x) for x in row_lanes[i]])
        for j in range(2):
            row, col = lane_coord(b, tables[j], pub.view.lane)
            row_addr = pub.extra_value(b, b.extract_element(lanes, b.trunc(row, I32)), 0)
            each(i, j, b.add(row_addr, b.mul(col, I64(2))))


@lowers("ldmatrix")
def _ldmatrix(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    count, trans, space = _ldm_form(fl, ins)
    rd = regs_of(fl, ins, ins.operands[0], count, 32, "the destination")
    b = fl.b
    got: dict[tuple[int, int], ir.Value] = {}

    def load(i, j, addr):
        p = fl.hooks.access(fl, space, addr, 2, ins, write=False)
        got[i, j] = b.zext(b.load(b.bitcast(p, ir.PointerType(I16)), align=1), I32)
    _rows(fl, ins, ins.operands[1], count, trans, space, load)
    for i, r in enumerate(rd):
        fl.write(r, ScalarType.B32, b.or_(got[i, 0], b.shl(got[i, 1], I32(16))))


@lowers("stmatrix")
def _stmatrix(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    count, trans, space = _ldm_form(fl, ins)
    rs = regs_of(fl, ins, ins.operands[1], count, 32, "the source")
    b = fl.b

    def store(i, j, addr):
        v = fl.read(rs[i], ScalarType.B32)
        half_ = b.trunc(b.lshr(v, I32(16)) if j else v, I16)
        p = fl.hooks.access(fl, space, addr, 2, ins, write=True)
        b.store(half_, b.bitcast(p, ir.PointerType(I16)), align=1)
    _rows(fl, ins, ins.operands[0], count, trans, space, store)


@lowers("movmatrix")
def _movmatrix(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if ins.mod("ldm_shape") != "m8n8":
        raise fl.unsupported(ins, "takes the shape .m8n8 only (PTX ISA §9.7.14.5.17)")
    (dst,) = regs_of(fl, ins, ins.operands[0], 1, 32, "the destination")
    (src,) = regs_of(fl, ins, ins.operands[1], 1, 32, "the source")
    b = fl.b
    pub = Published(fl, ins, [], extra=[b.zext(fl.read(src, ScalarType.B32), I64)])
    full_warp_check(fl, ins, pub.view.mask)
    plain = F.ldmatrix_coords(False)
    holder = [0] * 64                          # (row * 8 + col) -> lane << 8 | element
    for lane in range(32):
        for j in range(2):
            holder[int(plain[lane, j, 0]) * 8 + int(plain[lane, j, 1])] = lane << 8 | j
    holders = ir.Constant(ir.VectorType(I32, 64), holder)
    tables = coord_table(F.ldmatrix_coords(True))
    halves = []
    for j in range(2):
        row, col = lane_coord(b, tables[j], pub.view.lane)
        h = b.zext(b.extract_element(holders, b.trunc(b.add(b.mul(row, I64(8)), col), I32)), I32)
        v = pub.extra_value(b, b.lshr(h, I32(8)), 0)
        halves.append(b.and_(b.lshr(v, b.zext(b.mul(b.and_(h, I32(1)), I32(16)), I64)), I64(0xFFFF)))
    fl.write(dst, ScalarType.B32, b.trunc(b.or_(halves[0], b.shl(halves[1], I64(16))), I32))



@lowers("mma.sp", "mma.sp::ordered_metadata")
def _mma_sp(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    from .matrix_sparse import lower           # (§9.7.14.6; imports this module's helpers)
    lower(fl, ins)
