"""Integer and logic instructions (PTX ISA §9.7.1, §9.7.2, §9.7.8): operand plumbing only.

The semantics live in the emitters of ``ptxvm.lift.intops``; this module reads operands
with the types PTX gives each one, calls the emitter, and writes the results (carry-flag
instructions read and write the function's CC.CF register).
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...isa import typeset
from ..function import I1, FunctionLowering
from .. import intops as X
from . import lowers

_PACKED_HALF = tuple(t for t in typeset("half") if t.endswith("x2"))     # f16x2 bf16x2

U32, S32, B32 = ScalarType.U32, ScalarType.S32, ScalarType.B32
X2 = (ScalarType.U16X2, ScalarType.S16X2)


def _t(ins: ptx.Instruction) -> ScalarType:
    return ins.types[0]


def _signed(t: ScalarType) -> bool:
    return t.kind == "s"


def _float(fl: FunctionLowering, ins: ptx.Instruction) -> bool:
    if _t(ins).kind == "f":
        from .float_ops import lower_float
        lower_float(fl, ins)
        return True
    return False


def _simple(fl: FunctionLowering, ins: ptx.Instruction, fn, src_types, dst_type=None) -> None:
    srcs = [fl.read(o, t) for o, t in zip(ins.operands[1:], src_types)]
    fl.write(ins.operands[0], dst_type or _t(ins), fn(fl.b, *srcs))


@lowers("and", "or", "xor")
def _logic(fl, ins):
    t = _t(ins)
    fn = {"and": X.and_, "or": X.or_, "xor": X.xor}[ins.opcode]
    _simple(fl, ins, fn, [t, t])


@lowers("not", "cnot")
def _not(fl, ins):
    t = _t(ins)
    _simple(fl, ins, X.not_ if ins.opcode == "not" else X.cnot, [t])


@lowers("add", "sub")
def _add_sub(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    if "cc" in ins.modifiers:
        return _carry(fl, ins)
    fn = X.iadd if ins.opcode == "add" else X.isub
    _simple(fl, ins, lambda b, x, y: fn(b, x, y, sat="sat" in ins.modifiers, signed=_signed(t), x2=t in X2), [t, t])


@lowers("add.cc", "addc", "sub.cc", "subc")
def _carry(fl, ins):
    t = _t(ins)
    d, a, c = ins.operands
    b = fl.b
    x, y = fl.read(a, t), fl.read(c, t)
    cin = b.load(fl.cc) if ins.opcode in ("addc", "subc") else None
    fn = X.add_cc if ins.opcode.startswith("add") else X.sub_cc
    r, cf = fn(b, x, y, cin)
    fl.write(d, t, r)
    if ins.opcode.endswith(".cc") or "cc" in ins.modifiers:
        b.store(cf, fl.cc)


def _mode(ins: ptx.Instruction) -> str:
    return ins.mod("hilo") or ins.mod("wide") or ins.mod("hi") or "lo"


def _wide(t: ScalarType) -> ScalarType:
    return ScalarType(f"{t.kind}{2 * t.bits}")


@lowers("mul")
def _mul(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    mode = _mode(ins)
    _simple(fl, ins, lambda b, x, y: X.mul(b, x, y, mode=mode, signed=_signed(t)), [t, t],
            _wide(t) if mode == "wide" else t)


@lowers("mad")
def _mad(fl, ins):
    if _float(fl, ins):
        return
    if "cc" in ins.modifiers:
        return _mad_cc(fl, ins)
    t = _t(ins)
    mode = _mode(ins)
    wt = _wide(t) if mode == "wide" else t
    _simple(fl, ins, lambda b, x, y, z: X.mad(b, x, y, z, mode=mode, signed=_signed(t), sat="sat" in ins.modifiers),
            [t, t, wt], wt)


@lowers("mad.cc", "madc")
def _mad_cc(fl, ins):
    t = _t(ins)
    d, a, c, e = ins.operands
    b = fl.b
    cin = b.load(fl.cc) if ins.opcode == "madc" else None
    r, cf = X.mad_cc(b, fl.read(a, t), fl.read(c, t), fl.read(e, t), cin, mode=_mode(ins), signed=_signed(t))
    fl.write(d, t, r)
    if ins.opcode == "mad.cc" or "cc" in ins.modifiers:
        b.store(cf, fl.cc)


@lowers("mul24", "mad24")
def _mul24(fl, ins):
    t = _t(ins)
    mode = _mode(ins)
    if ins.opcode == "mul24":
        _simple(fl, ins, lambda b, x, y: X.mul24(b, x, y, mode=mode, signed=_signed(t)), [t, t])
    else:
        _simple(fl, ins, lambda b, x, y, z: X.mad24(b, x, y, z, mode=mode, signed=_signed(t),
                                                    sat="sat" in ins.modifiers), [t, t, t])


@lowers("sad")
def _sad(fl, ins):
    t = _t(ins)
    _simple(fl, ins, lambda b, x, y, z: X.sad(b, x, y, z, signed=_signed(t)), [t, t, t])


@lowers("div", "rem")
def _div(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    fn = X.div if ins.opcode == "div" else X.rem
    _simple(fl, ins, lambda b, x, y: fn(b, x, y, signed=_signed(t)), [t, t])


@lowers("abs", "neg")
def _abs_neg(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    _simple(fl, ins, X.iabs if ins.opcode == "abs" else X.ineg, [t])


@lowers("min", "max")
def _minmax(fl, ins):
    if _float(fl, ins):
        return
    t = _t(ins)
    fn = X.imin if ins.opcode == "min" else X.imax
    _simple(fl, ins, lambda b, x, y: fn(b, x, y, signed=_signed(t), relu="relu" in ins.modifiers, x2=t in X2), [t, t])


@lowers("shl", "shr")
def _shift(fl, ins):
    t = _t(ins)
    if ins.opcode == "shl":
        _simple(fl, ins, X.shl, [t, U32])
    else:
        _simple(fl, ins, lambda b, x, n: X.shr(b, x, n, signed=_signed(t)), [t, U32])


@lowers("popc", "clz")
def _count(fl, ins):
    _simple(fl, ins, X.popc if ins.opcode == "popc" else X.clz, [_t(ins)], U32)


@lowers("brev")
def _brev(fl, ins):
    _simple(fl, ins, X.brev, [_t(ins)])


@lowers("bfind")
def _bfind(fl, ins):
    t = _t(ins)
    _simple(fl, ins, lambda b, x: X.bfind(b, x, signed=_signed(t), shiftamt="shiftamt" in ins.modifiers), [t], U32)


@lowers("fns")
def _fns(fl, ins):
    _simple(fl, ins, X.fns, [B32, U32, S32], B32)


@lowers("bfe")
def _bfe(fl, ins):
    t = _t(ins)
    _simple(fl, ins, lambda b, x, p, n: X.bfe(b, x, p, n, signed=_signed(t)), [t, U32, U32])


@lowers("bfi")
def _bfi(fl, ins):
    t = _t(ins)
    _simple(fl, ins, X.bfi, [t, t, U32, U32])


@lowers("szext")
def _szext(fl, ins):
    t = _t(ins)
    mode = ins.mod("clampwrap") or "wrap"
    _simple(fl, ins, lambda b, x, n: X.szext(b, x, n, signed=_signed(t), mode=mode), [t, U32])


@lowers("bmsk")
def _bmsk(fl, ins):
    mode = ins.mod("clampwrap") or "wrap"
    _simple(fl, ins, lambda b, p, n: X.bmsk(b, p, n, mode=mode), [U32, U32], B32)


@lowers("lop3")
def _lop3(fl, ins):
    t = _t(ins)
    ops = ins.operands
    lut = ops[4]
    if not isinstance(lut, ptx.Immediate) or len(ops) != 5:
        raise fl.unsupported(ins, "(lop3 with a predicate output or a non-constant table) has no LLVM lowering yet")
    x, y, z = (fl.read(o, t) for o in ops[1:4])
    fl.write(ops[0], t, X.lop3(fl.b, x, y, z, int(lut.value) & 0xFF))


@lowers("shf")
def _shf(fl, ins):
    direction = ins.mod("shfdir") or ("l" if "l" in ins.modifiers else "r")
    mode = ins.mod("clampwrap") or "wrap"
    _simple(fl, ins, lambda b, lo, hi, n: X.shf(b, lo, hi, n, direction=direction, mode=mode), [B32, B32, U32], B32)


@lowers("prmt")
def _prmt(fl, ins):
    mode = ins.mod("prmtmode")
    _simple(fl, ins, lambda b, x, y, s: X.prmt(b, x, y, s, mode=mode), [B32, B32, B32], B32)


@lowers("dp4a", "dp2a")
def _dp(fl, ins):
    at, bt = ins.types[0], ins.types[1]
    out_t = S32 if (at.kind == "s" or bt.kind == "s") else U32
    if ins.opcode == "dp4a":
        fn = lambda b, x, y, z: X.dp4a(b, x, y, z, a_signed=at.kind == "s", b_signed=bt.kind == "s")  # noqa: E731
    else:
        mode = ins.mod("hilo") or "lo"
        fn = lambda b, x, y, z: X.dp2a(b, x, y, z, a_signed=at.kind == "s", b_signed=bt.kind == "s", mode=mode)  # noqa: E731
    _simple(fl, ins, fn, [B32, B32, out_t], out_t)


@lowers("selp")
def _selp(fl, ins):
    t = _t(ins)
    d, a, c, p = ins.operands
    fl.write(d, t, fl.b.select(fl.read(p, ScalarType.PRED), fl.read(a, t), fl.read(c, t)))


_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
         "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}


def int_compare(fl: FunctionLowering, op: str, t: ScalarType, x: ir.Value, y: ir.Value) -> ir.Value:
    b = fl.b
    if op in ("lo", "ls", "hi", "hs") or t.kind in ("u", "b"):
        return b.icmp_unsigned(_ICMP[op], x, y)
    return b.icmp_signed(_ICMP[op], x, y)


def combine(fl: FunctionLowering, ins: ptx.Instruction, p: ir.Value, c: ptx.Operand | None) -> ir.Value:
    """setp/set `.and/.or/.xor` with a third predicate operand."""
    boolop = ins.mod("boolop")
    if boolop is None or c is None:
        return p
    q = fl.read(c, ScalarType.PRED)
    return getattr(fl.b, {"and": "and_", "or": "or_", "xor": "xor"}[boolop])(p, q)


def write_pair(fl: FunctionLowering, dst: ptx.Operand, p: ir.Value, third, ins: ptx.Instruction) -> None:
    """Both results are computed before either is written: `c` may be one of the destinations
    (`setp.lt.xor.s32 %p0|%p3, %r0, 5, !%p0`, found by the fuzzer)."""
    b = fl.b
    if isinstance(dst, ptx.Pair):
        first, second = combine(fl, ins, p, third), combine(fl, ins, b.not_(p), third)
        fl.write(dst.first, ScalarType.PRED, first)
        fl.write(dst.second, ScalarType.PRED, second)
    else:
        fl.write(dst, ScalarType.PRED, combine(fl, ins, p, third))


@lowers("setp")
def _setp(fl, ins):
    t = _t(ins)
    if t.kind == "f":
        from .float_ops import lower_setp_float
        return lower_setp_float(fl, ins)
    ops = ins.operands
    dst, a, c = ops[0], ops[1], ops[2]
    third = ops[3] if len(ops) > 3 else None
    op = ins.mod("cmp_int") or ins.mod("cmp_bit")
    write_pair(fl, dst, int_compare(fl, op, t, fl.read(a, t), fl.read(c, t)), third, ins)


__all__ = ["int_compare", "combine", "write_pair", "I1"]


_SET_TRUE = {"f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80}    # 1.0; integer types: all ones


@lowers("set")
def _set(fl, ins):
    """set.cmp{.bool}.dtype.stype (§9.7.6.1, §9.7.7.3): all ones (integer dtype) or 1.0 (float dtype)
    where the comparison holds; packed half sources give one result per 16-bit half."""
    dt, st = ins.types[0], ins.types[1] if len(ins.types) > 1 else ins.types[0]
    ops = ins.operands
    d, a, c = ops[0], ops[1], ops[2]
    third = ops[3] if len(ops) > 3 else None
    b = fl.b
    packed = st.value in _PACKED_HALF
    if packed != (dt.value in _PACKED_HALF) and not (packed and dt.value in ("u32", "s32")) \
            or dt.value.endswith("x2") and dt.value != st.value:
        raise fl.unsupported(ins, f"(.{dt.value} results of .{st.value} comparisons) is not a form of `set`")
    x, y = fl.read(a, st), fl.read(c, st)
    if st.kind == "f":
        cmp = ins.mod("cmp_float")
        if st in (ScalarType.F32, ScalarType.F64):
            from .. import fp
            p = fp.fcompare(b, x, y, cmp, ftz="ftz" in ins.modifiers)
        else:
            from .. import half
            p = half.hcompare(b, x, y, cmp, type=st.value, ftz="ftz" in ins.modifiers)
    else:
        p = int_compare(fl, ins.mod("cmp_int") or ins.mod("cmp_bit"), st, x, y)
    w = max(dt.bits, 8)
    if packed:
        one = ir.IntType(32)(_SET_TRUE.get(dt.value[:-2], 0xFFFF))
        lo, hi = (combine(fl, ins, q, third) for q in p)
        r = b.or_(b.select(lo, one, ir.IntType(32)(0)), b.shl(b.select(hi, one, ir.IntType(32)(0)), ir.IntType(32)(16)))
        fl.write(d, dt, r)
        return
    p = combine(fl, ins, p, third)
    true = _SET_TRUE.get(dt.value, (1 << w) - 1)
    r = b.select(p, ir.IntType(w)(true), ir.IntType(w)(0))
    fl.write(d, dt, r if dt is not ScalarType.F32 else b.bitcast(r, ir.FloatType()))


@lowers("vabsdiff4")
def _vabsdiff4(fl, ins):
    ts = ins.types
    if len(ins.operands) != 4 or any(m in ins.modifiers for m in ("min", "max")):
        raise fl.unsupported(ins, "(this vabsdiff4 form) has no LLVM lowering yet")
    sat = "sat" in ins.modifiers
    secondary = "add" if "add" in ins.modifiers else None
    d_s, a_s, b_s = (t.kind == "s" for t in (ts + (ts[-1],) * 3)[:3])
    _simple(fl, ins, lambda b, x, y, z: X.vabsdiff4(b, x, y, z, a_signed=a_s, b_signed=b_s, d_signed=d_s,
                                                    sat=sat, secondary=secondary), [B32, B32, B32], B32)


@lowers("nanosleep")
def _nanosleep(fl, ins):
    """Suspends the thread for a while: a chance for the threads it waits for to run."""
    fl.hooks.yield_thread(fl, ins)


@lowers("slct")
def _slct(fl, ins):
    """d = (c >= 0) ? a : b (§9.7.6.4): NaN selects b, -0 selects a; .ftz flushes a subnormal c."""
    t, ct = ins.types[0], ins.types[1]
    b = fl.b
    x, y = fl.read(ins.operands[1], t), fl.read(ins.operands[2], t)
    c = fl.read(ins.operands[3], ct)
    if ct is ScalarType.F32:
        if "ftz" in ins.modifiers:
            from ..fp_core import flush
            c = flush(b, c)
        ok = b.fcmp_ordered(">=", c, ir.Constant(ir.FloatType(), 0.0))
    else:
        ok = b.icmp_signed(">=", c, ir.IntType(32)(0))
    fl.write(ins.operands[0], t, b.select(ok, x, y))


@lowers("brx.idx")
def _brx_idx(fl, ins):
    """`brx.idx index, tlist` (§9.7.12.2): a switch over the `.branchtargets` labels; an index
    past the list traps (undefined in the ISA)."""
    index, tlist = ins.operands[0], ins.operands[1]
    targets = fl.branch_targets(tlist.name) if isinstance(tlist, ptx.Symbol) else None
    if targets is None:
        raise fl.unsupported(ins, f"branches through `{tlist}`, which is not a `.branchtargets` list")
    b = fl.b
    i = fl.read(index, U32)
    bad = fl.new_block("brx_bad")
    sw = b.switch(i, bad)
    for k, name in enumerate(targets):
        sw.add_case(ir.IntType(32)(k), fl.label(name))
    b.position_at_end(bad)
    fl.hooks.trap(fl, ins, "brx.idx")
