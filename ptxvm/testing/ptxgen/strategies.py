"""Hypothesis strategies drawing generated programs (``program`` chunks).

Every choice is a hypothesis draw whose simplest value (index 0, ``False``,
``None``, the shortest list) is the simplest program, so failures shrink to
few chunks of plain instructions on register 0.  What a chunk may contain
depends on its context: barriers and warp-synchronous instructions only where
every thread of the CTA executes the code together (``Ctx.uniform``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache

from hypothesis import strategies as st

from .draws import BOOL, any_of, ints, maybe, pick, reg, spread
from .isa import Opnd, Variant, arith_variants, reg_class
from .program import (MAX_LOOP_DEPTH, POOL, Approx, Atomic, Call, Carry, Exchange, If, Imm, Inst, Loop, Mem,
                      PartialWarp, Switch)
from .refusals import REFUSED_TEMPLATES, excluded
from .strategies_mem import atomic, barrier, exchange, mem, partial_warp, special, warp
from .values import F32_SPECIAL, F64_SPECIAL, int_specials

MAX_DEPTH = 2             # nesting of if/loop/switch
MAX_BODY = 3              # chunks in a nested body


@dataclass(frozen=True)
class Ctx:
    uniform: bool         # every thread of the CTA runs this code together
    depth: int = 0
    loops: int = 0
    bugs: bool = False    # also draw forms the interpreter is known to get wrong
    calls: bool = False   # also draw calls of generated `.func`s (Call)


# ----------------------------------------------------------------------------- instructions

Usable = tuple[tuple[Variant, tuple[tuple[str, ...], ...]], ...]


@cache
def _arith(include_known_bugs: bool = False) -> tuple[tuple[str, ...], dict[str, Usable], Usable]:
    """(opcodes, opcode -> exact variants with their usable combos, approx variants)."""
    by: dict[str, list] = {}
    approx: list = []
    for v in arith_variants():
        combos = tuple(c for c in v.combos if not excluded(v, c, include_known_bugs))
        if not combos:
            continue
        (approx if v.approx else by.setdefault(v.opcode, [])).append((v, combos))
    # Opcodes with many forms (cvt, set) come up more often, by the logarithm of their count.
    weighted = tuple(op for op, vs in by.items() for _ in range(1 + int(math.log2(len(vs)))))
    return weighted, {k: tuple(x) for k, x in by.items()}, tuple(approx)


@cache
def _imm(o: Opnd) -> st.SearchStrategy[Imm]:
    if o.lo is not None:
        mask = (1 << max(int("".join(ch for ch in o.type if ch.isdigit()) or 32), 8)) - 1
        return st.integers(o.lo, o.hi).map(lambda v: Imm(v & mask))
    if o.type == "f32":
        return st.one_of(pick(F32_SPECIAL), st.integers(0, 2**32 - 1)).map(Imm)
    if o.type == "f64":
        return st.one_of(pick(F64_SPECIAL), st.integers(0, 2**64 - 1)).map(Imm)
    bits = int(o.type[1:])
    return st.one_of(pick(int_specials(bits)), st.integers(0, 2**bits - 1)).map(Imm)


@cache
def _operand(o: Opnd) -> st.SearchStrategy:
    if o.role == "imm":
        return _imm(o)
    if o.role == "s" and o.imm:
        return st.one_of(reg(o.cls), _imm(o))
    return reg(o.cls)




@cache
def inst(approx: bool = False, include_known_bugs: bool = False) -> st.SearchStrategy[Inst]:
    return _inst(approx, include_known_bugs)


@st.composite
def _inst(draw, approx: bool, include_known_bugs: bool) -> Inst:
    opcodes, by, approx_variants = _arith(include_known_bugs)
    # One wide integer picks opcode, form and modifiers: mixed-radix digits are
    # close to uniform (hypothesis's small-index bias and its example mutations
    # would otherwise starve the rarer of ~500 forms) and still shrink to index 0.
    x = spread(draw)
    if approx:
        v, combos = approx_variants[x % len(approx_variants)]
        x //= len(approx_variants)
    else:
        forms = by[opcodes[x % len(opcodes)]]
        x //= len(opcodes)
        v, combos = forms[x % len(forms)]
        x //= len(forms)
    combo = combos[x % len(combos)]
    # Hypothesis spends more per draw than on anything else here: the register
    # operands, the `!`s, the pair and the guard come from one integer each (all
    # shrink to 0: register 0, no `!`, no pair, no guard).
    code = draw(ints(0, _radix(v, approx) - 1))
    args = []
    for o in v.operands:
        if _drawn(o, approx):
            args.append(draw(_operand(o)))
        else:
            code, k = divmod(code, POOL[o.cls])
            args.append(k)
    np1 = POOL["p"] + 1
    flags = draw(ints(0, 4 * np1 * np1 - 1))        # `!` on c | guard register | `!` on it | pair
    flags, neg = divmod(flags, 2)
    flags, g = divmod(flags, np1)
    p, guard_neg = divmod(flags, 2)
    negs = tuple(o.role == "sp" and v.opcode in ("set", "setp") and bool(neg) for o in v.operands)
    guard = None if approx or g == 0 else (g - 1, bool(guard_neg))
    pair = {"req": p % POOL["p"], "opt": p - 1 if p else None}.get(v.pair)
    return Inst(v, combo, tuple(args), negs if any(negs) else (), pair, guard)


def _drawn(o: Opnd, approx: bool) -> bool:
    """Operands drawn on their own (immediates); the others are pool registers.
    Approximations take registers only: their record stores the source registers."""
    return o.role == "imm" or (o.role == "s" and o.imm and not approx)


@cache
def _radix(v: Variant, approx: bool) -> int:
    n = 1
    for o in v.operands:
        if not _drawn(o, approx):
            n *= POOL[o.cls]
    return n


@cache
def _steps(cls: str, n: int) -> st.SearchStrategy:
    return st.lists(st.tuples(*[reg(cls)] * n), min_size=2, max_size=4)


@st.composite
def carry(draw) -> Carry:
    kind = draw(pick(("add", "sub", "mad")))
    t = draw(pick(("u32", "s32", "u64", "s64")))
    n_src = 3 if kind == "mad" else 2
    cls = reg_class(t)
    steps = draw(_steps(cls, n_src + 1))
    return Carry(kind, t, tuple(steps))


# ----------------------------------------------------------------------------- structure

@cache
def body(ctx: Ctx, max_size: int = MAX_BODY) -> st.SearchStrategy[tuple]:
    return st.lists(chunk(ctx), min_size=1, max_size=max_size).map(tuple)


@cache
def chunk(ctx: Ctx) -> st.SearchStrategy:
    return _chunk(ctx)


@cache
def _kinds(ctx: Ctx) -> tuple[str, ...]:
    """What a chunk may be here; repeats weight the draw (plain instructions first: they shrink best)."""
    kinds = ["inst"] * 8 + ["approx", "carry", "mem", "mem", "atomic", "special"]
    if ctx.depth < MAX_DEPTH:
        kinds += ["if", "if"] + (["loop"] if ctx.loops < MAX_LOOP_DEPTH else [])
        kinds += [] if "switch" in REFUSED_TEMPLATES else ["switch"]
    if ctx.uniform:
        kinds += ["exchange", "warp", "warp", "partial", "barrier"]
    if ctx.calls:
        kinds += ["call", "call"]
    return tuple(kinds)


@st.composite
def _chunk(draw, ctx: Ctx):
    kind = any_of(draw, _kinds(ctx))
    if kind == "inst":
        return draw(inst(include_known_bugs=ctx.bugs))
    if kind == "approx":
        return Approx(draw(inst(approx=True, include_known_bugs=ctx.bugs)))
    if kind == "carry":
        return draw(carry())
    if kind == "mem":
        return draw(mem())
    if kind == "atomic":
        return draw(atomic())
    if kind == "special":
        return draw(special())
    if kind == "exchange":
        return draw(exchange())
    if kind == "warp":
        return draw(warp())
    if kind == "partial":
        return draw(partial_warp())
    if kind == "barrier":
        return draw(barrier())
    if kind == "call":
        plain = st.one_of(inst(include_known_bugs=ctx.bugs), carry())
        return Call(tuple(draw(st.lists(plain, min_size=1, max_size=2 * MAX_BODY))))
    inner = replace(ctx, uniform=False, depth=ctx.depth + 1)
    if kind == "if":
        uniform = ctx.uniform and draw(BOOL)
        sub = replace(ctx, uniform=uniform, depth=ctx.depth + 1)
        then = draw(body(sub))
        orelse = draw(maybe(body(sub)))
        return If(draw(reg("p")), draw(BOOL), then, orelse, uniform, draw(ints(0, 1)))
    if kind == "loop":
        trips = draw(ints(-1, 4))
        sub = replace(ctx, uniform=ctx.uniform and trips != 0, depth=ctx.depth + 1, loops=ctx.loops + 1)
        return Loop(trips, draw(body(sub)), draw(reg("r")))
    n = draw(pick((2, 4)))
    return Switch(draw(reg("r")), tuple(draw(body(inner, 2)) for _ in range(n)))


def cost(c) -> int:
    """Roughly the PTX lines a chunk renders to (bounds program size)."""
    if isinstance(c, If):
        return 3 + sum(map(cost, c.then)) + sum(map(cost, c.orelse or ()))
    if isinstance(c, Loop):
        return 4 + sum(map(cost, c.body))
    if isinstance(c, Switch):
        return 4 + sum(cost(x) for case in c.cases for x in case)
    if isinstance(c, Call):
        return 4 + sum(map(cost, c.body))
    if isinstance(c, (Mem, Atomic)):
        return 3
    if isinstance(c, Exchange):
        return 6
    if isinstance(c, PartialWarp):
        return 5
    if isinstance(c, Approx):
        return 4
    if isinstance(c, Carry):
        return len(c.steps)
    if isinstance(c, Inst):
        return 1 + 2 * sum(o.safe == "divisor" for o in c.variant.operands)
    return 1


@cache
def _segments(ctx: Ctx, least: int) -> st.SearchStrategy:
    return st.lists(st.lists(chunk(ctx), min_size=least, max_size=least + 6), min_size=1, max_size=6)


@st.composite
def program(draw, max_instructions: int = 40, include_known_bugs: bool = False, calls: bool = False) -> tuple:
    """A top-level body whose estimated size stays within ``max_instructions``."""
    # Segments of chunks: hypothesis's lists average a few elements whatever their
    # bound, so a list of lists, whose segments have a drawn minimum length, fills
    # the size budget; the minimum shrinks to 1, then both levels shrink by deletion.
    least = draw(pick((1, 4, 8)))
    segments = draw(_segments(Ctx(True, bugs=include_known_bugs, calls=calls), least))
    out, total = [], 0
    for c in (c for seg in segments for c in seg):
        total += cost(c)
        if out and total > max_instructions:
            break
        out.append(c)
    return tuple(out)

