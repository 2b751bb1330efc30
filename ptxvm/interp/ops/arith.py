"""Integer, floating-point, logic and comparison instructions (PTX ISA §9.7.1-9.7.8).

Values travel as raw bits (uintN arrays); each implementation views them as
the instruction type, computes with numpy (wraparound integer arithmetic,
IEEE round-to-nearest float arithmetic) and returns raw bits again.
"""

from __future__ import annotations

import numpy as np

from ...ir.types import ScalarType
from .. import half, intops
from .. import numerics as num
from ..program import CompileContext, numpy_dtype, reader, writer
from ..state import SINT, UINT
from . import impl

def _view(raw: np.ndarray, t: ScalarType) -> np.ndarray:
    return raw.view(numpy_dtype(t))


def _raw(values: np.ndarray, t: ScalarType) -> np.ndarray:
    return values.astype(numpy_dtype(t), copy=False).view(UINT[max(t.bits, 8)])


def _binary(ctx: CompileContext, ins, fn_int=None, fn_float=None, n_src=2):
    """Elementwise instruction over ``n_src`` sources of the instruction type.

    ``fn_float(*values, rnd=, ftz=, sat=)`` is one of numerics' exact operations
    (float arrays in, float array out); ``fn_int(*values)`` works on the typed views.
    """
    t = ins.types[0]
    srcs = [reader(ctx, o, t, ins) for o in ins.operands[1:1 + n_src]]
    dst = writer(ctx, ins.operands[0], t, ins)
    if t.value in _HALF_TYPES:
        return _half_binary(ctx, ins, srcs, dst, n_src)
    if fn_float is not None and (t.value == "f32x2" or (t.value == "f32" and len(ins.types) == 2)):
        return _f32_split(ctx, ins, fn_float, n_src)
    if t.kind == "f":
        if t.bits not in (32, 64) or fn_float is None:
            raise ctx.unsupported(ins, "is not executable yet" if fn_float is None else
                                  "(half precision) is not executable yet")
        kw = {"rnd": ins.mod("rnd") or "rn", "ftz": ins.has("ftz") and t.bits == 32, "sat": ins.has("sat")}
        ut = UINT[t.bits]

        def run_f(b, lanes):
            r = fn_float(*[_view(s(b, lanes), t) for s in srcs], **kw)
            dst(b, lanes, np.asarray(r, dtype=numpy_dtype(t)).view(ut))
        return run_f
    if fn_int is None:
        raise ctx.unsupported(ins, "is not executable for integer types")

    def run_i(b, lanes):
        vals = [_view(s(b, lanes), t) for s in srcs]
        with np.errstate(all="ignore"):
            r = fn_int(*vals)
        dst(b, lanes, _raw(r, t))
    return run_i


def _f32_split(ctx, ins, fn_float, n_src):
    """``.f32x2`` (PTX ISA 9.0 §9.7.3: two independent f32 operations on the halves of .b64
    registers, element 0 in the low 32 bits) and the mixed-precision ``.f32.{f16,bf16}`` forms
    (§9.7.5: the half-precision sources, every source but the last, convert exactly to f32,
    then one f32 operation rounds with .rnd and .sat applies)."""
    t = ins.types[0]
    kw = {"rnd": ins.mod("rnd") or "rn", "ftz": ins.has("ftz"), "sat": ins.has("sat")}
    ops = ins.operands[1:1 + n_src]
    if t.value == "f32x2":
        b64 = ScalarType("b64")
        srcs = [reader(ctx, o, b64, ins) for o in ops]
        dst = writer(ctx, ins.operands[0], b64, ins)

        def run_x2(b, lanes):
            vals = [s(b, lanes) for s in srcs]
            out = np.zeros(lanes.shape, dtype=np.uint64)
            for shift in (np.uint64(0), np.uint64(32)):
                xs = [(v >> shift).astype(np.uint32).view(np.float32) for v in vals]
                r = np.asarray(fn_float(*xs, **kw), dtype=np.float32).view(np.uint32)
                out |= r.astype(np.uint64) << shift
            dst(b, lanes, out)
        return run_x2
    half_t = ins.types[1]
    f32 = ScalarType("f32")
    srcs = [reader(ctx, o, half_t if i < n_src - 1 else f32, ins) for i, o in enumerate(ops)]
    dst = writer(ctx, ins.operands[0], f32, ins)

    def run_mixed(b, lanes):
        xs = [half.half_to_f32(s(b, lanes), half_t.value).view(np.float32) if i < n_src - 1 else
              s(b, lanes).view(np.float32) for i, s in enumerate(srcs)]
        dst(b, lanes, np.asarray(fn_float(*xs, **kw), dtype=np.float32).view(np.uint32))
    return run_mixed


_HALF_TYPES = ("f16", "bf16", "f16x2", "bf16x2")
_HALF_OPS = {"add": half.add, "sub": half.sub, "mul": half.mul, "fma": half.fma, "neg": half.neg,
             "abs": half.abs_, "min": half.min_, "max": half.max_}


def _half_binary(ctx, ins, srcs, dst, n_src):
    """f16/bf16 scalar and packed-x2 arithmetic (bits in uint16 / uint32) on half.py's models."""
    t = ins.types[0].value
    fn = _HALF_OPS.get(ins.opcode)
    rnd = ins.mod("rnd") or "rn"
    if fn is None or rnd != "rn":
        raise ctx.unsupported(ins, "(half precision) is not executable yet")
    kw = {"ftz": ins.has("ftz")}
    if ins.opcode in ("add", "sub", "mul", "fma"):
        kw["sat"] = ins.has("sat")
    if ins.opcode == "fma":
        kw["relu"] = ins.has("relu")
    if ins.opcode in ("min", "max"):
        kw["nan"] = ins.has("NaN")
        kw["xorsign_abs"] = ins.has("xorsign")
    ut = UINT[ins.types[0].bits]

    def run(b, lanes):
        dst(b, lanes, np.asarray(fn(*[s(b, lanes) for s in srcs], t, **kw)).astype(ut))
    return run


def _only(fn, *names):
    """Adapt a numerics function taking only some of rnd/ftz/sat."""
    return lambda *v, **kw: fn(*v, **{k: kw[k] for k in names})


@impl("add")
def _add(ctx, ins):
    t = ins.types[0]
    if ins.has("sat") and t.kind == "s":
        return _saturating(ctx, ins, lambda a, b: a.astype(np.int64) + b)
    if ins.has("cc"):
        from .bits import _carry
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
        from .bits import _carry
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
    return _binary(ctx, ins, None, num.ffma, n_src=3), 0, -1


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


def _compare(ctx, ins, t=None):
    t = t or ins.types[0]
    op = next(m for m in ins.modifiers if m in _INT_CMP or m in ("equ", "neu", "ltu", "leu", "gtu", "geu",
                                                                   "num", "nan"))
    if t.value in _HALF_TYPES:
        # Packed x2 types give a pair (lower halves, upper halves) of results (§9.7.7).
        use_ftz = ins.has("ftz")
        return lambda a, b: half.setp(op, a, b, t.value, ftz=use_ftz)
    if t.kind == "f":
        if t.bits not in (32, 64):
            raise ctx.unsupported(ins, "(packed half comparisons) are not executable yet")
        use_ftz = ins.has("ftz") and t.bits == 32
        return lambda a, b: num.fcompare(_view(a, t), _view(b, t), op, ftz=use_ftz)
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
    if t.value in ("f16x2", "bf16x2"):
        # `setp.CmpOp{.BoolOp}.f16x2 p|q, a, b{, {!}c}`: p for the lower halves, q for the upper.
        if q is None:
            raise ctx.unsupported(ins, "needs two predicate destinations `p|q` (one per half)")

        def run_x2(b, lanes):
            lo, hi = cmp(a(b, lanes), b_(b, lanes))
            if comb is not None:
                cv = c(b, lanes)
                lo, hi = comb(lo, cv), comb(hi, cv)
            p(b, lanes, lo)
            q(b, lanes, hi)
        return run_x2, 0, -1

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


_SET_TRUE = {"f32": np.uint32(0x3F800000), "f16": np.uint16(0x3C00), "bf16": np.uint16(0x3F80)}


@impl("set")
def _set(ctx, ins):
    """`set.CmpOp{.BoolOp}.dtype.stype d, a, b{, {!}c}` (PTX ISA §9.7.7.3): like setp, but the
    result is written as a value: all ones / zero for integer types, 1.0 / 0.0 for floats."""
    dt, st = ins.types[0], ins.types[1]
    if dt.value not in ("u16", "s16", "u32", "s32", "b32", "f32", "f16", "bf16", "f16x2", "bf16x2"):
        raise ctx.unsupported(ins, "is not executable yet")
    packed = st.value in ("f16x2", "bf16x2")
    if packed != (dt.value in ("f16x2", "bf16x2")) and not (packed and dt.value in ("u32", "s32")) \
            or dt.value.endswith("x2") and dt.value != st.value:
        # §9.7.7.1: packed sources give .u32/.s32 or the same packed type; packed results need them.
        raise ctx.unsupported(ins, f"(.{dt.value} results of .{st.value} comparisons) is not a form of `set`")
    cmp = _compare(ctx, ins, st)
    a, b_ = (reader(ctx, o, st, ins) for o in ins.operands[1:3])
    boolop = next((m for m in ins.modifiers if m in _BOOL), None)
    c = reader(ctx, ins.operands[3], ScalarType.PRED, ins) if boolop else None
    dst = writer(ctx, ins.operands[0], dt, ins)
    comb = _BOOL.get(boolop)
    if packed:
        # Each 16-bit half of d gets its own result: 1.0 in the packed type, or all ones for
        # .u32/.s32 (0xffff per half).
        one = np.uint32(_SET_TRUE.get(dt.value[:-2], np.uint16(0xFFFF)))

        def run_x2(b, lanes):
            lo, hi = cmp(a(b, lanes), b_(b, lanes))
            if comb is not None:
                cv = c(b, lanes)
                lo, hi = comb(lo, cv), comb(hi, cv)
            zero = np.uint32(0)
            dst(b, lanes, np.where(lo, one, zero) | (np.where(hi, one, zero) << np.uint32(16)))
        return run_x2, 0, -1
    true = _SET_TRUE.get(dt.value, np.uint32(0xFFFFFFFF))

    def run(b, lanes):
        r = np.asarray(cmp(a(b, lanes), b_(b, lanes)), dtype=bool)
        if comb is not None:
            r = comb(r, c(b, lanes))
        dst(b, lanes, np.where(r, true, true.dtype.type(0)))
    return run, 0, -1


@impl("selp")
def _selp(ctx, ins):
    t = ins.types[0]
    a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
    c = reader(ctx, ins.operands[3], ScalarType.PRED, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    return (lambda b, lanes: dst(b, lanes, np.where(c(b, lanes), a(b, lanes), b_(b, lanes)))), 0, -1


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


@impl("slct")
def _slct(ctx, ins):
    """`slct.dtype.ctype d, a, b, c` (§9.7.6.4): d = (c >= 0) ? a : b; a NaN c selects b, -0 selects a;
    `.ftz` flushes a subnormal f32 c to sign-preserving zero first."""
    t, ct = ins.types[0], ins.types[1]
    a, b_ = (reader(ctx, o, t, ins) for o in ins.operands[1:3])
    c = reader(ctx, ins.operands[3], ct, ins)
    dst = writer(ctx, ins.operands[0], t, ins)
    ftz = ins.has("ftz")

    def pick(b, lanes):
        cv = c(b, lanes)
        if ct is ScalarType.F32:
            x = cv.view(np.float32)
            if ftz:
                x = num.ftz32(x)
            ok = x >= 0
        else:
            ok = cv.view(np.int32) >= 0
        return dst(b, lanes, np.where(ok, a(b, lanes), b_(b, lanes)))
    return pick, 0, -1
