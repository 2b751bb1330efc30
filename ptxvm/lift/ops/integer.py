"""Integer-only and extended-precision instructions (PTX ISA §9.7.1, §9.7.2, and the SIMD video
instructions of §9.7.8) lowered to LLVM IR."""

from __future__ import annotations

from ..semantics import intops as X
from . import lowers
from .common import B32, S32, U32, _mode, _signed, _simple, _t


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
