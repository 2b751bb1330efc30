"""Instruction templates for the random-program generator, derived from ``isa/instructions.toml``.

The table says which opcodes are ``supported``, their forms, type slots, modifier
groups (with the groups a form requires) and operand roles.  It does not say
everything the PTX ISA says about *combinations* (``.xorsign`` needs ``.abs``,
narrowing ``cvt`` needs a rounding mode, ``.f32x2`` takes no ``.sat``...), nor
which source values make a result unspecified (integer division by zero).  Those
ISA rules live here, as small per-opcode filters over the combinations the
table allows, so every template is valid PTX by construction.

A :class:`Variant` is one (opcode, form, types) with the list of modifier
combinations it accepts and one :class:`Opnd` per operand.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

from ...ir.types import ScalarType
from ...isa import TABLE, RoleKind, Status

# Opcodes the arithmetic templates cover (PTX ISA §9.7.1-9.7.9 register-to-register
# instructions).  Memory, control flow, warp and barrier instructions have their
# own hand-written templates in program, because their operands are not
# plain registers (addresses, labels, member masks) and their validity depends
# on the surrounding program (alignment, convergence).
ARITH_OPCODES = (
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min", "max",
    "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "szext", "bmsk", "dp4a", "dp2a",
    "testp", "copysign", "fma", "rcp", "rcp.approx.ftz.f64", "sqrt", "rsqrt", "rsqrt.approx.ftz.f64",
    "sin", "cos", "lg2", "ex2", "tanh", "set", "setp", "selp", "slct", "and", "or", "xor", "not", "cnot",
    "lop3", "shf", "shl", "shr", "mov", "prmt", "cvt", "cvt.pack", "vabsdiff4",
)

HALF = ("f16", "bf16", "f16x2", "bf16x2")
NO_IMM_TYPES = HALF + ("f32x2", "u16x2", "s16x2", "pred")


def reg_class(t: str) -> str:
    """Register pool holding a value of PTX type ``t``: p(red), h (b16), r (b32), d (b64)."""
    if t == "pred":
        return "p"
    bits = type_bits(t)
    return {8: "h", 16: "h", 32: "r", 64: "d"}[bits]


def type_bits(t: str) -> int:
    return max(ScalarType(t).bits, 8)


def type_size(t: str) -> int:
    """Bytes a value of type ``t`` occupies in memory."""
    return type_bits(t) // 8


@dataclass(frozen=True)
class Opnd:
    """One operand of a template.

    ``role``: "d" value destination, "dp" predicate destination, "s" value source,
    "sp" predicate source (may be written negated), "imm" an immediate only.
    ``imm``: whether a value source may be an immediate of ``type``.
    ``lo``/``hi``: range of an immediate (inclusive), when it is constrained.
    ``safe``: "divisor" for integer divisors (never 0, never -1: both give
    unspecified results), "" otherwise.
    """

    role: str
    cls: str
    type: str
    imm: bool = False
    lo: int | None = None
    hi: int | None = None
    safe: str = ""


@dataclass(frozen=True)
class Variant:
    opcode: str                          # table key, e.g. "add", "rcp.approx.ftz.f64"
    form: str
    types: tuple[str, ...]
    combos: tuple[tuple[str, ...], ...]  # accepted modifier combinations (dotted parts, ISA order)
    operands: tuple[Opnd, ...]
    approx: str | None = None            # key into the approximation bounds when inexact
    sm: int = 80                         # minimum target the ISA states for this form
    mods_last: bool = False              # video instructions write modifiers after the types
    pair: str = ""                       # "opt"/"req": destination may/must be written `%r|%p`
    arch_a: bool = False                 # needs the arch-specific target (sm_100a), as ptxas says

    def text(self, combo: tuple[str, ...]) -> str:
        mods = [m for m in combo if m]
        parts = [self.opcode] + (list(self.types) + mods if self.mods_last else mods + list(self.types))
        return ".".join(parts)

    @property
    def key(self) -> str:
        return f"{self.opcode}:{self.form}:{'.'.join(self.types)}"


# ----------------------------------------------------------------------------- ISA rules

RND = ("rn", "rz", "rm", "rp")
IRND = ("rni", "rzi", "rmi", "rpi")


def optional(*values: str) -> tuple[str, ...]:
    return ("",) + values


def table_combos(form, spec_groups: dict[str, frozenset[str]]) -> list[tuple[str, ...]]:
    """Every combination of the form's modifier groups: one value or none per group
    (none is not offered for the groups the form requires)."""
    slots = []
    for g in form.groups:
        values = tuple(sorted(spec_groups[g]))
        slots.append(values if g in form.required else optional(*values))
    return [tuple(c) for c in itertools.product(*slots)]


def has(combo: tuple[str, ...], *mods: str) -> bool:
    return any(m in combo for m in mods)


def src(t: str, imm: bool = False, **kw) -> Opnd:
    return Opnd("s", reg_class(t), t, imm and t not in NO_IMM_TYPES, **kw)


def dst(t: str) -> Opnd:
    return Opnd("d", reg_class(t), t)


PRED_DST = Opnd("dp", "p", "pred")
PRED_SRC = Opnd("sp", "p", "pred")


def merge_xorsign(c: tuple[str, ...]) -> list[str]:
    """`.xorsign.abs` is written as that pair, in that order, after `.NaN`."""
    out = [m for m in c if m not in ("xorsign", "abs")]
    if "xorsign" in c:
        out += ["xorsign", "abs"]
    elif "abs" in c:
        out.append("abs")
    return out


def wide(t: str) -> str:
    return t[0] + str(int(t[1:]) * 2)


def variant(op, form, types, combos, ops, approx=None, sm=80, mods_last=False, pair="", arch_a=False) -> Variant:
    seen = list(dict.fromkeys(tuple(m for m in c if m) for c in combos))
    return Variant(op, form.name, tuple(types), tuple(seen), tuple(ops), approx, sm, mods_last, pair, arch_a)


def default_operands(form, types) -> list[Opnd] | None:
    """Operands from the table's roles: untyped ones take the instruction type."""
    out: list[Opnd] = []
    srcs = [r for r in form.operands if r.kind is RoleKind.SRC and not r.optional]
    for r in form.operands:
        if r.optional:
            continue
        typ = r.typing or "t0"
        if typ.startswith("t"):
            typ = types[int(typ[1])]
        if r.kind is RoleKind.DST:
            out.append(PRED_DST if typ == "pred" else dst(typ))
        elif r.kind is RoleKind.SRC:
            last = r is srcs[-1]
            out.append(PRED_SRC if typ == "pred" else src(typ, imm=last))
        else:
            return None
    return out


@cache
def arith_variants() -> tuple[Variant, ...]:
    """Every register-to-register template the table marks supported, ISA rules applied."""
    from .isa_rules import expand
    table = TABLE()
    out: list[Variant] = []
    for op in ARITH_OPCODES:
        spec = table.ops.get(op)
        if spec is None or spec.status is not Status.SUPPORTED:
            continue
        for form in spec.forms:
            for types in itertools.product(*[sorted(s) for s in form.slots]) if form.slots else [()]:
                out.extend(expand(op, form, tuple(types), table.groups))
    return tuple(out)
