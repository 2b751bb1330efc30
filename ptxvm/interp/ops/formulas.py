"""Integer instructions on formula values (lanevalues.Affine): the address-arithmetic fast path.

``wrap`` puts a fast path in front of an instruction's array implementation:
when the instruction runs for every thread of the batch and all its sources
are formulas, the result is computed on the coefficients (exact modular
arithmetic, the same bits the array code would produce); otherwise, or when
the result is not a formula (a product of two thread-dependent values, an
extension that would wrap), the array implementation runs unchanged.
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np

from ...ir import nodes as ir
from ...ir.types import ScalarType
from ...machine.addressmap import LOCAL_BASE, PARAM_BASE, SHARED_BASE
from ..lanevalues import Affine, bounds, extend
from ..program import CompileContext, LaneReader, lane_reader, writer

Combine = Callable[..., "Affine | None"]

_INT = frozenset("u8 u16 u32 u64 s8 s16 s32 s64 b8 b16 b32 b64".split())
# cvta adds (from) or subtracts (to) the state space's window base (ops/memory.py).
_WINDOW_BASE = {"global": 0, "const": 0, "shared": SHARED_BASE, "local": LOCAL_BASE, "param": PARAM_BASE}


def _scale(x: Affine, y: Affine) -> Affine | None:
    if y.uniform:
        return x.scale(y.c)
    if x.uniform:
        return y.scale(x.c)
    return None


# Integer comparisons: (all true if, all false if) on the left operand's range [lo, hi] and k.
_RELATIONS = {
    "eq": (lambda lo, hi, k: lo == hi == k, lambda lo, hi, k: k < lo or k > hi),
    "ne": (lambda lo, hi, k: k < lo or k > hi, lambda lo, hi, k: lo == hi == k),
    "lt": (lambda lo, hi, k: hi < k, lambda lo, hi, k: lo >= k),
    "le": (lambda lo, hi, k: hi <= k, lambda lo, hi, k: lo > k),
    "gt": (lambda lo, hi, k: lo > k, lambda lo, hi, k: hi <= k),
    "ge": (lambda lo, hi, k: lo >= k, lambda lo, hi, k: hi < k),
}
for _u, _s in (("lo", "lt"), ("ls", "le"), ("hi", "gt"), ("hs", "ge")):
    _RELATIONS[_u] = _RELATIONS[_s]
_MIRROR = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "lo": "hi", "ls": "hs", "hi": "lo", "hs": "ls",
           "eq": "eq", "ne": "ne"}


def _constant_compare(b, rel: str, x: Affine, y: Affine, signed: bool):
    """The predicate as one value for every thread when the comparison cannot differ between
    threads (one side uniform, the other's whole range on one side of it); else None."""
    if not y.uniform:
        if not x.uniform:
            return None
        x, y, rel = y, x, _MIRROR[rel]
    r = bounds(x, b.geometry.threads_per_cta, b.n_ctas, signed)
    if r is None:
        return None
    k = y.c - (1 << y.bits) if signed and y.c >> (y.bits - 1) else y.c
    all_true, all_false = _RELATIONS[rel]
    if all_true(*r, k):
        return np.ones(b.n, dtype=bool)
    if all_false(*r, k):
        return np.zeros(b.n, dtype=bool)
    return None


def _plain(ins: ir.Instruction) -> bool:
    return not any(ins.has(m) for m in ("cc", "sat", "hi"))


def plan(ctx: CompileContext, ins: ir.Instruction) -> tuple[list[LaneReader], Combine, Callable] | None:
    """(source lane readers, combine(batch, *formulas), destination writer) for the forms with a
    formula path; None for every other instruction."""
    op, ops = ins.opcode, ins.operands
    if not ins.types or any(isinstance(o, ir.Vector) for o in ops):
        return None
    t = ins.types[0]

    def srcs(*types: ScalarType) -> list[LaneReader]:
        return [lane_reader(ctx, o, ty, ins) for o, ty in zip(ops[1:], types)]

    if op == "mov" and t is not ScalarType.PRED and len(ops) == 2:
        return srcs(t), lambda b, x: x, writer(ctx, ops[0], t, ins)
    if op == "cvta" and t.value in ("u32", "u64") and len(ops) == 2:
        space = next((m for m in ins.modifiers if m in _WINDOW_BASE), None)
        if space is None:
            return None
        base = Affine.make(t.bits, _WINDOW_BASE[space])
        fn = (lambda b, x: x - base) if ins.has("to") else (lambda b, x: x + base)
        return srcs(t), fn, writer(ctx, ops[0], t, ins)
    if t.value not in _INT:
        return None
    if op in ("add", "sub") and _plain(ins) and len(ops) == 3:
        fn = (lambda b, x, y: x + y) if op == "add" else (lambda b, x, y: x - y)
        return srcs(t, t), fn, writer(ctx, ops[0], t, ins)
    if op in ("mul", "mad") and _plain(ins):
        n_src = 2 if op == "mul" else 3
        if len(ops) != n_src + 1:
            return None
        if ins.has("wide"):
            wt = ScalarType(f"{t.kind if t.kind != 'b' else 'u'}{t.bits * 2}")
            signed = t.kind == "s"

            def wide(b, x, y, z=None):
                tpc, ctas = b.geometry.threads_per_cta, b.n_ctas
                xw, yw = extend(x, wt.bits, signed, tpc, ctas), extend(y, wt.bits, signed, tpc, ctas)
                r = _scale(xw, yw) if xw is not None and yw is not None else None
                return r if r is None or z is None else r + z
            types = (t, t) if op == "mul" else (t, t, wt)
            return srcs(*types), wide, writer(ctx, ops[0], wt, ins)

        def low(b, x, y, z=None):
            r = _scale(x, y)
            return r if r is None or z is None else r + z
        return srcs(*(t,) * n_src), low, writer(ctx, ops[0], t, ins)
    if op == "shl" and len(ops) == 3:
        def shl(b, x, k):
            if not k.uniform:
                return None
            # PTX clamps shift amounts to the width: a shift by >= bits gives 0.
            return Affine.make(x.bits, 0) if k.c >= x.bits else x.scale(1 << k.c)
        return srcs(t, ScalarType.U32), shl, writer(ctx, ops[0], t, ins)
    if op == "setp" and len(ops) == 3 and not isinstance(ops[0], ir.Pair):
        rel = next((m for m in ins.modifiers if m in _RELATIONS), None)
        if rel is None:
            return None
        signed = t.kind == "s" and rel not in ("lo", "ls", "hi", "hs")
        return srcs(t, t), lambda b, x, y: _constant_compare(b, rel, x, y, signed), \
            writer(ctx, ops[0], ScalarType.PRED, ins)
    # Only the two types as modifiers: no rounding, .sat or .ftz.
    if op == "cvt" and len(ins.types) == 2 and len(ops) == 2 and len(ins.modifiers) == 2:
        s = ins.types[1]
        if s.value not in _INT:
            return None
        signed = s.kind == "s"          # extension follows the source's signedness (PTX ISA cvt)

        def cvt(b, x):
            return extend(x, max(t.bits, 8), signed, b.geometry.threads_per_cta, b.n_ctas)
        return srcs(s), cvt, writer(ctx, ops[0], t, ins)
    return None


SWITCH_ENV = "PTXVM_INTERP_FORMULAS"


def enabled() -> bool:
    """Formula values are on unless $PTXVM_INTERP_FORMULAS=0 (read when a kernel is compiled;
    the array-only interpreter is what the formula path is tested against)."""
    return os.environ.get(SWITCH_ENV, "1") != "0"


def wrap(ctx: CompileContext, ins: ir.Instruction, run: Callable) -> Callable:
    """``run`` with the formula fast path in front, for the instructions ``plan`` knows."""
    p = plan(ctx, ins) if enabled() else None
    if p is None:
        return run
    readers, combine, dst = p

    def fast(b, lanes):
        if lanes is b.all:
            vals = []
            for r in readers:
                v = r(b)
                if v is None:
                    break
                vals.append(v)
            else:
                res = combine(b, *vals)
                if res is not None:
                    dst(b, lanes, res)
                    return
        run(b, lanes)
    return fast
