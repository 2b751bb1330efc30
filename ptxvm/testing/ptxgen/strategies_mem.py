"""Strategies for the memory, atomic, warp, barrier and special-register chunks.

Each draws a ``program`` chunk whose addresses stay inside the calling
thread's own slots (or the read-only input, or the contended counters), so a
program built from them has no data races and never faults.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .draws import BOOL, any_of, ints, pick, reg
from .isa import reg_class, type_size
from .program import (GLOBAL_COUNTER_OPS, PartialWarp, OWN_WORDS, POOL, SHARED_COUNTER_OPS, SMEM_WORDS,
                      Atomic, Barrier, Exchange, Mem, Special, Warp)

LD_TYPES = ("b32", "u8", "s8", "b8", "u16", "s16", "b16", "u32", "s32", "b64", "u64", "s64", "f16", "bf16",
            "f16x2", "bf16x2", "f32", "f64")
LD_COPS = ("", "ca", "cg", "cs", "lu", "cv", "volatile", "relaxed.gpu", "acquire.gpu", "weak")
ST_COPS = ("", "wb", "cg", "cs", "wt", "volatile", "relaxed.gpu", "release.gpu", "weak")
SHARED_LD_COPS = ("", "volatile", "relaxed.cta", "acquire.cta")
SHARED_ST_COPS = ("", "volatile", "relaxed.cta", "release.cta")


@st.composite
def mem(draw) -> Mem:
    op = any_of(draw, ("ld_own", "st_own", "gather", "ld_sown", "st_sown", "generic_global", "generic_shared",
                       "cp_async"))
    if op == "cp_async":
        return draw(cp_async())
    t = any_of(draw, LD_TYPES)
    size = type_size(t)
    window = SMEM_WORDS * 8 if op in ("ld_sown", "st_sown", "generic_shared") else OWN_WORDS * 8
    vec = draw(pick(tuple(v for v in (1, 2, 4) if size * v <= 16 and (v == 1 or size >= 2))))
    span = size * vec
    # Gathers read inside one 8-byte word of `in`, or a 16-byte pair at an even index.
    limit = max(8, span) if op == "gather" else window
    offset = draw(ints(0, limit // span - 1)) * span
    n = POOL[reg_class(t)]
    first = draw(ints(0, n - 1))
    regs = [(first + j) % n for j in range(vec)]           # distinct registers for vectors
    cop = ""
    if op == "ld_own":
        cop = any_of(draw, LD_COPS)
    elif op == "st_own":
        cop = any_of(draw, ST_COPS)
    elif op == "ld_sown":
        cop = any_of(draw, SHARED_LD_COPS)
    elif op == "st_sown":
        cop = any_of(draw, SHARED_ST_COPS)
    elif op == "gather":
        cop = draw(pick(("", "nc", "ldu")))
    else:
        cop = draw(pick(("ld", "st")))
    return Mem(op, t, tuple(regs), offset, vec, cop, draw(reg("r" if op == "gather" else "p")))


@st.composite
def cp_async(draw) -> Mem:
    """cp.async of 4, 8 or 16 bytes from a word of ``in`` to the thread's own shared slots: the
    whole size, an immediate src-size (zero fill), or an ignore-src predicate; then a wait."""
    size = draw(pick((4, 8, 16)))
    offset = draw(ints(0, SMEM_WORDS * 8 // size - 1)) * size
    fill = draw(pick(("", "size", "ignore")))
    cop = "cg" if size == 16 and draw(BOOL) else "ca"
    if fill == "size":
        cop += f":{draw(ints(0, size))}"
    regs = (draw(reg("p")),) if fill == "ignore" else ()
    return Mem("cp_async", f"b{size * 8}", regs, offset, 1, cop, draw(reg("r")))


_OWN_ATOMS = tuple((op, t) for op, ts in (
    ("add", ("u32", "s32", "u64", "f32", "f64", "f16", "f16x2", "bf16", "bf16x2")), ("and", ("b32", "b64")),
    ("or", ("b32", "b64")), ("xor", ("b32", "b64")), ("exch", ("b32", "b64")), ("cas", ("b32", "b64", "b16")),
    ("inc", ("u32",)), ("dec", ("u32",)), ("min", ("u32", "s32", "u64", "s64")),
    ("max", ("u32", "s32", "u64", "s64"))) for t in ts)
ATOM_SEMS = ("", "relaxed.gpu", "acq_rel.gpu", "acquire.gpu", "release.gpu", "relaxed.sys", "relaxed.cta")
RED_SEMS = ("", "relaxed.gpu", "release.gpu", "relaxed.cta")


@st.composite
def atomic(draw) -> Atomic:
    where = draw(pick(("own", "gctr", "sctr")))
    if where == "own":
        op, t = any_of(draw, _OWN_ATOMS)
        red = op not in ("exch", "cas") and draw(BOOL)
        size = type_size(t)
        offset = draw(ints(0, OWN_WORDS * 8 // size - 1)) * size
        cls = reg_class(t)
        regs = tuple(draw(reg(cls)) for _ in range(3 if op == "cas" else 2))
        sem = any_of(draw, RED_SEMS if red else ATOM_SEMS)
        return Atomic("own", op, t, regs, offset, red, sem)
    table = GLOBAL_COUNTER_OPS if where == "gctr" else SHARED_COUNTER_OPS
    k = draw(ints(0, len(table) - 1))
    op, t = table[k]
    cls = "r" if t in ("f32", "f64") else reg_class(t)
    red = draw(BOOL)
    sem = any_of(draw, RED_SEMS if red else ATOM_SEMS)
    return Atomic(where, op, t, (draw(reg(cls)),), k, red, sem)


# ----------------------------------------------------------------------------- warp, barriers, specials

SHFL_C = (0x1F, 0x0, 0x181F, 0x1C1F, 0x1E1F, 0x101F, 0x8)
SHFL_CS = st.one_of(st.sampled_from(SHFL_C), st.integers(0, 0x1FFF))   # clamp | segment mask << 8


@st.composite
def warp(draw, op: str | None = None) -> Warp:
    op = op or any_of(draw, ("shfl", "vote", "match", "redux", "activemask", "barwarp"))
    if op == "shfl":
        mode = draw(pick(("bfly", "up", "down", "idx")))
        lane = draw(ints(-1, 31))
        c = draw(SHFL_CS)
        regs = (draw(reg("r")), draw(reg("r")), draw(reg("r")))
        if draw(BOOL):
            regs += (draw(reg("p")),)
        return Warp("shfl", mode, "b32", regs, (lane, c))
    tiled = draw(BOOL)
    if op == "vote":
        mode = draw(pick(("any", "all", "uni", "ballot")))
        return Warp("vote", mode, "pred", (draw(reg("r" if mode == "ballot" else "p")), draw(reg("p"))),
                    (int(tiled),), (False, draw(BOOL)))
    if op == "match":
        mode = draw(pick(("any", "all")))
        t = draw(pick(("b32", "b64")))
        regs = (draw(reg("r")), draw(reg(reg_class(t))))
        if mode == "all" and draw(BOOL):
            regs += (draw(reg("p")),)
        return Warp("match", mode, t, regs, (int(tiled),))
    if op == "redux":
        mode, t = draw(pick((("add", "u32"), ("add", "s32"), ("min", "u32"), ("min", "s32"),
                                        ("max", "u32"), ("max", "s32"), ("and", "b32"), ("or", "b32"),
                                        ("xor", "b32"))))
        return Warp("redux", mode, t, (draw(reg("r")), draw(reg("r"))), (int(tiled),))
    return Warp(op, "", "b32", (draw(reg("r")),))


@st.composite
def partial_warp(draw) -> PartialWarp:
    """A warp operation for the first k lanes of each warp. Only forms whose result is defined
    with lanes missing: votes, match, redux, activemask, and shfl.idx from a lane inside the mask
    (any other shuffle may read a lane that does not take part)."""
    k = draw(ints(1, 31))
    op = any_of(draw, ("shfl", "vote", "match", "redux", "activemask"))
    if op == "shfl":
        regs = (draw(reg("r")), draw(reg("r")), 0)
        if draw(BOOL):
            regs += (draw(reg("p")),)
        return PartialWarp(k, Warp("shfl", "idx", "b32", regs, (draw(ints(0, 30)), 0x1F)))
    w = draw(warp(op))
    if w.imm:                             # never tiled: the mask is the partial one
        w = Warp(w.op, w.mode, w.type, w.regs, (0,) * len(w.imm), w.negs)
    return PartialWarp(k, w)


@st.composite
def barrier(draw) -> Barrier:
    op = any_of(draw, ("bar.sync", "barrier.sync", "barrier.sync.aligned", "bar.sync.n", "bar.red.popc",
                     "bar.red.and", "bar.red.or"))
    if op.startswith("bar.red"):
        return Barrier(op, (draw(reg("r" if op == "bar.red.popc" else "p")), draw(reg("p"))), draw(BOOL))
    return Barrier(op)


SREGS = ("%laneid", "%tid.x", "%tid.y", "%ntid.x", "%ctaid.x", "%nctaid.x", "%lanemask_eq", "%lanemask_lt",
         "%lanemask_le", "%lanemask_gt", "%lanemask_ge", "%dynamic_smem_size")
SYNC_HINTS = ("membar.cta", "membar.gl", "fence.acq_rel.gpu", "fence.sc.cta", "nanosleep", "prefetch.global.L2",
              "prefetchu.L1")


@st.composite
def special(draw) -> Special:
    return Special(any_of(draw, any_of(draw, (SREGS, SYNC_HINTS))), draw(reg("r")))


@st.composite
def exchange(draw) -> Exchange:
    t = any_of(draw, ("b32", "b64", "b16", "u8", "f32", "s16", "f64"))
    cls = reg_class(t)
    return Exchange(t, draw(reg(cls)), draw(reg(cls)), draw(pick(("xor", "add"))),
                    draw(ints(1, 31)),
                    draw(pick(("bar.sync", "barrier.sync", "barrier.sync.aligned", "bar.sync.n"))))
