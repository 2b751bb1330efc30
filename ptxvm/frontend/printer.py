"""IR -> canonical PTX text. parse(format_module(m)) == m (spans excluded)."""

from __future__ import annotations

from ..ir.nodes import (
    Alias, Block, BranchTargets, CallPrototype, FileDirective, Function, Instruction, Label, Loc,
    Module, Pragma, Section, Statement, VarDecl,
)

INDENT = "\t"


def format_decl(d: VarDecl) -> str:
    """A declaration without the trailing ';' (parameters use it as is)."""
    parts: list[str] = []
    if d.linkage is not None:
        parts.append("." + d.linkage.value)
    parts.append(d.space.directive)
    parts.extend(d.attributes)
    if d.align is not None:
        parts.append(f".align {d.align}")
    if d.vector is not None:
        parts.append(f".v{d.vector}")
    parts.append(d.type.directive)
    if d.ptr_space is not None or d.ptr_align is not None:
        parts.append(".ptr")
        if d.ptr_space is not None:
            parts.append(d.ptr_space.directive)
        if d.ptr_align is not None:
            parts.append(f".align {d.ptr_align}")
    name = d.name
    if d.count is not None:
        name += f"<{d.count}>"
    name += "".join(f"[{n}]" if n is not None else "[]" for n in d.array)
    if d.init is not None:
        name += f" = {d.init}"
    parts.append(name)
    return " ".join(parts)


def _params(params: tuple[VarDecl, ...], inline: bool = False) -> str:
    if not params:
        return "()"
    if inline:
        return "(" + ", ".join(format_decl(p) for p in params) + ")"
    return "(\n" + ",\n".join(INDENT + format_decl(p) for p in params) + "\n)"


def format_statement(s: Statement, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    if isinstance(s, Instruction):
        out.append(pad + str(s))
    elif isinstance(s, Label):
        out.append(f"{s.name}:")
    elif isinstance(s, Block):
        out.append(pad + "{")
        for inner in s.statements:
            format_statement(inner, depth + 1, out)
        out.append(pad + "}")
    elif isinstance(s, VarDecl):
        out.append(pad + format_decl(s) + ";")
    elif isinstance(s, Loc):
        out.append(pad + f".loc {s.file} {s.line} {s.column}" + (f", {s.extra}" if s.extra else ""))
    elif isinstance(s, Pragma):
        out.append(pad + f'.pragma "{s.text}";')
    elif isinstance(s, CallPrototype):
        ret = _params(s.returns, inline=True) + " " if s.returns else ""
        noret = " .noreturn" if s.noreturn else ""
        out.append(f"{pad}{s.name}: .callprototype {ret}_ {_params(s.params, inline=True)}{noret};")
    elif isinstance(s, BranchTargets):
        out.append(f"{pad}{s.name}: .{s.kind} {', '.join(s.targets)};")
    else:  # pragma: no cover - every Statement kind is handled above
        raise TypeError(f"cannot print {type(s).__name__}")


def format_function(f: Function) -> str:
    head = ("." + f.linkage.value + " " if f.linkage else "") + "." + f.kind.value + " "
    if f.returns:
        head += _params(f.returns, inline=True) + " "
    head += f.name
    head += _params(f.params)
    lines = [head]
    for a in f.attributes:
        lines.append(a)
    if f.noreturn:
        lines.append(".noreturn")
    for d in f.directives:
        lines.append(f".{d.name} " + ", ".join(map(str, d.values)) if d.values else f".{d.name}")
    if f.body is None:
        lines.append(";")
    else:
        lines.append("{")
        for s in f.body.statements:
            format_statement(s, 1, lines)
        lines.append("}")
    return "\n".join(lines)


def format_module(m: Module) -> str:
    out = ["//", "// Printed by ptxvm", "//", ""]
    if m.version:
        out.append(f".version {m.version}")
    if m.target:
        out.append(".target " + ", ".join(m.target))
    if m.address_size is not None:
        out.append(f".address_size {m.address_size}")
    out.append("")
    for item in m.items:
        if isinstance(item, Function):
            out.append(format_function(item))
            out.append("")
        elif isinstance(item, VarDecl):
            out.append(format_decl(item) + ";")
        elif isinstance(item, FileDirective):
            extra = "".join(f", {x}" for x in item.extra)
            out.append(f'.file {item.index} "{item.path}"{extra}')
        elif isinstance(item, Section):
            out.append(f".section {item.name}\n{{{item.body}}}")
        elif isinstance(item, Pragma):
            out.append(f'.pragma "{item.text}";')
        elif isinstance(item, Alias):
            out.append(f".alias {item.alias}, {item.target};")
        else:  # pragma: no cover
            raise TypeError(f"cannot print {type(item).__name__}")
    return "\n".join(out) + "\n"
