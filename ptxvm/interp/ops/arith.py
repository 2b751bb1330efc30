"""Arithmetic shared by the integer and floating-point chapters (PTX ISA §9.7.1, §9.7.3, §9.7.4):
add, sub, mul, mad, div, rem, abs, neg, min, max."""

from __future__ import annotations

import numpy as np

from ...ir.types import ScalarType
from ..numerics import intops
from .. import numerics as num
from ..program import numpy_dtype, reader, writer
from ..state import UINT
from . import impl
from .common import _HALF_TYPES, _binary, _only, _view


@impl("add")
def _add(ctx, ins):
    t = ins.types[0]
    if ins.has("sat") and t.kind == "s":
        return _saturating(ctx, ins, lambda a, b: a.astype(np.int64) + b)
    if ins.has("cc"):
        from .integer import _carry
        return _carry(ctx, ins, intops.add_cc, 2)
    if t.value in ("u16x2", "s16x2"):      # per 16-bit half: no carry between the halves
        return _binary(ctx, ins, lambda a, b: intops.add(a, b, t.value)), 0, -1
    return _binary(ctx, ins, np.add, num.fadd), 0, -1


@impl("sub")
def _sub(ctx, ins):
    t = ins.types[0]
    if ins.has("sat") and t.kind == "s":
        return _saturating(ctx, ins, lambda a, b: a.astype(np.int64) - b)
    if ins.has("cc"):
        from .integer import _carry
        return _carry(ctx, ins, intops.sub_cc, 2)
    if t.value in ("u16x2", "s16x2"):
        return _binary(ctx, ins, lambda a, b: intops.sub(a, b, t.value)), 0, -1
    return _binary(ctx, ins, np.subtract, num.fsub), 0, -1


def _saturating(ctx, ins, fn):
    t = ins.types[0]
    lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return _binary(ctx, ins, lambda a, b: np.clip(fn(a, b), lo, hi).astype(a.dtype)), 0, -1


@impl("mul")
def _mul(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        return _binary(ctx, ins, None, num.fmul), 0, -1
    if ins.has("wide"):
        wt = ScalarType(f"{t.kind if t.kind != 'b' else 'u'}{t.bits * 2}")
        a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
        dst = writer(ctx, ins.operands[0], wt, ins)
        wide = numpy_dtype(wt)

        def run_wide(b, lanes):
            r = _view(a(b, lanes), t).astype(wide) * _view(b_(b, lanes), t).astype(wide)
            dst(b, lanes, r.view(UINT[wt.bits]))
        return run_wide, 0, -1
    if ins.has("hi"):
        srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:3]]
        dst = writer(ctx, ins.operands[0], t, ins)
        ut = UINT[t.bits]
        return (lambda b, lanes: dst(b, lanes, np.asarray(intops.mul(srcs[0](b, lanes), srcs[1](b, lanes), t.value,
                                                                     "hi")).astype(ut))), 0, -1
    return _binary(ctx, ins, np.multiply), 0, -1


@impl("mad")
def _mad(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        # mad.rnd.f32/f64 is fma (PTX ISA §9.7.3.6); bare mad.f32 (sm_1x) is also computed fused.
        return _binary(ctx, ins, None, num.ffma, n_src=3), 0, -1
    if ins.has("wide"):
        wt = ScalarType(f"{t.kind if t.kind != 'b' else 'u'}{t.bits * 2}")
        a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
        c = reader(ctx, ins.operands[3], wt, ins)
        dst = writer(ctx, ins.operands[0], wt, ins)
        wide = numpy_dtype(wt)

        def run_wide(b, lanes):
            r = _view(a(b, lanes), t).astype(wide) * _view(b_(b, lanes), t).astype(wide) + _view(c(b, lanes), wt)
            dst(b, lanes, r.view(UINT[wt.bits]))
        return run_wide, 0, -1
    if ins.has("cc"):
        from .integer import _carry
        return _carry(ctx, ins, intops.mad_cc, 3)
    mode = "hi" if ins.has("hi") else "lo"
    sat = ins.has("sat")
    srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:4]]
    dst = writer(ctx, ins.operands[0], t, ins)
    ut = UINT[t.bits]
    return (lambda b, lanes: dst(b, lanes, np.asarray(intops.mad(*[s(b, lanes) for s in srcs], t.value, mode, sat))
                                 .astype(ut))), 0, -1


@impl("div")
def _div(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        if ins.has("approx"):
            return _binary(ctx, ins, None, _only(num.div_approx_f32, "ftz")), 0, -1
        if ins.has("full"):
            return _binary(ctx, ins, None, _only(num.div_full_f32, "ftz")), 0, -1
        return _binary(ctx, ins, None, _only(num.fdiv, "rnd", "ftz")), 0, -1

    srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:3]]
    dst = writer(ctx, ins.operands[0], t, ins)
    ut = UINT[t.bits]
    return (lambda b, lanes: dst(b, lanes, np.asarray(intops.div(srcs[0](b, lanes), srcs[1](b, lanes), t.value))
                                 .astype(ut))), 0, -1


@impl("rem")
def _rem(ctx, ins):
    t = ins.types[0]
    srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:3]]
    dst = writer(ctx, ins.operands[0], t, ins)
    ut = UINT[t.bits]
    return (lambda b, lanes: dst(b, lanes, np.asarray(intops.rem(srcs[0](b, lanes), srcs[1](b, lanes), t.value))
                                 .astype(ut))), 0, -1


def _minmax(fn_i, fn_f, model=None):
    def build(ctx, ins):
        t = ins.types[0]
        if t.kind != "f" and (ins.has("relu") or t.value in ("u16x2", "s16x2")):
            # per 16-bit half and/or clamped at 0 (§9.7.1.12-13): the intops model
            relu = ins.has("relu")
            return _binary(ctx, ins, lambda a, b: model(a, b, t.value, relu)), 0, -1
        if t.kind == "f":
            nan = ins.has("NaN")
            n_src = len(ins.operands) - 1
            if t.value not in _HALF_TYPES and (ins.has("xorsign") or ins.has("abs") or n_src > 2):
                # min{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b and min{.ftz}{.NaN}{.abs}.f32 d, a, b, c
                # (PTX ISA 9.0 §9.7.3.11-12): .xorsign needs .abs and two sources
                if t.value != "f32" or (ins.has("xorsign") and (not ins.has("abs") or n_src > 2)):
                    raise ctx.unsupported(ins, "is not a form of §9.7.3.11-12 (.xorsign needs .abs and two "
                                               "sources; .abs and three sources are .f32 only)")
                ext = {"abs_": ins.has("abs"), "xorsign": ins.has("xorsign")}
                return _binary(ctx, ins, None, lambda *v, rnd, ftz, sat: fn_f(
                    v[0], v[1], ftz=ftz, nan=nan, c=v[2] if len(v) > 2 else None, **ext), n_src=n_src), 0, -1
            return _binary(ctx, ins, None, lambda a, b, rnd, ftz, sat: fn_f(a, b, ftz=ftz, nan=nan)), 0, -1
        return _binary(ctx, ins, fn_i), 0, -1
    return build


impl("min")(_minmax(np.minimum, num.fmin, intops.min_))


impl("max")(_minmax(np.maximum, num.fmax, intops.max_))


@impl("neg")
def _neg(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        return _binary(ctx, ins, None, _only(num.fneg, "ftz"), n_src=1), 0, -1
    return _binary(ctx, ins, lambda a: -a, n_src=1), 0, -1


@impl("abs")
def _abs(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        return _binary(ctx, ins, None, _only(num.fabs, "ftz"), n_src=1), 0, -1
    return _binary(ctx, ins, lambda a: np.abs(a).astype(a.dtype), n_src=1), 0, -1
