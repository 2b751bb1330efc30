"""Integer, floating-point, logic and comparison instructions (PTX ISA §9.7.1-9.7.8).

Values travel as raw bits (uintN arrays); each implementation views them as
the instruction type, computes with numpy (wraparound integer arithmetic,
IEEE round-to-nearest float arithmetic) and returns raw bits again.
"""

from __future__ import annotations

import numpy as np

from ...ir.types import ScalarType
from .. import intops
from ..program import CompileContext, numpy_dtype, reader, writer
from ..state import SINT, UINT
from . import impl

F32_MIN_NORMAL = np.float32(1.1754943508222875e-38)
F64_MIN_NORMAL = np.float64(2.2250738585072014e-308)
CANONICAL_NAN = {32: np.uint32(0x7FFFFFFF), 64: np.uint64(0x7FFFFFFFFFFFFFFF)}


def _view(raw: np.ndarray, t: ScalarType) -> np.ndarray:
    return raw.view(numpy_dtype(t))


def _raw(values: np.ndarray, t: ScalarType) -> np.ndarray:
    return values.astype(numpy_dtype(t), copy=False).view(UINT[max(t.bits, 8)])


def ftz(x: np.ndarray) -> np.ndarray:
    """Flush f32 subnormals to sign-preserving zero (PTX `.ftz`)."""
    tiny = np.abs(x) < F32_MIN_NORMAL
    if tiny.any():
        x = np.where(tiny, np.copysign(np.float32(0), x), x)
    return x


def _float_result(r: np.ndarray, bits: int, use_ftz: bool, sat: bool) -> np.ndarray:
    if use_ftz:
        r = ftz(r)
    if sat:
        # PTX `.sat`: clamp to [0.0, 1.0]; NaN becomes +0.0.
        r = np.where(np.isnan(r), r.dtype.type(0), np.clip(r, 0, 1))
    out = r.view(UINT[bits]).copy()
    nan = np.isnan(r)
    if nan.any():
        out[nan] = CANONICAL_NAN[bits]
    return out


def _binary(ctx: CompileContext, ins, fn_int=None, fn_float=None, n_src=2):
    t = ins.types[0]
    srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:1 + n_src]]
    dst = writer(ctx, ins.operands[0], t, ins)
    if t.kind == "f":
        if t.bits not in (32, 64):
            raise ctx.unsupported(ins, "(half precision) is not executable yet")
        rnd = ins.mod("rnd") or "rn"
        if rnd != "rn" and fn_float is not None:
            raise ctx.unsupported(ins, f"with rounding `.{rnd}` is not executable yet")
        use_ftz = ins.has("ftz") and t.bits == 32
        sat = ins.has("sat")

        def run_f(b, lanes):
            vals = [_view(s(b, lanes), t) for s in srcs]
            if use_ftz:
                vals = [ftz(v) for v in vals]
            with np.errstate(all="ignore"):
                r = fn_float(*vals)
            dst(b, lanes, _float_result(r, t.bits, use_ftz, sat))
        return run_f
    if fn_int is None:
        raise ctx.unsupported(ins, "is not executable for integer types")

    def run_i(b, lanes):
        vals = [_view(s(b, lanes), t) for s in srcs]
        with np.errstate(all="ignore"):
            r = fn_int(*vals)
        dst(b, lanes, _raw(r, t))
    return run_i


@impl("add")
def _add(ctx, ins):
    t = ins.types[0]
    if ins.has("sat") and t.kind == "s":
        return _saturating(ctx, ins, lambda a, b: a.astype(np.int64) + b)
    if ins.has("cc"):
        from .bits import _carry
        return _carry(ctx, ins, intops.add_cc, 2)
    return _binary(ctx, ins, np.add, np.add), 0, -1


@impl("sub")
def _sub(ctx, ins):
    t = ins.types[0]
    if ins.has("sat") and t.kind == "s":
        return _saturating(ctx, ins, lambda a, b: a.astype(np.int64) - b)
    if ins.has("cc"):
        from .bits import _carry
        return _carry(ctx, ins, intops.sub_cc, 2)
    return _binary(ctx, ins, np.subtract, np.subtract), 0, -1


def _saturating(ctx, ins, fn):
    t = ins.types[0]
    lo, hi = -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return _binary(ctx, ins, lambda a, b: np.clip(fn(a, b), lo, hi).astype(a.dtype)), 0, -1


@impl("mul")
def _mul(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        return _binary(ctx, ins, None, np.multiply), 0, -1
    mode = ins.mod("hilo") or ins.mod("mulmode") or next((m for m in ins.modifiers if m in ("lo", "hi", "wide")), "lo")
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
        raise ctx.unsupported(ins, "(mad.f32 is fma) is not executable yet")
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
        from .bits import _carry
        return _carry(ctx, ins, intops.mad_cc, 3)
    mode = "hi" if ins.has("hi") else "lo"
    sat = ins.has("sat")
    srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:4]]
    dst = writer(ctx, ins.operands[0], t, ins)
    ut = UINT[t.bits]
    return (lambda b, lanes: dst(b, lanes, np.asarray(intops.mad(*[s(b, lanes) for s in srcs], t.value, mode, sat))
                                 .astype(ut))), 0, -1


@impl("fma")
def _fma(ctx, ins):
    t = ins.types[0]
    if t.kind != "f" or t.bits != 32:
        raise ctx.unsupported(ins, "is not executable yet (needs exact f64 fma emulation)")

    def fma32(a, b, c):
        # a*b is exact in f64 (48-bit product); p + c rounded once in f64 then to f32
        # is innocuous double rounding except at f32 midpoints, settled with the error term.
        p = a.astype(np.float64) * b.astype(np.float64)
        cc = c.astype(np.float64)
        s = p + cc
        bb = s - p
        err = (p - (s - bb)) + (cc - bb)           # TwoSum: s + err == p + c exactly
        r = s.astype(np.float32)
        back = r.astype(np.float64)
        # When s lies exactly halfway between two f32s, err decides the direction.
        up = np.nextafter(r, np.float32(np.inf))
        down = np.nextafter(r, np.float32(-np.inf))
        mid_up = (up.astype(np.float64) + back) / 2
        mid_dn = (down.astype(np.float64) + back) / 2
        r = np.where((s == mid_up) & (err > 0), up, r)
        r = np.where((s == mid_dn) & (err < 0), down, r)
        r = np.where((s == mid_up) & (err < 0) & (back < s), r, r)
        return r
    return _binary(ctx, ins, None, fma32, n_src=3), 0, -1


@impl("div")
def _div(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        if ins.has("approx") or ins.has("full"):
            return _binary(ctx, ins, None, np.divide), 0, -1
        return _binary(ctx, ins, None, np.divide), 0, -1

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


def _minmax(fn_i, fn_f):
    def build(ctx, ins):
        t = ins.types[0]
        if t.kind == "f":
            # PTX: a NaN input yields the other input; both NaN give NaN.
            return _binary(ctx, ins, None, fn_f), 0, -1
        return _binary(ctx, ins, fn_i), 0, -1
    return build


impl("min")(_minmax(np.minimum, np.fmin))
impl("max")(_minmax(np.maximum, np.fmax))


@impl("neg")
def _neg(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        src, dst = reader(ctx, ins.operands[1], t, ins), writer(ctx, ins.operands[0], t, ins)
        sign = UINT[t.bits](1 << (t.bits - 1))
        return (lambda b, lanes: dst(b, lanes, src(b, lanes) ^ sign)), 0, -1
    return _binary(ctx, ins, lambda a: -a, n_src=1), 0, -1


@impl("abs")
def _abs(ctx, ins):
    t = ins.types[0]
    if t.kind == "f":
        src, dst = reader(ctx, ins.operands[1], t, ins), writer(ctx, ins.operands[0], t, ins)
        mask = UINT[t.bits]((1 << (t.bits - 1)) - 1)
        return (lambda b, lanes: dst(b, lanes, src(b, lanes) & mask)), 0, -1
    return _binary(ctx, ins, lambda a: np.abs(a).astype(a.dtype), n_src=1), 0, -1


def _bitwise(fn, n_src=2):
    def build(ctx, ins):
        t = ins.types[0]
        srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:1 + n_src]]
        dst = writer(ctx, ins.operands[0], t, ins)
        return (lambda b, lanes: dst(b, lanes, fn(*[s(b, lanes) for s in srcs]))), 0, -1
    return build


impl("and")(_bitwise(np.bitwise_and))
impl("or")(_bitwise(np.bitwise_or))
impl("xor")(_bitwise(np.bitwise_xor))
impl("not")(_bitwise(np.invert, 1))


@impl("shl", "shr")
def _shift(ctx, ins):
    t = ins.types[0]
    a = reader(ctx, ins.operands[1], t, ins)
    s = reader(ctx, ins.operands[2], ScalarType.U32, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    bits = t.bits
    ut = UINT[bits]
    left = ins.opcode == "shl"
    signed = t.kind == "s" and not left

    def run(b, lanes):
        x = a(b, lanes)
        n = s(b, lanes).astype(np.uint64)
        big = n >= bits                               # PTX clamps shift amounts to the width
        k = np.where(big, 0, n).astype(ut)
        if left:
            r = np.where(big, ut(0), x << k)
        elif signed:
            sx = x.view(SINT[bits])
            r = np.where(big, sx >> SINT[bits](bits - 1), sx >> k.astype(SINT[bits])).view(ut)
        else:
            r = np.where(big, ut(0), x >> k)
        dst(b, lanes, r.astype(ut))
    return run, 0, -1


_INT_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}


def _float_cmp(op: str):
    base = op.rstrip("u") if op not in ("num", "nan") else op
    unordered = op.endswith("u") and op != "num"
    f = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
         "ge": np.greater_equal}.get(base)

    def cmp(a, b):
        nan = np.isnan(a) | np.isnan(b)
        if op == "num":
            return ~nan
        if op == "nan":
            return nan
        with np.errstate(invalid="ignore"):
            r = f(a, b)
        return (r | nan) if unordered else (r & ~nan)
    return cmp


def _compare(ctx, ins):
    t = ins.types[0]
    op = next(m for m in ins.modifiers if m in _INT_CMP or m in ("equ", "neu", "ltu", "leu", "gtu", "geu",
                                                                   "num", "nan"))
    if t.kind == "f":
        if t.bits not in (32, 64):
            raise ctx.unsupported(ins, "(half precision) is not executable yet")
        fn = _float_cmp(op)
        use_ftz = ins.has("ftz")
        return lambda a, b: fn(ftz(_view(a, t)) if use_ftz else _view(a, t),
                               ftz(_view(b, t)) if use_ftz else _view(b, t))
    view_t = t if op not in ("lo", "ls", "hi", "hs") else ScalarType(f"u{t.bits}")
    if t.kind == "b":
        view_t = ScalarType(f"u{t.bits}")
    fn = _INT_CMP[op]
    return lambda a, b: fn(_view(a, view_t), _view(b, view_t))


_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


@impl("setp")
def _setp(ctx, ins):
    t = ins.types[0]
    cmp = _compare(ctx, ins)
    a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
    boolop = next((m for m in ins.modifiers if m in _BOOL), None)
    c = reader(ctx, ins.operands[3], ScalarType.PRED, ins) if boolop else None
    d = ins.operands[0]
    from ...ir.nodes import Pair
    if isinstance(d, Pair):
        p = writer(ctx, d.first, ScalarType.PRED, ins)
        q = writer(ctx, d.second, ScalarType.PRED, ins)
    else:
        p, q = writer(ctx, d, ScalarType.PRED, ins), None
    comb = _BOOL.get(boolop)

    def run(b, lanes):
        r = cmp(a(b, lanes), b_(b, lanes))
        if comb is not None:
            cv = c(b, lanes)
            p(b, lanes, comb(r, cv))
            if q is not None:
                q(b, lanes, comb(~r, cv))
        else:
            p(b, lanes, r)
            if q is not None:
                q(b, lanes, ~r)
    return run, 0, -1


@impl("selp")
def _selp(ctx, ins):
    t = ins.types[0]
    a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
    c = reader(ctx, ins.operands[3], ScalarType.PRED, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    return (lambda b, lanes: dst(b, lanes, np.where(c(b, lanes), a(b, lanes), b_(b, lanes)))), 0, -1


@impl("rcp", "sqrt", "rsqrt")
def _unary_float(ctx, ins):
    t = ins.types[0]
    approx = ins.has("approx")
    rnd = ins.mod("rnd") or ("rn" if not approx else None)
    if rnd not in (None, "rn") or t.bits not in (32, 64):
        raise ctx.unsupported(ins, "is not executable yet")
    fn = {"rcp": lambda x: np.float64(1.0).astype(x.dtype) / x if x.dtype == np.float64 else
          (1.0 / x.astype(np.float64)).astype(np.float32),
          "sqrt": lambda x: np.sqrt(x.astype(np.float64)).astype(x.dtype) if x.dtype == np.float32 else np.sqrt(x),
          "rsqrt": lambda x: (1.0 / np.sqrt(x.astype(np.float64))).astype(x.dtype)}[ins.opcode]
    return _binary(ctx, ins, None, fn, n_src=1), 0, -1
