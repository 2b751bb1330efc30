"""What the lifter's warp-level matrix lowerings (ops.matrix) share: fragment registers as
element bits, the warp exchange of A and B, per-lane coordinate tables, element decoding.

A lane's (row, col) for each of its elements comes from ptxvm.machine.fragments (the layouts
the interpreter uses too) as a constant ``<32 x i32>`` vector per element, indexed by the lane
at run time (row in the high byte): no layout formula is written twice. A and B travel through
one warp exchange, 32-bit registers paired into the exchange's 64-bit slots; each lane then
copies the whole of A and B into local arrays and computes its own D elements from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from ...errors import PtxSemanticError
from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...machine import fragments as F
from ..function import I8, I16, I32, I64, FunctionLowering

FLOAT, HALF, DOUBLE = ir.FloatType(), ir.HalfType(), ir.DoubleType()
MAX_SLOTS = 16             # values one warp exchange publishes (the host JIT's record holds 16)


def bad(ins: ptx.Instruction, why: str) -> PtxSemanticError:
    """A fragment operand the ISA does not allow: the interpreter's located error, word for word."""
    s = ins.span
    return PtxSemanticError(f"`{ins.full_opcode}` {why}", filename=s.filename, line=s.line or None,
                            column=s.column or None)


def regs_of(fl: FunctionLowering, ins: ptx.Instruction, op: ptx.Operand, frag_regs: int, bits: int,
            what: str) -> tuple[ptx.Operand, ...]:
    """The fragment's registers, checked as the interpreter checks them (count and width)."""
    elems = op.elements if isinstance(op, ptx.Vector) else (op,)
    if len(elems) != frag_regs:
        raise bad(ins, f"takes {frag_regs} register{'s' if frag_regs > 1 else ''} for {what}, not {len(elems)}")
    for e in elems:
        hit = fl.register(e) if isinstance(e, ptx.Register) else None
        if hit is not None and hit[1].bits != bits:
            raise bad(ins, f"needs {bits}-bit registers for {what}; `{e}` is .{hit[1].value} (PTX ISA §9.7.14: "
                           f"fragments are vectors of {bits}-bit registers)")
    return elems


def reg_type(frag: F.Fragment) -> ScalarType:
    return ScalarType.B64 if frag.reg_bits == 64 else ScalarType.B32


def elements(fl: FunctionLowering, frag: F.Fragment, regs: list[ir.Value]) -> list[ir.Value]:
    """Register values -> element bits (i64 each), low element first."""
    b, out = fl.b, []
    mask = (1 << frag.elem_bits) - 1
    for r in regs:
        wide = b.zext(r, I64) if r.type.width < 64 else r
        for j in range(frag.per_reg):
            v = b.lshr(wide, I64(j * frag.elem_bits)) if j else wide
            out.append(b.and_(v, I64(mask)) if frag.elem_bits < 64 else v)
    return out


def pack_regs(fl: FunctionLowering, frag: F.Fragment, elems: list[ir.Value]) -> list[ir.Value]:
    """Element bits (i64) -> register values of the fragment's width."""
    b, out = fl.b, []
    rt = ir.IntType(frag.reg_bits)
    for r in range(frag.regs):
        acc = None
        for j in range(frag.per_reg):
            e = b.and_(elems[r * frag.per_reg + j], I64((1 << frag.elem_bits) - 1)) if frag.elem_bits < 64 \
                else elems[r * frag.per_reg + j]
            e = b.shl(e, I64(j * frag.elem_bits)) if j else e
            acc = e if acc is None else b.or_(acc, e)
        out.append(b.trunc(acc, rt) if rt.width < 64 else acc)
    return out


@dataclass(frozen=True)
class MmaOperands:
    """A checked `mma`/`wmma.mma` as a target's ``matrix_mma`` hook receives it."""

    op: str                                   # "mma" | "wmma"
    shape: str                                # "m16n8k16"
    types: tuple[str, str, str, str]          # (dtype, atype, btype, ctype)
    frags: tuple[F.Fragment, F.Fragment, F.Fragment, F.Fragment]       # a, b, c, d
    regs: tuple[tuple[ptx.Operand, ...], ...]                         # a, b, c, d registers
    satfinite: bool


# ------------------------------------------------------------------ per-lane tables

def coord_table(coords: np.ndarray) -> list[ir.Constant]:
    """[32, E, 2] (row, col) -> per element a <32 x i32> constant: row << 8 | col (32-bit
    elements: LLVM's gfx11 backend cannot select a dynamic extract from a vector of i16)."""
    vt = ir.VectorType(I32, 32)
    return [ir.Constant(vt, [int(coords[lane, e, 0]) << 8 | int(coords[lane, e, 1]) for lane in range(32)])
            for e in range(coords.shape[1])]


def lane_coord(b: ir.IRBuilder, table: ir.Constant, lane: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(row, col) as i64 for this lane, from a coord_table entry."""
    packed = b.zext(b.extract_element(table, lane), I64)
    return b.lshr(packed, I64(8)), b.and_(packed, I64(0xFF))


def owners(frag: F.Fragment) -> dict[tuple[int, int], tuple[int, int]]:
    """(row, col) -> (lane, element) of its first holder (copy 0 of duplicated wmma fragments)."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(32):
        for e in range(frag.elements):
            out.setdefault((int(frag.coords[lane, e, 0]), int(frag.coords[lane, e, 1])), (lane, e))
    return out


def needed_regs(frag: F.Fragment) -> int:
    """Registers per lane that hold copy 0 (the whole matrix once): the ones an mma reads."""
    used = {e for (_lane, e) in owners(frag).values()}
    return max(used) // frag.per_reg + 1


# ------------------------------------------------------------------ exchange of A and B

class Published:
    """Registers of several fragments through one warp exchange: 32-bit ones two per slot."""

    def __init__(self, fl: FunctionLowering, ins: ptx.Instruction, groups: list[tuple[F.Fragment, list]],
                 extra: list[ir.Value] = ()) -> None:
        b = fl.b
        self.where: list[list[tuple[int, int]]] = []       # per group, per register: (slot, shift)
        values: list[ir.Value] = list(extra)
        self.extra = len(values)
        pending: ir.Value | None = None
        for frag, regs in groups:
            places = []
            for r in regs:
                v = fl.read(r, reg_type(frag))
                if frag.reg_bits == 64:
                    places.append((len(values), 0))
                    values.append(v)
                elif pending is None:
                    pending = b.zext(v, I64)
                    places.append((len(values), 0))
                    values.append(pending)
                else:
                    values[-1] = b.or_(pending, b.shl(b.zext(v, I64), I64(32)))
                    places.append((len(values) - 1, 32))
                    pending = None
            self.where.append(places)
            pending = None                                   # groups start on a fresh slot
        if len(values) > MAX_SLOTS:
            raise fl.unsupported(ins, f"exchanges {len(values)} 64-bit values across the warp; this "
                                      f"lowering passes at most {MAX_SLOTS}")
        self.view = fl.hooks.warp_exchange(fl, ins, values)
        self._cache: dict[tuple[int, int], ir.Value] = {}

    def reg(self, b: ir.IRBuilder, group: int, lane: int, reg: int, bits: int) -> ir.Value:
        """Register ``reg`` of fragment group ``group`` as lane ``lane`` published it (i64)."""
        slot, shift = self.where[group][reg]
        key = (lane, slot)
        if key not in self._cache:
            self._cache[key] = self.view.value(b, I32(lane), slot)
        v = self._cache[key]
        v = b.lshr(v, I64(shift)) if shift else v
        return b.and_(v, I64(0xFFFFFFFF)) if bits == 32 else v

    def reg_of(self, b: ir.IRBuilder, group: int, lane: ir.Value, reg: int, bits: int) -> ir.Value:
        """The same for a lane known at run time (not cached)."""
        slot, shift = self.where[group][reg]
        v = self.view.value(b, lane, slot)
        v = b.lshr(v, I64(shift)) if shift else v
        return b.and_(v, I64(0xFFFFFFFF)) if bits == 32 else v

    def extra_value(self, b: ir.IRBuilder, lane: ir.Value, k: int) -> ir.Value:
        return self.view.value(b, lane, k)


def matrix_local(fl: FunctionLowering, pub: Published, group: int, frag: F.Fragment, name: str) -> ir.Value:
    """An array [rows * cols] holding the matrix the warp's fragments of ``group`` hold, one
    element per i16/i32/i64 (as narrow as the element: LLVM 22's gfx11 backend aborts on the
    i64 form of some of these); ``load_element`` reads it. Filled by an IR loop over the 32
    lanes (the IR stays small): each lane's published registers, each element stored at its
    (row, col) from a lane-indexed table; copies beyond the first go to a dummy slot."""
    b = fl.b
    size = frag.rows * frag.cols
    ty = ir.IntType(16 if frag.elem_bits <= 16 else 32 if frag.elem_bits <= 32 else 64)
    arr = b.bitcast(fl.alloca_bytes((size + 1) * ty.width // 8, ty.width // 8, name), ir.PointerType(ty))
    pos = np.full((32, frag.elements), size, dtype=np.int64)       # `size`: the dummy slot
    for (row, col), (lane, e) in owners(frag).items():
        pos[lane, e] = row * frag.cols + col
    mask = (1 << frag.elem_bits) - 1
    pre = b.block
    loop, done = fl.new_block(f"{name}_lanes"), fl.new_block(f"{name}_filled")
    b.branch(loop)
    b.position_at_end(loop)
    lane = b.phi(I32)
    lane.add_incoming(I32(0), pre)
    for r in range(needed_regs(frag)):
        reg = pub.reg_of(b, group, lane, r, frag.reg_bits)
        for j in range(frag.per_reg):
            e = r * frag.per_reg + j
            if (pos[:, e] == size).all():
                continue
            where = b.extract_element(ir.Constant(ir.VectorType(I32, 32), [int(x) for x in pos[:, e]]), lane)
            v = b.lshr(reg, I64(j * frag.elem_bits)) if j else reg
            v = b.and_(v, I64(mask)) if frag.elem_bits < 64 else v
            b.store(b.trunc(v, ty) if ty.width < 64 else v, b.gep(arr, [b.zext(where, I64)]))
    nxt = b.add(lane, I32(1))
    lane.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_unsigned("<", nxt, I32(32)), loop, done)
    b.position_at_end(done)
    return arr


def load_element(b: ir.IRBuilder, arr: ir.Value, index: ir.Value) -> ir.Value:
    """Element bits (i64) at ``index`` of a matrix_local array."""
    v = b.load(b.gep(arr, [index]))
    return b.zext(v, I64) if v.type.width < 64 else v


def full_warp_check(fl: FunctionLowering, ins: ptx.Instruction, mask: ir.Value) -> None:
    """Warp-collective (.sync.aligned): every lane must take part (PTX ISA §9.7.14: undefined
    otherwise); a partial warp traps."""
    b = fl.b
    bad, ok = fl.new_block("mma_partial"), fl.new_block("mma_full")
    b.cbranch(b.icmp_unsigned("!=", mask, I32(-1)), bad, ok)
    b.position_at_end(bad)
    fl.hooks.trap(fl, ins, ins.opcode)
    b.position_at_end(ok)


def uniform_check(fl: FunctionLowering, ins: ptx.Instruction, pub: Published, k: int, mine: ir.Value) -> None:
    """The value of exchange slot ``k`` must be lane 0's in every lane (an address, a stride)."""
    b = fl.b
    bad, ok = fl.new_block("mma_nonuniform"), fl.new_block("mma_uniform")
    b.cbranch(b.icmp_unsigned("!=", pub.extra_value(b, I32(0), k), mine), bad, ok)
    b.position_at_end(bad)
    fl.hooks.trap(fl, ins, ins.opcode)
    b.position_at_end(ok)


# ------------------------------------------------------------------ element values

def _e4m3_vector() -> ir.Constant:
    """The 256 e4m3 values as floats (bias 7, no infinities, S.1111.111 NaN; PTX ISA §5.2.5.1)."""
    vals = []
    for bits in range(256):
        e, m = (bits >> 3) & 0xF, bits & 7
        v = (m / 8.0) * 2.0 ** -6 if e == 0 else (1 + m / 8.0) * 2.0 ** (e - 7)
        v = -v if bits & 0x80 else v
        vals.append(float("nan") if bits & 0x7F == 0x7F else v)
    return ir.Constant(ir.VectorType(FLOAT, 256), vals)


def as_float(b: ir.IRBuilder, bits: ir.Value, elem: str) -> ir.Value:
    """Element bits (i64) -> its exact value as f32 (every tensor-core input type but f64 is
    exact in f32)."""
    if elem == "f16":
        return b.fpext(b.bitcast(b.trunc(bits, I16), HALF), FLOAT)
    if elem == "bf16":
        return b.bitcast(b.shl(b.trunc(bits, I32), I32(16)), FLOAT)
    if elem == "tf32":       # the 19 high bits, as the interpreter reads a .tf32 operand
        return b.bitcast(b.and_(b.trunc(bits, I32), I32(0xFFFFE000)), FLOAT)
    if elem == "f32":
        return b.bitcast(b.trunc(bits, I32), FLOAT)
    if elem == "e5m2":
        return b.fpext(b.bitcast(b.shl(b.trunc(bits, I16), I16(8)), HALF), FLOAT)
    if elem == "e4m3":
        return b.extract_element(_e4m3_vector(), b.trunc(bits, I32))
    raise ValueError(elem)


def as_half_bits(b: ir.IRBuilder, bits: ir.Value, elem: str) -> ir.Value:
    """Element bits -> f16 bits (i16) of the same value (f16, e4m3, e5m2: exact in f16)."""
    if elem == "f16":
        return b.trunc(bits, I16)
    if elem == "e5m2":
        return b.shl(b.trunc(bits, I16), I16(8))
    return b.bitcast(b.fptrunc(as_float(b, bits, elem), HALF), I16)     # e4m3: exact


def as_int(b: ir.IRBuilder, bits: ir.Value, elem: str) -> ir.Value:
    width = {"s32": 32, "s8": 8, "u8": 8, "s4": 4, "u4": 4, "b1": 1}[elem]
    if not elem.startswith("s"):
        return bits
    shift = I64(64 - width)
    return b.ashr(b.shl(bits, shift), shift)


__all__ = ["MmaOperands", "bad", "regs_of", "reg_type", "elements", "pack_regs", "coord_table", "lane_coord", "owners", "needed_regs",
           "Published", "matrix_local", "load_element", "full_warp_check", "uniform_check", "as_float", "as_half_bits", "as_int",
           "FLOAT", "HALF", "DOUBLE", "I8"]
