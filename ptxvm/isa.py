"""Load isa/instructions.toml and decode dotted opcodes through it.

``decode("add.rn.ftz.f32")`` finds the table entry (longest dotted prefix that is
a table key), sorts every remaining modifier into a modifier group or a type
slot (in any order, as ptxas accepts), picks the first form that fits, and
explains precisely why nothing fits otherwise.
"""

from __future__ import annotations

import difflib
import re
import sys
import tomllib
from dataclasses import dataclass, field
from enum import Enum
from functools import cache, lru_cache
from pathlib import Path

from .errors import IsaTableError
from .ir.types import TYPE_NAMES, ScalarType
from .resources import data_dir


class Status(str, Enum):
    SUPPORTED = "supported"
    PARSED_ONLY = "parsed-only"
    UNSUPPORTED = "unsupported"


class OpClass(str, Enum):
    """Per-opcode facts executors and passes share (the ``classes`` field of the table)."""

    WARP_SYNC = "warp-sync"      # lanes of a warp exchange values: read all sources, then write
    CTA_SYNC = "cta-sync"        # threads of the CTA wait for each other
    FRAGMENT = "fragment"        # tensor-core fragments: vectors of 32-bit registers
    PURE = "pure"                # no effect beyond the destination registers (cannot fault)
    NAN_BLIND = "nan-blind"      # .f32: which NaN a source holds cannot be observed in the result


class RoleKind(str, Enum):
    SRC = "src"
    DST = "dst"
    ADDR = "addr"
    LABEL = "label"
    FUNC = "func"
    LIST = "list"
    VEC = "vec"


@dataclass(frozen=True, slots=True)
class OperandRole:
    name: str
    kind: RoleKind
    typing: str | None = None      # "t0".."t3", "pred", "u32", ... or None (untyped)
    optional: bool = False
    pair: bool = False             # destination may be `%r|%p`

    @classmethod
    def parse(cls, text: str) -> "OperandRole":
        optional = text.endswith("?")
        body = text.rstrip("?")
        name, _, typing = body.partition(":")
        pair = "|" in name
        if name.startswith("["):
            kind = RoleKind.ADDR
        elif name == "label":
            kind = RoleKind.LABEL
        elif name == "func":
            kind = RoleKind.FUNC
        elif name.startswith("("):
            kind = RoleKind.LIST
        elif name == "vec":
            kind = RoleKind.VEC
        elif name.split("|")[0] in ("d", "p", "d0", "d1", "d2", "d3") or name.startswith("d"):
            kind = RoleKind.DST
        else:
            kind = RoleKind.SRC
        return cls(name, kind, typing or None, optional, pair)


@dataclass(frozen=True, slots=True)
class Form:
    name: str
    slots: tuple[frozenset[str], ...]
    required_slots: int
    groups: tuple[str, ...]
    required: frozenset[str]
    multi: frozenset[str]
    operands: tuple[OperandRole, ...]
    min_operands: int = 0        # operands that are not optional


@dataclass(frozen=True, slots=True)
class OpcodeSpec:
    name: str
    section: str
    title: str
    status: Status
    forms: tuple[Form, ...]
    sm: int | None = None
    ptx: str | None = None
    classes: frozenset[OpClass] = frozenset()

    def group_values(self) -> dict[str, frozenset[str]]:
        return {g: TABLE().groups[g] for f in self.forms for g in f.groups}


@dataclass(frozen=True, slots=True)
class Decoded:
    opcode: str
    modifiers: tuple[str, ...]
    mods: tuple[tuple[str, str], ...]
    types: tuple[ScalarType, ...]
    form: Form
    spec: OpcodeSpec


class DecodeError(Exception):
    """Raised by decode(); ``part`` is the index of the offending dotted part (0 = opcode)."""

    def __init__(self, message: str, part: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.part = part


@dataclass(frozen=True)
class IsaTable:
    ops: dict[str, OpcodeSpec]
    groups: dict[str, frozenset[str]]
    meta: dict
    group_lists: dict[str, tuple[str, ...]] = field(default_factory=dict)    # in the table's order
    typesets: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def lookup(self, parts: list[str]) -> tuple[OpcodeSpec, int] | None:
        """Longest table key that is a dotted prefix of ``parts``; returns (spec, parts used)."""
        for n in range(min(len(parts), 4), 0, -1):
            spec = self.ops.get(".".join(parts[:n]))
            if spec is not None:
                return spec, n
        return None


def _load_table(path: Path) -> IsaTable:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise IsaTableError(f"{path}: {exc}") from None
    typesets = {k: list(v) for k, v in raw.get("typesets", {}).items()}
    groups = {k: frozenset(v) for k, v in raw.get("groups", {}).items()}

    def expand(slot: list[str] | str, where: str) -> tuple[frozenset[str], bool]:
        optional = False
        if isinstance(slot, str):
            optional = slot.startswith("?")
            slot = [slot.lstrip("?")]
        out: set[str] = set()
        for item in slot:
            if item.startswith("?"):
                optional, item = True, item[1:]
            if item.startswith("@"):
                if item[1:] not in typesets:
                    raise IsaTableError(f"{where}: unknown typeset {item}")
                out.update(typesets[item[1:]])
            elif item in TYPE_NAMES:
                out.add(item)
            else:
                raise IsaTableError(f"{where}: unknown type {item!r}")
        return frozenset(out), optional

    ops: dict[str, OpcodeSpec] = {}
    for name, entry in raw.get("op", {}).items():
        where = f"{path.name}: op.{name}"
        forms = []
        for i, f in enumerate(entry.get("forms", [])):
            fwhere = f"{where}.forms[{i}]"
            slots, required_slots = [], 0
            for slot in f.get("types", []):
                values, optional = expand(slot, fwhere)
                slots.append(values)
                if not optional:
                    required_slots += 1
            for g in (*f.get("mods", []), *f.get("required", []), *f.get("multi", [])):
                if g not in groups:
                    raise IsaTableError(f"{fwhere}: unknown modifier group {g!r}")
            forms.append(Form(
                name=f.get("name", str(i)), slots=tuple(slots), required_slots=required_slots,
                groups=tuple(f.get("mods", [])), required=frozenset(f.get("required", [])),
                multi=frozenset(f.get("multi", [])),
                operands=(roles := tuple(OperandRole.parse(o) for o in f.get("operands", []))),
                min_operands=sum(1 for r in roles if not r.optional),
            ))
        try:
            status = Status(entry.get("status", "parsed-only"))
        except ValueError:
            raise IsaTableError(f"{where}: bad status {entry.get('status')!r}") from None
        try:
            classes = frozenset(OpClass(c) for c in entry.get("classes", []))
        except ValueError:
            raise IsaTableError(f"{where}: bad classes {entry.get('classes')!r}; known: "
                                f"{[c.value for c in OpClass]}") from None
        ops[name] = OpcodeSpec(name, str(entry.get("section", "")), entry.get("title", ""),
                               status, tuple(forms), entry.get("sm"), entry.get("ptx"), classes)
    return IsaTable(ops, groups, raw.get("meta", {}),
                    {k: tuple(v) for k, v in raw.get("groups", {}).items()},
                    {k: tuple(v) for k, v in typesets.items()})


@cache
def TABLE() -> IsaTable:  # noqa: N802 - reads like a constant
    return _load_table(data_dir("isa") / "instructions.toml")


@cache
def opcodes_in(cls: OpClass) -> frozenset[str]:
    """Every table opcode (an instruction's ``opcode``) of class ``cls``."""
    return frozenset(name for name, spec in TABLE().ops.items() if cls in spec.classes)


def modifier_group(name: str) -> tuple[str, ...]:
    """The values of the table's modifier group ``name`` (``rnd``: rn rz rm rp), in its order."""
    return TABLE().group_lists[name]


def typeset(name: str) -> tuple[str, ...]:
    """The type names of the table's typeset ``name`` (``half``: f16 f16x2 bf16 bf16x2), in order."""
    return TABLE().typesets[name]


@cache
def operand_roles(opcode: str, form: str) -> tuple[OperandRole, ...]:
    """The operand roles of ``opcode``'s form named ``form`` (an instruction's ``form``); empty
    when the table has no such form."""
    spec = TABLE().ops.get(opcode)
    for f in spec.forms if spec is not None else ():
        if f.name == form:
            return f.operands
    return ()


@cache
def nan_blind_sources(opcode: str) -> tuple[int, ...]:
    """Operand indices of a ``nan-blind`` opcode's .f32 form that are sources of the instruction
    type (the roles typed by the first type slot): the operands whose NaN payload cannot be seen.
    Empty for an opcode not of the class."""
    spec = TABLE().ops.get(opcode)
    if spec is None or OpClass.NAN_BLIND not in spec.classes:
        return ()
    form = next((f for f in spec.forms if len(f.slots) == 1 and "f32" in f.slots[0]), None)
    if form is None:
        raise IsaTableError(f"{opcode}: class nan-blind needs a form of the single type f32")
    return tuple(i for i, r in enumerate(form.operands)
                 if r.kind is RoleKind.SRC and r.typing in (None, "t0"))


def _suggest(word: str, choices: set[str] | frozenset[str]) -> list[str]:
    return difflib.get_close_matches(word, sorted(choices), n=6, cutoff=0.4)


_TYPE_SHAPED = re.compile(r"[bsuf]\d+(x\d+)?|bf\d+(x\d+)?|tf\d+|pred\w*")


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _fmt(values) -> str:
    return " ".join("." + v for v in sorted(values))


def decode(text: str) -> Decoded:
    """Decode a dotted opcode such as ``ld.global.nc.v4.f32``; raises DecodeError."""
    result = _decode_cached(text)
    if isinstance(result, DecodeError):
        raise DecodeError(result.message, result.part)
    return result


@lru_cache(maxsize=16384)
def _decode_cached(text: str) -> "Decoded | DecodeError":
    # Failures are cached too: a file repeating one bad opcode must not rerun difflib per line.
    try:
        return _decode(text)
    except DecodeError as e:
        return e


def _rank(word: str, choices) -> list[str]:
    """Close spellings, best first; ties go to the longer shared prefix."""
    scored = [(difflib.SequenceMatcher(None, word, c).ratio(), _common_prefix(word, c), c) for c in choices]
    return [c for r, _, c in sorted(scored, key=lambda t: (-t[0], -t[1], t[2])) if r >= 0.6]


def _decode(text: str) -> Decoded:
    table = TABLE()
    parts = text.split(".")
    found = table.lookup(parts)
    if found is None:
        close = _rank(parts[0], {k.split(".")[0] for k in table.ops})
        hint = f"; did you mean {' or '.join('`' + c + '`' for c in close[:3])}?" if close else ""
        raise DecodeError(f"unknown instruction `{parts[0]}`{hint}", 0)
    spec, used = found
    rest = parts[used:]
    if not spec.forms:
        raise IsaTableError(f"isa table: {spec.name} has no forms")
    # Forms that accept the written types (in order) explain unknown modifiers best.
    written = [m for m in rest if m in TYPE_NAMES]
    fitting = [f for f in spec.forms
               if len(written) <= len(f.slots) and all(t in slot for t, slot in zip(written, f.slots))]
    all_groups = {g for f in (fitting or spec.forms) for g in (*f.groups, *f.required, *f.multi)}
    every_group = {g for f in spec.forms for g in (*f.groups, *f.required, *f.multi)}
    all_values = {v for g in every_group for v in table.groups[g]}
    all_types = {t for f in spec.forms for s in f.slots for t in s}

    # Unknown modifiers first: they are the most precise error.
    for i, m in enumerate(rest):
        if m not in all_values and m not in TYPE_NAMES:
            base = ".".join(parts[:used])
            shown = ".".join([base] + [x for j, x in enumerate(rest) if j != i])
            # Expected: the group whose values look most like the unknown one.
            # The group holding the closest spelling; on ties the larger group (the
            # complete set of alternatives, e.g. all four rounding modes).
            best, best_key = None, (0.0, 0, 0)
            for g in sorted(all_groups):
                values = table.groups[g]
                score = max((difflib.SequenceMatcher(None, m, v).ratio(), _common_prefix(m, v))
                            for v in values)
                if score[0] >= 0.5 and (*score, len(values)) > best_key:
                    best, best_key = values, (*score, len(values))
            if best is None and all_values:
                close = _suggest(m, {v for g in all_groups for v in table.groups[g]})
                best = set(close) if close else None
            if _TYPE_SHAPED.fullmatch(m):
                raise DecodeError(f"unknown type `.{m}` for `{base}`" + (
                    f"; expected one of {_fmt(all_types)}" if all_types else "; it takes no type"), used + i)
            fitting_values = {v for g in all_groups for v in table.groups[g]}
            if best:
                expect = f"; expected one of {_fmt(best)}"
            elif fitting_values:
                expect = f"; it accepts {_fmt(fitting_values)}"
            else:
                expect = "; it takes no modifiers"
            raise DecodeError(f"unknown modifier `.{m}` for `{shown}`{expect}", used + i)

    errors: list[DecodeError] = []
    for form in spec.forms:
        err = _try_form(spec, form, parts, used, table)
        if isinstance(err, Decoded):
            return err
        errors.append(err)
    # Report the most specific failure: prefer forms whose types matched.
    errors.sort(key=lambda e: (getattr(e, "rank", 9), -e.part))
    if getattr(errors[0], "rank", 9) == 5:
        # No type written: list what every form would accept.
        want = {t for f in spec.forms if f.slots for t in f.slots[0]}
        raise DecodeError(f"`{'.'.join(parts)}` needs a type; expected one of {_fmt(want)}", errors[0].part)
    raise errors[0]


def _try_form(spec: OpcodeSpec, form: Form, parts: list[str], used: int, table: IsaTable):
    rest = parts[used:]
    form_values: dict[str, str] = {}
    for g in (*form.groups, *sorted(form.required - set(form.groups)), *sorted(form.multi - set(form.groups))):
        for v in table.groups[g]:
            form_values.setdefault(v, g)
    chosen: dict[str, str] = {}
    types: list[str] = []
    type_pos: list[int] = []
    for i, m in enumerate(rest):
        g = form_values.get(m)
        if g is not None:
            if g in chosen and g not in form.multi:
                e = DecodeError(f"conflicting modifiers `.{chosen[g]}` and `.{m}` in `{'.'.join(parts)}`",
                                used + i)
                e.rank = 1
                return e
            chosen[g] = f"{chosen[g]}.{m}" if g in chosen else m
        elif m in TYPE_NAMES:
            types.append(m)
            type_pos.append(used + i)
        else:
            e = DecodeError(f"modifier `.{m}` is not allowed in `{'.'.join(parts)}`", used + i)
            e.rank = 2
            return e
    full = ".".join(parts)
    if len(types) > len(form.slots):
        e = DecodeError(f"too many types in `{full}`" if form.slots else
                        f"`{'.'.join(parts[:used])}` takes no type, found `.{types[len(form.slots)]}`",
                        type_pos[len(form.slots)])
        e.rank = 4
        return e
    if len(types) < form.required_slots:
        want = _fmt(form.slots[len(types)])
        e = DecodeError(f"`{full}` needs a type; expected one of {want}", len(parts) - 1)
        e.rank = 5
        return e
    for k, (t, slot) in enumerate(zip(types, form.slots)):
        if t not in slot:
            e = DecodeError(f"type `.{t}` is not allowed in `{full}`; expected one of {_fmt(slot)}",
                            type_pos[k])
            e.rank = 3
            return e
    missing = form.required - set(chosen)
    if missing:
        g = sorted(missing)[0]
        e = DecodeError(f"`{full}` needs a `{g}` modifier: one of {_fmt(table.groups[g])}", len(parts) - 1)
        e.rank = 1
        return e
    order = {g: i for i, g in enumerate((*form.groups, *sorted(form.required), *sorted(form.multi)))}
    mods = tuple(sorted(chosen.items(), key=lambda kv: order[kv[0]]))
    return Decoded(spec.name, tuple(rest), mods, tuple(ScalarType(t) for t in types), form, spec)


_OPCODE_RE = re.compile(r"^\s*(?:@!?%?[\w$]+\s+)?([a-z][\w]*(?:\.[\w:]+)*)[\s;]", re.M)


def _main(argv: list[str]) -> int:
    """Developer aid: decode every distinct opcode of PTX files and list failures."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m ptxvm.isa",
                                 description="Decode every instruction opcode of PTX files through isa/instructions.toml.")
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args(argv)
    seen: dict[str, str] = {}
    bad = 0
    for path in args.files:
        text = path.read_text(errors="replace")
        text = re.sub(r"\.section[^{]*\{[^}]*\}", "", text)
        for line in text.splitlines():
            s = line.strip()
            if not s or s.startswith((".", "//", "}", "{", "$", ")")) or s.endswith((":", ",")) or ".callprototype" in s:
                continue
            m = _OPCODE_RE.match(line)
            if not m or m.group(1) in seen:
                continue
            op = m.group(1)
            try:
                decode(op)
                seen[op] = "ok"
            except DecodeError as e:
                seen[op] = e.message
                bad += 1
                print(f"{path}: {op}: {e.message}")
    print(f"{len(seen)} distinct opcodes, {bad} failed to decode")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
