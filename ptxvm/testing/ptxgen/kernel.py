"""A whole generated module: declarations, prologue, the rendered body, epilogue.

The prologue computes thread ids and the addresses of each thread's words in
the four arrays (``program`` documents the layout), loads every pool
register from ``in`` and, when the body uses shared memory, fills each
thread's shared slot and zeroes the shared counters behind a barrier.  The
epilogue stores every pool register to ``out``, then (after a barrier) the
shared slots and counters.
"""

from __future__ import annotations

from .program import (CLASS_BITS, MAX_LOOP_DEPTH, OWN_WORDS, POOL, REG_DECL, SMEM_COUNTERS, SMEM_WORDS,
                      Layout, pool_order)
from .render import Renderer

KERNEL = "fuzz"
PTX_VERSION = "8.7"       # new enough for every form the templates use (f32x2, cvt.rs are 8.6/8.7)


# size: the kernel's PTX text top to bottom (declarations, loads, body, stores), a template
# read in order.
def render_kernel(chunks, layout: Layout) -> tuple[str, tuple[str, ...], int]:
    """The whole module: header, declarations, prologue, body, epilogue.

    Returns the PTX text, the approximation key of each ``apx`` record slot, and
    the target sm the module was written for."""
    r = Renderer(layout)
    r.block(chunks)
    body = r.lines
    T, nt = layout.threads, layout.nt
    out: list[str] = []
    e = lambda s: out.append("    " + s)
    for cls in ("h", "r", "d", "p"):
        e(f".reg .{REG_DECL[cls]} %{cls}<{POOL[cls]}>;")
    e(".reg .b16 %t16, %s16, %xh;")
    if any("%t8" in line for line in body):
        e(".reg .b8 %t8;")                         # .b8 operands (render.Renderer.inst_text)
    e(".reg .b32 %kparam, %ltid, %lcta, %gtid, %t32, %tm, %s32, %xr, " + ", ".join(f"%lc{i}" for i in range(MAX_LOOP_DEPTH)) + ";")
    e(".reg .b64 %t64, %s64, %xd, %ain, %ain0, %aout, %aout0, %aown, %aapx, %gctr, %sbase, %sown, %sctr;")
    e(".reg .pred %tp, %tpu, " + ", ".join(f"%pl{i}" for i in range(MAX_LOOP_DEPTH)) + ";")
    if r.uses_shared:
        e(f".shared .align 16 .b8 smem[{(SMEM_WORDS * nt + SMEM_COUNTERS) * 8}];")
    # Thread ids: linear in the CTA (x fastest), CTA linear, global linear.
    e("mov.u32 %ltid, %tid.x;")
    e("mov.u32 %t32, %tid.y;")
    e(f"mad.lo.u32 %ltid, %t32, {layout.block[0]}, %ltid;")
    e("mov.u32 %lcta, %ctaid.x;")
    e("mov.u32 %t32, %ctaid.y;")
    e(f"mad.lo.u32 %lcta, %t32, {layout.grid[0]}, %lcta;")
    e(f"mad.lo.u32 %gtid, %lcta, {nt}, %ltid;")
    e("ld.param.u32 %kparam, [p_k];")
    for name, preg in (("in", "%ain0"), ("out", "%aout0"), ("mem", "%gctr"), ("apx", "%aapx")):
        e(f"ld.param.u64 {preg}, [p_{name}];")
        e(f"cvta.to.global.u64 {preg}, {preg};")
    e("mul.wide.u32 %t64, %gtid, 8;")
    e("add.s64 %ain, %ain0, %t64;")
    e("add.s64 %aout, %aout0, %t64;")
    e("add.s64 %aapx, %aapx, %t64;")
    e(f"mul.wide.u32 %t64, %gtid, {OWN_WORDS * 8};")
    e("add.s64 %aown, %gctr, %t64;")
    e(f"add.s64 %gctr, %gctr, {OWN_WORDS * T * 8};")
    for k, (cls, i) in enumerate(pool_order()):
        if cls == "p":
            e(f"ld.global.b32 %t32, [%ain+{k * T * 8}];")
            e(f"setp.ne.b32 %p{i}, %t32, 0;")
        else:
            e(f"ld.global.b{CLASS_BITS[cls]} %{cls}{i}, [%ain+{k * T * 8}];")
    if r.uses_shared:
        # Shared memory starts undefined: every thread fills its own slot, the first
        # threads zero the counters, and a barrier publishes both.
        e("mov.u64 %sbase, smem;")
        e(f"mul.wide.u32 %t64, %ltid, {SMEM_WORDS * 8};")
        e("add.s64 %sown, %sbase, %t64;")
        e(f"add.s64 %sctr, %sbase, {SMEM_WORDS * nt * 8};")
        for w in range(SMEM_WORDS):
            e(f"st.shared.b64 [%sown+{w * 8}], %d{w % POOL['d']};")
        e(f"setp.lt.u32 %tp, %ltid, {SMEM_COUNTERS};")
        e("mul.wide.u32 %t64, %ltid, 8;")
        e("add.s64 %t64, %sctr, %t64;")
        e("mov.b64 %s64, 0;")
        e("@%tp st.shared.b64 [%t64], %s64;")
        e("bar.sync 0;")
    out.extend(body)
    for k, (cls, i) in enumerate(pool_order()):
        if cls == "p":
            e(f"selp.u32 %t32, 1, 0, %p{i};")
            e(f"st.global.b32 [%aout+{k * T * 8}], %t32;")
        else:
            e(f"st.global.b{CLASS_BITS[cls]} [%aout+{k * T * 8}], %{cls}{i};")
    if r.uses_shared:
        e("bar.sync 0;")
        base = layout.nregs * T
        for w in range(SMEM_WORDS):
            e(f"ld.shared.b64 %t64, [%sown+{w * 8}];")
            e(f"st.global.b64 [%aout+{(base + w * T) * 8}], %t64;")
        e(f"setp.lt.u32 %tp, %ltid, {SMEM_COUNTERS};")
        e(f"mad.lo.u32 %t32, %lcta, {SMEM_COUNTERS}, %ltid;")
        e("mul.wide.u32 %t64, %t32, 8;")
        e("add.s64 %t64, %aout0, %t64;")
        e("mul.wide.u32 %s64, %ltid, 8;")
        e("add.s64 %s64, %sctr, %s64;")
        e("@%tp ld.shared.b64 %s64, [%s64];")
        e(f"@%tp st.global.b64 [%t64+{(base + SMEM_WORDS * T) * 8}], %s64;")
    e("ret;")
    sm = r.sm
    params = ", ".join([f".param .u64 p_{n}" for n in ("in", "out", "mem", "apx")] + [".param .u32 p_k"])
    text = "\n".join([
        f".version {PTX_VERSION}", f".target sm_{sm}{'a' if r.arch_a else ''}", ".address_size 64", "",
        *r.functions,
        f".visible .entry {KERNEL}({params})", "{", *out, "}", "",
    ])
    return text, tuple(r.approx_ops), sm
