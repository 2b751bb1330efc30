"""Integer-only and extended-precision instructions (PTX ISA §9.7.1, §9.7.2, and the SIMD video
instructions of §9.7.8)."""

from __future__ import annotations

import numpy as np

from ...ir.types import ScalarType
from ..numerics import intops
from ..program import writer
from ..state import UINT
from . import impl
from .common import _ops, _result


@impl("popc", "clz")
def _count(ctx, ins):
    t = ins.types[0]
    fn = intops.popc if ins.opcode == "popc" else intops.clz
    return _result(ctx, ins, ScalarType.U32, lambda a: fn(a, t.value), [t])


@impl("bfind")
def _bfind(ctx, ins):
    t = ins.types[0]
    sh = ins.has("shiftamt")
    return _result(ctx, ins, ScalarType.U32, lambda a: intops.bfind(a, t.value, sh), [t])


@impl("brev")
def _brev(ctx, ins):
    t = ins.types[0]
    return _result(ctx, ins, t, lambda a: intops.brev(a, t.value), [t])


@impl("fns")
def _fns(ctx, ins):
    return _result(ctx, ins, ScalarType.U32, intops.fns, ["b32", "u32", "s32"])


@impl("bfe")
def _bfe(ctx, ins):
    t = ins.types[0]
    return _result(ctx, ins, t, lambda a, p, n: intops.bfe(a, p, n, t.value), [t, "u32", "u32"])


@impl("bfi")
def _bfi(ctx, ins):
    t = ins.types[0]
    return _result(ctx, ins, t, lambda a, b, p, n: intops.bfi(a, b, p, n, t.value), [t, t, "u32", "u32"])


@impl("szext")
def _szext(ctx, ins):
    t = ins.types[0]
    mode = "clamp" if ins.has("clamp") else "wrap"
    return _result(ctx, ins, t, lambda a, b: intops.szext(a, b, t.value, mode), [t, "u32"])


@impl("bmsk")
def _bmsk(ctx, ins):
    mode = "clamp" if ins.has("clamp") else "wrap"
    return _result(ctx, ins, ScalarType.B32, lambda a, b: intops.bmsk(a, b, mode), ["u32", "u32"])


@impl("dp4a", "dp2a")
def _dp(ctx, ins):
    at, bt = ins.types[0], ins.types[1]
    if ins.opcode == "dp4a":
        fn = lambda a, b, c: intops.dp4a(a, b, c, at.value, bt.value)  # noqa: E731
    else:
        mode = "hi" if ins.has("hi") else "lo"
        fn = lambda a, b, c: intops.dp2a(a, b, c, at.value, bt.value, mode)  # noqa: E731
    signed = at.kind == "s" or bt.kind == "s"
    out_t = ScalarType.S32 if signed else ScalarType.U32
    return _result(ctx, ins, out_t, fn, ["b32", "b32", out_t])


@impl("sad")
def _sad(ctx, ins):
    t = ins.types[0]
    return _result(ctx, ins, t, lambda a, b, c: intops.sad(a, b, c, t.value), [t, t, t])


@impl("mul24", "mad24")
def _mul24(ctx, ins):
    t = ins.types[0]
    mode = "hi" if ins.has("hi") else "lo"
    if ins.opcode == "mul24":
        return _result(ctx, ins, t, lambda a, b: intops.mul24(a, b, t.value, mode), [t, t])
    sat = ins.has("sat")
    return _result(ctx, ins, t, lambda a, b, c: intops.mad24(a, b, c, t.value, mode, sat), [t, t, t])


@impl("vabsdiff4")
def _vabsdiff4(ctx, ins):
    dt, at, bt = (x.value for x in ins.types[:3])
    sat = ins.has("sat")
    if ins.has("min") or ins.has("max"):
        raise ctx.unsupported(ins, "(the .min/.max secondary operations) is not executable yet")
    add = ins.has("add")
    if sat and add:       # the verifier rejects this first; the ISA forbids .sat with .add
        raise ctx.unsupported(ins, "combines .sat with the .add accumulate, which PTX ISA 9.7.18.2.3 forbids")
    return _result(ctx, ins, ScalarType(dt), lambda a, b, c: intops.vabsdiff4(a, b, c, at, bt, dt, sat=sat, add=add),
                   ["b32", "b32", "b32"])


# ------------------------------------------------------------------ carry chains (§9.7.2)
CC = "%%cc"          # the implicit condition-code carry flag, one per thread


def _carry(ctx, ins, fn, n_src):
    t = ins.types[0]
    srcs = _ops(ctx, ins, [t] * n_src)
    dst = writer(ctx, ins.operands[0], t, ins)
    set_cc = ins.has("cc") or ins.opcode.endswith(".cc")      # `add.cc` is its own table entry
    reads_cc = ins.opcode in ("addc", "subc", "madc")
    mode = "hi" if ins.has("hi") else "lo"
    ut = UINT[t.bits]

    def run(b, lanes):
        cc = b.reg(CC, ScalarType.U8)
        args = [s(b, lanes) for s in srcs]
        if reads_cc:
            args.append(cc[lanes])
        r, carry = fn(*args, t.value, mode) if ins.opcode.startswith("mad") else fn(*args, t.value)
        dst(b, lanes, np.asarray(r).astype(ut))
        if set_cc:
            cc[lanes] = np.asarray(carry).astype(np.uint8)
    return run, 0, -1


@impl("add.cc")
def _add_cc(ctx, ins):
    return _carry(ctx, ins, intops.add_cc, 2)


@impl("sub.cc")
def _sub_cc(ctx, ins):
    return _carry(ctx, ins, intops.sub_cc, 2)


@impl("mad.cc")
def _mad_cc(ctx, ins):
    return _carry(ctx, ins, intops.mad_cc, 3)


@impl("addc")
def _addc(ctx, ins):
    return _carry(ctx, ins, intops.addc, 2)


@impl("subc")
def _subc(ctx, ins):
    return _carry(ctx, ins, intops.subc, 2)


@impl("madc")
def _madc(ctx, ins):
    return _carry(ctx, ins, intops.madc, 3)
