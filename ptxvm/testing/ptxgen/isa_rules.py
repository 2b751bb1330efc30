"""The PTX ISA's rules for the generator's arithmetic templates, one opcode family at a time.

``expand(op, form, types, groups)`` turns one (opcode, form, types) of the
instruction table into the variants the ISA allows: which modifier
combinations are valid (``.xorsign`` only with ``.abs``, a rounding mode where
the ISA requires one, no ``.sat`` on ``.f32x2``...), the operand types that
differ from the instruction type (``mul.wide``, mixed precision, shift
amounts), the sources that need safe values (integer divisors), which results
are approximate, and the minimum target.
"""

from __future__ import annotations

from .isa import (IRND, PRED_DST, PRED_SRC, RND, Opnd, Variant, default_operands, dst, has, merge_xorsign,
                  src, table_combos, type_bits, variant, wide)


# size: the ISA's combination rules, one short branch per opcode family, read as a table.
def expand(op: str, form, types: tuple[str, ...], groups) -> list[Variant]:
    """The valid variants of one (opcode, form, types); [] when the ISA has no such form."""
    t = types[0] if types else ""
    combos = table_combos(form, groups)
    fname = form.name
    sm = 80
    approx = None
    pair = ""
    mods_last = False
    ops: list[Opnd] | None = None
    keep = lambda c: True

    if op in ("add", "sub"):
        if fname == "int":
            keep = lambda c: not has(c, "cc")
            sm = 90 if t.endswith("x2") else 80
        elif fname == "int-sat":
            keep = lambda c: has(c, "sat") and not has(c, "cc")
        elif fname == "f32" and t == "f32x2":
            keep = lambda c: not has(c, "sat")
            sm = 100
        elif fname == "bf16":
            sm = 90
        elif fname == "mixed":
            # add{.rnd}{.sat}.f32.atype d, a, c (PTX ISA 8.6, sm_100)
            ops = [dst("f32"), src(types[1]), src("f32")]
            sm = 100
    elif op == "mul":
        if fname == "f32" and t == "f32x2":
            keep = lambda c: not has(c, "sat")
            sm = 100
        elif fname == "bf16":
            sm = 90
        elif fname == "int-wide":
            ops = [dst(wide(t)), src(t), src(t, imm=True)]
    elif op == "mad":
        if fname == "int-cc":
            return []
        if fname == "f32" or fname == "f64":
            keep = lambda c: has(c, *RND)
        elif fname == "int-wide":
            ops = [dst(wide(t)), src(t), src(t), src(wide(t), imm=True)]
    elif op in ("div", "rem"):
        if fname == "int":
            ops = [dst(t), src(t), src(t, safe="divisor")]
        elif fname == "f32-approx":
            approx = "div.approx"
        elif fname == "f32-full":
            approx = "div.full"
    elif op in ("abs", "neg"):
        if fname == "int":
            ops = [dst(t), src(t)]
    elif op in ("min", "max"):
        if fname == "int":
            sm = 90 if t.endswith("x2") else 80
        elif fname == "int-relu":
            sm = 90
        elif fname == "f32":
            # min{.ftz}{.NaN}{.xorsign.abs}.f32 d, a, b  and  min{.ftz}{.NaN}{.abs}.f32 d, a, b, c (sm_100)
            two = [c for c in combos if has(c, "xorsign") == has(c, "abs")]
            three = [c for c in combos if not has(c, "xorsign")]
            return [
                variant(op, form, types, [tuple(merge_xorsign(c)) for c in two],
                         [dst(t), src(t), src(t, imm=True)], sm=86),
                variant(op, form, types, three, [dst(t), src(t), src(t), src(t, imm=True)], sm=100),
            ]
        elif fname == "half":
            keep = lambda c: (has(c, "xorsign") == has(c, "abs")) and not (t.startswith("bf") and has(c, "ftz"))
            combos = [tuple(merge_xorsign(c)) for c in combos]
            sm = 86
    elif op in ("popc", "clz", "bfind"):
        ops = [dst("u32"), src(t)]
    elif op == "fns":
        ops = [dst("b32"), src("b32", imm=True), Opnd("imm", "r", "u32", True, 0, 31), src("s32", imm=True, lo=-40, hi=40)]
        sm = 70
    elif op == "bfe":
        ops = [dst(t), src(t), src("u32", imm=True, lo=0, hi=80), src("u32", imm=True, lo=0, hi=80)]
    elif op == "bfi":
        ops = [dst(t), src(t), src(t), src("u32", imm=True, lo=0, hi=80), src("u32", imm=True, lo=0, hi=80)]
    elif op == "szext":
        ops = [dst(t), src(t), src("u32", imm=True, lo=0, hi=40)]
    elif op == "bmsk":
        ops = [dst("b32"), src("u32", imm=True, lo=0, hi=40), src("u32", imm=True, lo=0, hi=40)]
    elif op in ("dp4a", "dp2a"):
        rt = "s32" if "s32" in types else "u32"
        ops = [dst(rt), src(types[0]), src(types[1]), src(rt, imm=True)]
    elif op == "testp":
        ops = [PRED_DST, src(t)]
    elif op == "fma":
        if fname == "f32" and t == "f32x2":
            keep = lambda c: not has(c, "sat")
            sm = 100
        elif fname == "f16":
            keep = lambda c: not (has(c, "sat") and has(c, "relu")) and not (has(c, "oob") and has(c, "ftz", "sat"))
            sm = 90
        elif fname == "bf16":
            sm = 90
        elif fname == "mixed":
            ops = [dst("f32"), src(types[1]), src(types[1]), src("f32")]
            sm = 100
    elif op in ("rcp", "sqrt"):
        if fname == "f32-approx":
            approx = op
    elif op in ("rcp.approx.ftz.f64", "rsqrt.approx.ftz.f64"):
        ops = [dst("f64"), src("f64")]
        approx = op
    elif op in ("rsqrt", "sin", "cos", "lg2", "ex2", "tanh"):
        approx = op if t == "f32" else f"{op}.{t}"
        if op == "ex2" and fname == "bf16":
            keep = lambda c: has(c, "ftz")
            sm = 90
        if op == "tanh":
            sm = 90 if t.startswith("bf") else 75
    elif op in ("set", "setp"):
        return _compare_variants(op, form, types, combos)
    elif op == "selp":
        ops = [dst(t), src(t), src(t, imm=True), PRED_SRC]
    elif op == "slct":
        ops = [dst(t), src(t), src(t, imm=True), src(types[1])]
    elif op in ("and", "or", "xor", "not"):
        n = 1 if op == "not" else 2
        if t == "pred":
            ops = [PRED_DST] + [PRED_SRC] * n
        else:
            ops = [dst(t)] + [src(t)] * (n - 1) + [src(t, imm=True)]
    elif op == "lop3":
        lut = Opnd("imm", "r", "b32", True, 0, 255)
        if fname == "boolop":
            # lop3.BoolOp.b32 d|p, a, b, c, immLut, q (PTX ISA 8.2, sm_70)
            return [variant(op, form, types, combos, [dst("b32"), src("b32"), src("b32"), src("b32"), lut,
                                                       PRED_SRC], pair="req")]
        ops = [dst("b32"), src("b32"), src("b32"), src("b32"), lut]
    elif op == "shf":
        ops = [dst("b32"), src("b32"), src("b32"), src("u32", imm=True, lo=0, hi=40)]
    elif op in ("shl", "shr"):
        ops = [dst(t), src(t), src("u32", imm=True, lo=0, hi=type_bits(t) + 4)]
    elif op == "mov":
        if t in ("b128",):
            return []           # the generator keeps no 128-bit registers
        ops = [PRED_DST, PRED_SRC] if t == "pred" else [dst(t), src(t, imm=True)]
    elif op == "prmt":
        ops = [dst("b32"), src("b32"), src("b32"), src("b32", imm=True, lo=0, hi=0xFFFF)]
    elif op == "cvt":
        return _cvt_variants(form, types, combos)
    elif op == "vabsdiff4":
        if len(set(types)) != 1:
            return []            # keep dtype = atype = btype (the common spelling)
        ops = [dst(t), src(t), src(t), src(t, imm=True)]
        mods_last = True
    elif op in ("mul24", "mad24", "sad"):
        pass

    if ops is None:
        ops = default_operands(form, types)
        if ops is None:
            return []
    combos = [c for c in combos if keep(c)]
    if not combos:
        return []
    return [variant(op, form, types, combos, ops, approx=approx, sm=sm, mods_last=mods_last, pair=pair)]


def _compare_variants(op, form, types, combos) -> list[Variant]:
    """setp/set: the ISA's order is CmpOp, BoolOp, ftz; a BoolOp adds the predicate source c."""
    fname = form.name
    if op == "set":
        dt, st = types
        if fname == "half":
            # set.CmpOp{.ftz}.{f16,bf16}.stype and set.CmpOp{.ftz}.{u16,s16,u32,s32}.{f16,bf16},
            # set.CmpOp{.ftz}.{f16x2,u32,s32}.f16x2 (bf16 likewise); no .ftz on bf16.
            ok = (dt == st) or (dt in ("u16", "s16", "u32", "s32") and st in ("f16", "bf16")) or \
                 (dt in ("u32", "s32") and st in ("f16x2", "bf16x2"))
            if not ok:
                return []
        vt = st
        d = dst(dt)
    else:
        vt = types[0]
        d = PRED_DST
    bf = vt.startswith("bf")
    sm = 90 if bf else 80
    out = []
    for with_bool in (False, True):
        cs = [c for c in combos if has(c, "and", "or", "xor") == with_bool]
        if "ftz" in form.groups and vt != "f32" and vt not in ("f16", "f16x2"):
            cs = [c for c in cs if not has(c, "ftz")]
        if not cs:
            continue
        srcs = [src(vt), src(vt, imm=True)] + ([PRED_SRC] if with_bool else [])
        # setp may write `p|q`; packed half setp writes two predicates, so `p|q` is required.
        pair = "" if op == "set" else ("req" if vt.endswith("x2") else "opt")
        out.append(variant(op, form, types, cs, [d] + srcs, sm=sm, pair=pair))
    return out


_FLOATS = ("f16", "bf16", "f32", "f64")
_INTS = ("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64")


def _cvt_variants(form, types, combos) -> list[Variant]:
    """cvt (PTX ISA §9.7.9.21): a rounding mode is mandatory for narrowing float conversions,
    every float<->int conversion and the packed forms; .ftz only where an .f32 is involved."""
    fname = form.name
    if fname in ("int-int", "float-int", "int-float", "float-float"):
        d, a = types
        if d not in _FLOATS + _INTS or a not in _FLOATS + _INTS:
            return []            # the ISA's cvt types have no .bN
        f32 = "f32" in (d, a)
        sm = 90 if "bf16" in (d, a) and not (d == "f32" or a == "f32") else 80

        def ok(c) -> bool:
            if has(c, "ftz") and not f32:
                return False
            if fname == "int-int":
                return not has(c, *RND, *IRND)
            if fname == "float-int":                  # int -> float
                return has(c, *RND)
            if fname == "int-float":                  # float -> int
                return has(c, *IRND)
            # float -> float
            if has(c, "relu", "satfinite"):
                return d in ("f16", "bf16") and a == "f32" and has(c, "rn", "rz") and not has(c, "ftz", "sat") \
                    and not has(c, *IRND)
            narrowing = _FLOATS.index(d) < _FLOATS.index(a) or {d, a} == {"f16", "bf16"}
            if d == a:
                return not has(c, *RND)
            if narrowing:
                return has(c, *RND) and not has(c, *IRND)
            return not has(c, *RND, *IRND)           # widening is exact
        cs = [c for c in combos if ok(c)]
        if not cs:
            return []
        return [variant("cvt", form, types, cs, [dst(d), src(a)], sm=sm)]
    if fname == "tf32":
        cs = [c for c in combos if (has(c, "rna") and not has(c, "relu", *RND)) or
              (has(c, "rn", "rz") and not has(c, "rna"))]
        return [variant("cvt", form, types, cs, [dst("b32"), src("f32")], sm=90)]
    if fname == "pack-x2":
        return [variant("cvt", form, types, combos, [dst("b32"), src("f32"), src("f32")])]
    # The sm_100 narrow-float forms and .rs are arch-specific: ptxas 13.0 wants sm_100a/sm_103a.
    if fname == "pack-x2-rs":
        return [variant("cvt", form, types, combos, [dst("b32"), src("f32"), src("f32"), src("b32")],
                         sm=100, arch_a=True)]
    if fname == "fp8-from-f32":
        d = types[0]
        cs = [c for c in combos if has(c, "satfinite") and has(c, "rn")]
        fp8 = d in ("e4m3x2", "e5m2x2")
        return [variant("cvt", form, types, cs, [dst("b8" if d == "e2m1x2" else "b16"), src("f32"), src("f32")],
                         sm=89 if fp8 else 100, arch_a=not fp8)]
    if fname == "fp8-from-half":
        cs = [c for c in combos if has(c, "satfinite") and has(c, "rn")]
        return [variant("cvt", form, types, cs, [dst("b16"), src("b32")], sm=89)]
    if fname == "half-from-fp8":
        a = types[1]
        cs = [c for c in combos if has(c, "rn")]
        fp8 = a in ("e4m3x2", "e5m2x2")
        return [variant("cvt", form, types, cs, [dst("b32"), src("b8" if a == "e2m1x2" else "b16")],
                         sm=89 if fp8 else 100, arch_a=not fp8)]
    if fname == "ue8m0-from-f32":
        cs = [c for c in combos if has(c, "rz", "rp")]
        srcs = [src("f32"), src("f32")] if types[1] == "f32" else [src("b32")]
        return [variant("cvt", form, types, cs, [dst("b16")] + srcs, sm=100, arch_a=True)]
    if fname == "bf16x2-from-ue8m0":
        return [variant("cvt", form, types, [("rn",)], [dst("b32"), src("b16")], sm=100, arch_a=True)]
    return []                    # x4-rs: a vector source operand
