"""PTX warp-level mma / wmma.mma on AMD matrix cores (a mixin of AmdgpuHooks): MFMA on CDNA
(gfx908, gfx90a, gfx942), WMMA on RDNA3 (gfx1100), by the target's ``matrix_units``
(isa/targets/*.toml, the units themselves in isa/matrix_units.toml).

``matrix_plan`` says where each operand element of each instruction comes from; here every
such element is fetched from its lane with ``ds_bpermute`` inside the PTX warp's 32 lanes (a
wave64 half: the address is offset by the half's first lane), the per-lane source lane,
register choice and element shift coming from 32-bit constants indexed by the lane (bit
planes: no dynamic register indexing, no scratch). Accumulators: C is brought into the
instruction's layout the same way (float units), the instructions are chained over K, and
the results go back to the PTX D layout by a last round of permutes.

Numerics (docs/tensor-cores.md): the products are exact for every unit listed; the order and
rounding of the float sum are the hardware's. Integer units start from zero (the products of
a warp's K never overflow i32) and C is added afterwards in the PTX lane, wrapping or
saturating (.satfinite) exactly as the ISA says. An f16 C or D goes through the f32
accumulator (one rounding at the end). Anything no unit computes exactly (f64, u8 on CDNA,
fp8, b1, sub-byte) keeps the shared lowering.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..ir import nodes as ptx
from ..ir.types import ScalarType
from ..lift.function import FunctionLowering
from ..lift.ops.matrix_frag import MmaOperands, full_warp_check, pack_regs, reg_type
from .llvm_ext import I1, I16, I32, I64, call
from .matrix_plan import NONE, Plan, Unit, choose, plan

FLOAT, HALF = ir.FloatType(), ir.HalfType()
_ALL = 0xFFFFFFFF


class _Lanes:
    """Per-lane constants and ds_bpermute fetches inside one PTX warp, for one instruction."""

    def __init__(self, b: ir.IRBuilder, lane: ir.Value, base: ir.Value) -> None:
        self.b, self.lane, self.base = b, lane, base
        self._tables: dict[tuple[int, ...], ir.Value] = {}
        self._moves: dict[tuple[int, tuple[int, ...]], ir.Value] = {}

    def table(self, values) -> ir.Value:
        """i32: ``values[lane]`` for this lane, from one 32-bit constant per bit."""
        vals = tuple(int(v) for v in values)
        if len(set(vals)) == 1:
            return I32(vals[0])
        if vals == tuple(range(32)):
            return self.lane
        if vals not in self._tables:
            b, acc = self.b, None
            for bit in range(max(vals).bit_length()):
                plane = sum(((v >> bit) & 1) << lane for lane, v in enumerate(vals))
                if plane == 0:
                    continue
                term = b.and_(b.lshr(I32(plane), self.lane), I32(1))
                term = b.shl(term, I32(bit)) if bit else term
                acc = term if acc is None else b.or_(acc, term)
            self._tables[vals] = acc
        return self._tables[vals]

    def predicate(self, mask: np.ndarray) -> ir.Value:
        """i1: ``mask[lane]``."""
        bits = sum(1 << lane for lane in range(32) if mask[lane])
        if bits in (0, _ALL):
            return I1(bits != 0)
        return self.b.trunc(self.table(mask.astype(np.int64)), I1)

    def move(self, value: ir.Value, sources: np.ndarray) -> ir.Value:
        """i32: ``value`` as lane ``sources[lane]`` of this warp holds it."""
        src = tuple(int(s) for s in sources)
        if src == tuple(range(32)):
            return value
        key = (id(value), src)
        if key not in self._moves:
            b = self.b
            addr = b.shl(b.or_(self.base, self.table(src)), I32(2))    # ds_bpermute takes byte addresses
            self._moves[key] = call(b, "llvm.amdgcn.ds.bpermute", I32, [addr, value])
        return self._moves[key]

    def element(self, regs, src: np.ndarray, bits: int) -> ir.Value:
        """i32 (zero-extended): the element ``src[lane]`` = (lane, register, element) names,
        0 where its lane is NONE; ``regs(r)`` is this lane's register r (i32)."""
        b = self.b
        live = src[:, 0] != NONE
        if not live.any():
            return I32(0)
        mine = np.arange(32)
        val = None
        for r in sorted(set(int(x) for x in src[live, 1])):
            sel = live & (src[:, 1] == r)
            v = self.move(regs(r), np.where(sel, src[:, 0], mine))
            val = v if val is None else b.select(self.predicate(sel), v, val)
        if bits < 32:
            val = b.and_(b.lshr(val, self.table(np.where(live, src[:, 2] * bits, 0))), I32((1 << bits) - 1))
        if not live.all():
            val = b.select(self.predicate(live), val, I32(0))
        return val


def _operand(lanes: _Lanes, unit: Unit, regs, srcs: np.ndarray, elem: str) -> ir.Value:
    """The unit's A or B operand for this lane: ``srcs`` [32, count, 3] from the PTX fragment."""
    b = lanes.b
    count = srcs.shape[1]
    if unit.operand in ("s8", "i8"):
        words = []
        for w in range(count // 4):
            acc = None
            for j in range(4):
                v = lanes.element(regs, srcs[:, 4 * w + j], 8)
                v = b.shl(v, I32(8 * j)) if j else v
                acc = v if acc is None else b.or_(acc, v)
            words.append(acc)
        return words[0] if len(words) == 1 else _vector(b, I32, words)
    if unit.operand == "f32":
        vals = [lanes.element(regs, srcs[:, e], 32) for e in range(count)]
        if elem == "tf32":           # a .tf32 operand is its 19 high bits (PTX ISA §9.7.14.5.14)
            vals = [b.and_(v, I32(0xFFFFE000)) for v in vals]
        vals = [b.bitcast(v, FLOAT) for v in vals]
        return vals[0] if count == 1 else _vector(b, FLOAT, vals)
    halves = [b.trunc(lanes.element(regs, srcs[:, e], 16), I16) for e in range(count)]
    vec = _vector(b, I16, halves)
    return b.bitcast(vec, ir.VectorType(HALF, count)) if unit.operand == "f16" else vec


def _vector(b: ir.IRBuilder, ty: ir.Type, values: list[ir.Value]) -> ir.Value:
    vec = ir.Constant(ir.VectorType(ty, len(values)), None)
    for i, v in enumerate(values):
        vec = b.insert_element(vec, v, I32(i))
    return vec


def _accumulator(lanes: _Lanes, unit: Unit, p: Plan, group: int, regs, ctype: str) -> ir.Value:
    b, count = lanes.b, unit.count("d")
    if unit.acc == "s32":            # integers: C is added in the PTX lane afterwards
        return ir.Constant(ir.VectorType(I32, count), [0] * count)
    vals = []
    for e in range(count):
        if ctype == "f16":
            h = b.bitcast(b.trunc(lanes.element(regs, p.c[group, :, e], 16), I16), HALF)
            vals.append(b.fpext(h, FLOAT))
        else:
            vals.append(b.bitcast(lanes.element(regs, p.c[group, :, e], 32), FLOAT))
    return _vector(b, FLOAT, vals)


def _instruction(b: ir.IRBuilder, unit: Unit, a: ir.Value, bb: ir.Value, acc: ir.Value, types) -> ir.Value:
    if unit.call == "mfma":
        args = [a, bb, acc, I32(0), I32(0), I32(0)]
    elif unit.call == "wmma":
        args = [a, bb, acc]
    else:                            # wmma_iu8: the signedness of A and B, then the clamp bit
        args = [I1(types[1] == "s8"), a, I1(types[2] == "s8"), bb, acc, I1(0)]
    return call(b, unit.intrinsic, acc.type, args)


class MatrixHooks:
    """``TargetHooks.matrix_mma`` for AMD targets (the target's matrix units, when one fits)."""

    target: object

    def matrix_mma(self, fl: FunctionLowering, ins: ptx.Instruction, mma: MmaOperands) -> bool:
        unit = choose(self.target.matrix_units, mma.types)
        if unit is None:
            return False
        b = fl.b
        full_warp_check(fl, ins, self.warp_ballot(fl, I1(1)))       # the ISA's full-warp rule
        p = plan(unit.name, mma.op, mma.shape, mma.types)
        dtype, atype, btype, ctype = mma.types
        fa, fb, fc, fd = mma.frags
        ra, rb, rc = ([fl.read(r, ScalarType.B32) for r in regs] for regs in mma.regs[:3])
        lanes = _Lanes(b, self.lane_in_warp(fl), self.warp_base(fl))
        results = []
        for g in range(p.groups):
            acc = _accumulator(lanes, unit, p, g, rc.__getitem__, ctype)
            for s in range(p.steps):
                a = _operand(lanes, unit, ra.__getitem__, p.a[g, s], atype)
                bv = _operand(lanes, unit, rb.__getitem__, p.b[g, s], btype)
                acc = _instruction(b, unit, a, bv, acc, mma.types)
            results.append(b.bitcast(acc, ir.VectorType(I32, unit.count("d"))))
        count = unit.count("d")

        def result(r: int) -> ir.Value:
            return b.extract_element(results[r // count], I32(r % count))
        out = []
        for e in range(fd.elements):
            src = p.d[:, e].copy()
            src[:, 1] = src[:, 1] * count + src[:, 2]               # (group, element) -> one value
            src[:, 2] = 0
            out.append(self._finish(fl, lanes.element(result, src, 32), e, mma, rc))
        for r, v in zip(mma.regs[3], pack_regs(fl, fd, out)):
            fl.write(r, reg_type(fd), v)
        return True

    def _finish(self, fl: FunctionLowering, v: ir.Value, e: int, mma: MmaOperands, rc: list) -> ir.Value:
        """D element bits (i64) from the unit's result (i32 bits) in this PTX lane."""
        b = fl.b
        dtype = mma.types[0]
        if dtype == "s32":           # C + the exact sum of products: wraps, or clamps (.satfinite)
            c = rc[e]                # an s32 C lies as D does, one element per register
            if not mma.satfinite:
                return b.zext(b.add(c, v), I64)
            wide = b.add(b.sext(c, I64), b.sext(v, I64))
            wide = b.select(b.icmp_signed(">", wide, I64((1 << 31) - 1)), I64((1 << 31) - 1), wide)
            wide = b.select(b.icmp_signed("<", wide, I64(-(1 << 31))), I64(-(1 << 31)), wide)
            return b.and_(wide, I64(_ALL))
        if dtype == "f16":           # one RN rounding f32 -> f16, NaN canonical (as the shared lowering)
            f = b.bitcast(v, FLOAT)
            h = b.bitcast(b.fptrunc(f, HALF), I16)
            return b.zext(b.select(b.fcmp_unordered("uno", f, f), I16(0x7FFF), h), I64)
        f = b.bitcast(v, FLOAT)      # f32: NaN canonical, as every executor writes it
        return b.zext(b.select(b.fcmp_unordered("uno", f, f), I32(0x7FFFFFFF), v), I64)
