"""Floating-point-only instructions (PTX ISA §9.7.3-9.7.5: single/double, half and mixed
precision): testp, copysign, fma and the approximate functions."""

from __future__ import annotations

import numpy as np

from ...ir.types import ScalarType
from .. import numerics as num
from ..program import reader, writer
from . import impl
from .common import _binary, _only, _view


@impl("fma")
def _fma(ctx, ins):
    return _binary(ctx, ins, None, num.ffma, n_src=3), 0, -1


@impl("copysign")
def _copysign(ctx, ins):
    return _binary(ctx, ins, None, lambda a, b, **kw: num.copysign(a, b)), 0, -1


@impl("testp")
def _testp(ctx, ins):
    t = ins.types[0]
    op = next(m for m in ins.modifiers if m in ("finite", "infinite", "number", "notanumber", "normal",
                                                  "subnormal"))
    src = reader(ctx, ins.operands[1], t, ins)
    dst = writer(ctx, ins.operands[0], ScalarType.PRED, ins)
    return (lambda b, lanes: dst(b, lanes, num.testp(_view(src(b, lanes), t), op))), 0, -1


_APPROX = {"rcp": num.rcp_approx, "sqrt": num.sqrt_approx, "rsqrt": num.rsqrt_approx,
           "sin": num.sin_approx, "cos": num.cos_approx, "ex2": num.ex2_approx, "lg2": num.lg2_approx,
           "tanh": num.tanh_approx}


_EXACT = {"rcp": num.frcp, "sqrt": num.fsqrt}


@impl("rcp", "sqrt", "rsqrt", "sin", "cos", "ex2", "lg2", "tanh")
def _unary_float(ctx, ins):
    t = ins.types[0]
    if t.kind != "f" or t.bits not in (32, 64):
        raise ctx.unsupported(ins, "(half precision) is not executable yet")
    if ins.has("approx") or ins.opcode not in _EXACT:
        fn = _APPROX[ins.opcode]
        return _binary(ctx, ins, None, lambda a, rnd, ftz, sat: fn(a, ftz=ftz), n_src=1), 0, -1
    return _binary(ctx, ins, None, _only(_EXACT[ins.opcode], "rnd", "ftz"), n_src=1), 0, -1


@impl("rcp.approx.ftz.f64", "rsqrt.approx.ftz.f64")
def _approx_f64(ctx, ins):
    """The f64 approximations are table entries of their own (their type is in the opcode)."""
    fn = num.rcp_approx if ins.opcode.startswith("rcp") else num.rsqrt_approx
    src = reader(ctx, ins.operands[1], ScalarType.F64, ins)
    dst = writer(ctx, ins.operands[0], ScalarType.F64, ins)
    return (lambda b, lanes: dst(b, lanes, np.asarray(fn(src(b, lanes).view(np.float64), ftz=True),
                                                      dtype=np.float64).view(np.uint64))), 0, -1
