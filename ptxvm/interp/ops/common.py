"""Helpers shared by several instruction chapters: raw-bit views and elementwise plumbing."""

from __future__ import annotations

import numpy as np

from ...ir.types import ScalarType
from ..numerics import half
from ..program import CompileContext, numpy_dtype, reader, writer
from ..state import UINT


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


def _ops(ctx, ins, types):
    """Readers for the sources, typed in order by ``types`` (ScalarType or type names)."""
    out = []
    for o, t in zip(ins.operands[1:], types):
        out.append(reader(ctx, o, t if isinstance(t, ScalarType) else ScalarType(t), ins))
    return out


def _result(ctx, ins, t, fn, src_types):
    srcs = _ops(ctx, ins, src_types)
    dst = writer(ctx, ins.operands[0], t, ins)
    ut = UINT[max(t.bits, 8)]
    return (lambda b, lanes: dst(b, lanes, np.asarray(fn(*[s(b, lanes) for s in srcs])).astype(ut))), 0, -1


def _thread_ids(b, lanes: np.ndarray) -> np.ndarray:
    """Batch lanes -> global linear thread ids (threads are numbered CTA-major in a batch)."""
    return np.int64(b.first_cta * b.geometry.threads_per_cta) + lanes.astype(np.int64)
