"""The warp-as-SIMD lowering's arithmetic, logic, comparisons, moves and shuffles: each PTX
instruction once for the warp's 32 lanes as ``<32 x T>`` LLVM values, written back under the
lanes' mask.  The forms here are exactly those ``accept.refusal`` lets through; their results are
the scalar lifter's (``lift.semantics``), bit for bit: integer wrap-around, shift clamping, f32
NaN results as 0x7fffffff (PTX ISA §9.7.3), shfl as the interpreter's ``interp.ops.warp._shfl``."""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...lift.function import I1, I32, I64
from . import vec as V

_INT_CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
            "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_UNSIGNED_CMP = {"lo", "ls", "hi", "hs"}
# PTX's ordered comparisons are false on NaN; `ne` included (§9.7.3.1's setp table).
_FLOAT_CMP = {"eq": (True, "=="), "ne": (True, "!="), "lt": (True, "<"), "le": (True, "<="),
              "gt": (True, ">"), "ge": (True, ">="), "equ": (False, "=="), "neu": (False, "!="),
              "ltu": (False, "<"), "leu": (False, "<="), "gtu": (False, ">"), "geu": (False, ">="),
              "num": (True, "ord"), "nan": (False, "uno")}


def _canon_nan(b: ir.IRBuilder, r: ir.Value) -> ir.Value:
    """An f32 NaN result becomes 0x7fffffff (on the bits: a float select may be folded away)."""
    raw = b.bitcast(r, V.vt(ir.IntType(32)))
    nan = b.fcmp_unordered("uno", r, r)
    return b.bitcast(b.select(nan, V.const(ir.IntType(32), 0x7FFFFFFF), raw), r.type)


def _wide(t: ScalarType) -> ScalarType:
    return ScalarType(f"{t.kind}{2 * t.bits}")


def lower_alu(S, ins: ptx.Instruction, mask: ir.Value) -> None:
    """Arithmetic, logic, moves, comparisons (``accept`` has checked the form)."""
    b, op, t = S.b, ins.opcode, ins.types[0] if ins.types else None
    ops = ins.operands
    rd = lambda i, ty=t: S.read(ops[i], ty)
    if op in ("mov", "cvta"):
        if op == "cvta":
            return S.write(ops[0], t, S.cvta(rd(1), ins), mask)
        return S.write(ops[0], t, rd(1), mask)
    if t.kind == "f":
        return _float(S, ins, mask)
    if op in ("add", "sub"):
        return S.write(ops[0], t, (b.add if op == "add" else b.sub)(rd(1), rd(2)), mask)
    if op in ("mul", "mad"):
        mode = ins.mod("hilo") or ins.mod("wide") or "lo"
        x, y = rd(1), rd(2)
        wt = t
        if mode == "wide":
            wt = _wide(t)
            x, y = (V.resize(b, v, wt.bits, t.kind == "s") for v in (x, y))
        r = b.mul(x, y)
        if op == "mad":
            r = b.add(r, rd(3, wt))
        return S.write(ops[0], wt, r, mask)
    if op in ("and", "or", "xor"):
        return S.write(ops[0], t, getattr(b, op + "_" if op in ("and", "or") else op)(rd(1), rd(2)), mask)
    if op in ("min", "max"):
        x, y = rd(1), rd(2)
        lt = (b.icmp_signed if t.kind == "s" else b.icmp_unsigned)("<", x, y)
        return S.write(ops[0], t, b.select(lt, x, y) if op == "min" else b.select(lt, y, x), mask)
    if op == "not":
        return S.write(ops[0], t, b.not_(rd(1)), mask)
    if op in ("shl", "shr"):
        return S.write(ops[0], t, _shift(S, ins, rd(1), rd(2, ScalarType.U32)), mask)
    if op == "selp":
        return S.write(ops[0], t, b.select(S.read(ops[3], ScalarType.PRED), rd(1), rd(2)), mask)
    if op == "setp":
        cmp = ins.mod("cmp_int") or ins.mod("cmp_bit")
        signed = t.kind == "s" and cmp not in _UNSIGNED_CMP
        r = (b.icmp_signed if signed else b.icmp_unsigned)(_INT_CMP[cmp], rd(1), rd(2))
        return S.write(ops[0], ScalarType.PRED, r, mask)
    if op == "cvt":
        dt, st = ins.types
        v = V.resize(b, S.read(ops[1], st), max(dt.bits, 8), st.kind == "s")
        return S.write(ops[0], dt, v, mask)
    raise S.unsupported(ins, "has no warp-SIMD lowering (a ptxvm bug: accept let it through)")


def _shift(S, ins, x: ir.Value, amount: ir.Value) -> ir.Value:
    """shl/shr: an amount past the width gives 0 (shl, shr.u) or all sign bits (shr.s)."""
    b = S.b
    width = x.type.element.width
    big = b.icmp_unsigned(">=", amount, V.const(I32, width))
    amt = V.resize(b, b.select(big, V.const(I32, width - 1), amount), width, False)
    et = x.type.element
    if ins.opcode == "shr" and ins.types[0].kind == "s":
        return b.ashr(x, amt)
    r = b.shl(x, amt) if ins.opcode == "shl" else b.lshr(x, amt)
    return b.select(big, V.const(et, 0), r)


def _float(S, ins: ptx.Instruction, mask: ir.Value) -> None:
    b, op, t = S.b, ins.opcode, ins.types[0]
    ops = ins.operands
    srcs = [S.read(o, t) for o in ops[1:]] if op != "setp" else []
    if op == "setp":
        ordered, cmp = _FLOAT_CMP[ins.mod("cmp_float")]
        r = (b.fcmp_ordered if ordered else b.fcmp_unordered)(cmp, S.read(ops[1], t), S.read(ops[2], t))
        return S.write(ops[0], ScalarType.PRED, r, mask)
    if op == "add":
        r = b.fadd(*srcs)
    elif op == "sub":
        r = b.fsub(*srcs)
    elif op == "mul":
        r = b.fmul(*srcs)
    else:                                            # fma.rn.f32
        r = V.fma(b, *srcs)
    S.write(ops[0], t, _canon_nan(b, r), mask)


def lower_shfl(S, ins: ptx.Instruction, mask: ir.Value) -> None:
    """shfl.sync.{up,down,bfly,idx}.b32 as the interpreter computes it: the lanes of ``mask`` take
    part; a source lane out of the segment's range, or not taking part, gives the lane's own
    value; the predicate is the in-range test."""
    b = S.b
    mode = next(m for m in ins.modifiers if m in ("up", "down", "bfly", "idx"))
    d = ins.operands[0]
    t = ins.types[0]
    val = S.read(ins.operands[1], t)
    bb = b.and_(S.read(ins.operands[2], ScalarType.U32), V.const(I32, 0x1F))
    cc = S.read(ins.operands[3], ScalarType.U32)
    lane = V.lanes()
    clamp = b.and_(cc, V.const(I32, 0x1F))
    seg = b.and_(b.lshr(cc, V.const(I32, 8)), V.const(I32, 0x1F))
    nseg = b.xor(seg, V.const(I32, -1))
    max_lane = b.or_(b.and_(lane, seg), b.and_(clamp, nseg))
    if mode == "up":
        j = b.sub(lane, bb)
        ok = b.icmp_signed(">=", j, max_lane)
    else:
        if mode == "down":
            j = b.add(lane, bb)
        elif mode == "bfly":
            j = b.xor(lane, bb)
        else:
            j = b.or_(b.and_(lane, seg), b.and_(bb, nseg))
        ok = b.icmp_signed("<=", j, max_lane)
    j = b.select(ok, j, lane)
    inside = b.icmp_unsigned("<", j, V.const(I32, V.WARP))
    jc = b.select(inside, j, lane)
    present = V.permute(b, mask, jc)
    valid = b.and_(b.and_(ok, inside), present)
    raw = val if not isinstance(val.type.element, ir.FloatType) else b.bitcast(val, V.vt(I32))
    out = b.select(valid, V.permute(b, raw, jc), raw)
    if isinstance(d, ptx.Pair):
        S.write(d.first, ScalarType.B32, out, mask)
        S.write(d.second, ScalarType.PRED, ok, mask)
    else:
        S.write(d, ScalarType.B32, out, mask)


__all__ = ["lower_alu", "lower_shfl", "I1", "I64"]
