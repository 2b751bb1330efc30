"""The typed IR of a PTX module: frozen dataclasses built directly by the parser.

Source spans never take part in equality (``compare=False``) so that a module
parsed from printed PTX compares equal to the original: structural equality.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterator, Union

from .types import ScalarType, StateSpace


@dataclass(frozen=True, slots=True)
class Span:
    filename: str | None
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.filename or '<string>'}:{self.line}:{self.column}"


NO_SPAN = Span(None, 0, 0)


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False)


# --------------------------------------------------------------------- operands

@dataclass(frozen=True, slots=True)
class Register:
    """A register operand: ``%r1``, ``%tid.x`` (name ``%tid``, component ``x``)."""

    name: str
    component: str | None = None

    def __str__(self) -> str:
        return self.name + (f".{self.component}" if self.component else "")


class ImmKind(str, Enum):
    INT = "int"          # decimal/hex/octal/binary integer, value is a Python int
    F32 = "f32"          # 0fXXXXXXXX, value is the raw 32-bit pattern
    F64 = "f64"          # 0dXXXXXXXXXXXXXXXX, value is the raw 64-bit pattern
    FLOAT = "float"      # decimal floating literal, value is a Python float


@dataclass(frozen=True, slots=True)
class Immediate:
    value: int | float
    kind: ImmKind = ImmKind.INT
    unsigned: bool = False   # a trailing U suffix was written

    def __str__(self) -> str:
        if self.kind is ImmKind.F32:
            return f"0f{self.value:08X}"
        if self.kind is ImmKind.F64:
            return f"0d{self.value:016X}"
        if self.kind is ImmKind.FLOAT:
            return repr(float(self.value))
        return f"{self.value}{'U' if self.unsigned else ''}"


@dataclass(frozen=True, slots=True)
class Symbol:
    """A named entity used as an operand: variable, function, label, prototype."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Negated:
    """``!%p``: a predicate source operand used inverted."""

    operand: "Operand"

    def __str__(self) -> str:
        return f"!{self.operand}"


@dataclass(frozen=True, slots=True)
class Sink:
    """``_``: a destination whose value is discarded."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class Vector:
    """``{%r1, %r2, ...}``."""

    elements: tuple["Operand", ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elements)) + "}"


@dataclass(frozen=True, slots=True)
class Pair:
    """``%r5|%p1``: a destination paired with a predicate destination."""

    first: "Operand"
    second: "Operand"

    def __str__(self) -> str:
        return f"{self.first}|{self.second}"


@dataclass(frozen=True, slots=True)
class Address:
    """``[base+offset]`` / ``[imm]`` / ``[tex, {coords}]`` (extra operands after a comma)."""

    base: Register | Symbol | None
    offset: int = 0
    extra: tuple["Operand", ...] = ()

    def __str__(self) -> str:
        if self.base is None:
            inner = str(self.offset)
        elif self.offset:
            inner = f"{self.base}+{self.offset}"
        else:
            inner = str(self.base)
        for e in self.extra:
            inner += f", {e}"
        return f"[{inner}]"


@dataclass(frozen=True, slots=True)
class ParenList:
    """``(a, b, c)``: the argument and return lists of ``call``."""

    elements: tuple["Operand", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.elements)) + ")"


@dataclass(frozen=True, slots=True)
class Offset:
    """``arr+8`` / ``%rd1+4`` used as a value, not inside ``[ ]``: the base's value (a register's
    contents, a variable's address) plus a constant, as ptxas accepts in source operands
    (PTX ISA 9.0 §6.4.1 address expressions ``var+imm``, ``reg+imm``)."""

    base: Register | Symbol
    offset: int

    def __str__(self) -> str:
        return f"{self.base}+{self.offset}"


Operand = Union[Register, Immediate, Symbol, Negated, Sink, Vector, Pair, Address, ParenList, Offset]


# ----------------------------------------------------------------- initialisers

@dataclass(frozen=True, slots=True)
class SymbolRef:
    """A symbol's address in an initialiser: ``foo``, ``generic(foo)``, ``foo+8``."""

    name: str
    offset: int = 0
    generic: bool = False

    def __str__(self) -> str:
        text = f"generic({self.name})" if self.generic else self.name
        return text + (f"+{self.offset}" if self.offset > 0 else f"{self.offset}" if self.offset else "")


@dataclass(frozen=True, slots=True)
class InitList:
    """``{a, b, {c, d}}``."""

    elements: tuple["Initializer", ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elements)) + "}"


Initializer = Union[Immediate, SymbolRef, InitList]


# ------------------------------------------------------------------ declarations

class Linkage(str, Enum):
    VISIBLE = "visible"
    EXTERN = "extern"
    WEAK = "weak"
    COMMON = "common"


@dataclass(frozen=True, slots=True)
class VarDecl:
    """A variable, parameter or register declaration.

    ``count`` is set for parameterised register names (``.reg .b32 %r<5>``
    declares %r0..%r4). ``array`` holds the dimensions; ``None`` is an unsized
    dimension (``[]``).
    """

    space: StateSpace
    type: ScalarType
    name: str
    vector: int | None = None
    array: tuple[int | None, ...] = ()
    align: int | None = None
    linkage: Linkage | None = None
    init: Initializer | None = None
    count: int | None = None
    ptr_space: StateSpace | None = None     # `.param .u64 .ptr .global .align 1 p`
    ptr_align: int | None = None
    attributes: tuple[str, ...] = ()        # `.attribute(.managed)` ...
    span: Span = _span()

    def element_bytes(self) -> int:
        bits = 8 if self.type is ScalarType.PRED else self.type.bits
        return max(bits // 8, 1) * (self.vector or 1)

    def size_bytes(self) -> int | None:
        """Total size in bytes; ``None`` when a dimension is unsized."""
        n = self.element_bytes()
        for d in self.array:
            if d is None:
                return None
            n *= d
        return n

    def register_names(self) -> Iterator[str]:
        if self.count is None:
            yield self.name
        else:
            for i in range(self.count):
                yield f"{self.name}{i}"


# ------------------------------------------------------------------ statements

@dataclass(frozen=True, slots=True)
class Guard:
    register: Register
    negated: bool = False

    def __str__(self) -> str:
        return f"@{'!' if self.negated else ''}{self.register}"


@dataclass(frozen=True, slots=True)
class Instruction:
    """One PTX instruction, decoded through isa/instructions.toml.

    ``opcode`` is the table entry (``add``, ``cp.async``, ``wmma.mma``);
    ``modifiers`` are the remaining dotted parts as written (without dots, types
    included); ``mods`` maps modifier group -> value, ``types`` lists the type
    modifiers in written order; ``form`` names the table form that matched.
    """

    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Guard | None = None
    mods: tuple[tuple[str, str], ...] = ()
    types: tuple[ScalarType, ...] = ()
    form: str = ""
    span: Span = _span()

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode, *self.modifiers))

    def mod(self, group: str, default: str | None = None) -> str | None:
        for g, v in self.mods:
            if g == group:
                return v
        return default

    def has(self, modifier: str) -> bool:
        return modifier in self.modifiers

    def __str__(self) -> str:
        ops = ", ".join(map(str, self.operands))
        guard = f"{self.guard} " if self.guard else ""
        return f"{guard}{self.full_opcode}{' ' + ops if ops else ''};"


@dataclass(frozen=True, slots=True)
class Label:
    name: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Pragma:
    text: str            # the string contents, without quotes
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Loc:
    """``.loc file line column[, function_name sym[+off], inlined_at f l c]``."""

    file: int
    line: int
    column: int
    extra: str = ""      # the rest of the directive, normalised
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class CallPrototype:
    name: str
    returns: tuple[VarDecl, ...]
    params: tuple[VarDecl, ...]
    noreturn: bool = False
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class BranchTargets:
    """``name: .branchtargets L1, L2;`` or ``.calltargets f, g;``."""

    name: str
    kind: str            # "branchtargets" | "calltargets"
    targets: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Block:
    """A ``{ ... }`` scope; its declarations are visible to nested statements only."""

    statements: tuple["Statement", ...]
    span: Span = _span()

    def walk(self) -> Iterator["Statement"]:
        """Every statement, nested blocks flattened, in source order (iterative: any depth)."""
        stack = [iter(self.statements)]
        while stack:
            for s in stack[-1]:
                if isinstance(s, Block):
                    stack.append(iter(s.statements))
                    break
                yield s
            else:
                stack.pop()

    def depth(self) -> int:
        """How deeply scopes nest inside this block (1 = no nested block)."""
        deepest, stack = 1, [(self, 1)]
        while stack:
            b, d = stack.pop()
            deepest = max(deepest, d)
            stack.extend((s, d + 1) for s in b.statements if isinstance(s, Block))
        return deepest

    def instructions(self) -> Iterator[Instruction]:
        return (s for s in self.walk() if isinstance(s, Instruction))


Statement = Union[Instruction, Label, Block, VarDecl, Pragma, Loc, CallPrototype, BranchTargets]


# --------------------------------------------------------------- module level

@dataclass(frozen=True, slots=True)
class PerfDirective:
    """``.maxntid 256, 1, 1``, ``.reqntid``, ``.minnctapersm``, ``.maxnreg`` ..."""

    name: str
    values: tuple[int, ...]


class FunctionKind(str, Enum):
    ENTRY = "entry"
    FUNC = "func"


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    kind: FunctionKind
    params: tuple[VarDecl, ...]
    returns: tuple[VarDecl, ...] = ()
    body: Block | None = None                 # None for a prototype declaration
    linkage: Linkage | None = None
    directives: tuple[PerfDirective, ...] = ()
    noreturn: bool = False
    attributes: tuple[str, ...] = ()
    span: Span = _span()

    @property
    def is_kernel(self) -> bool:
        return self.kind is FunctionKind.ENTRY

    def directive(self, name: str) -> PerfDirective | None:
        return next((d for d in self.directives if d.name == name), None)


@dataclass(frozen=True, slots=True)
class FileDirective:
    index: int
    path: str
    extra: tuple[int, ...] = ()   # optional timestamp, size
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Section:
    """``.section .debug_xxx { ... }`` kept verbatim (debug information)."""

    name: str
    body: str
    span: Span = _span()


@dataclass(frozen=True, slots=True)
class Alias:
    alias: str
    target: str
    span: Span = _span()


ModuleItem = Union[Function, VarDecl, FileDirective, Section, Pragma, Alias]


@dataclass(frozen=True, slots=True)
class Module:
    version: str
    target: tuple[str, ...]
    address_size: int | None
    items: tuple[ModuleItem, ...]
    filename: str | None = field(default=None, compare=False)

    @property
    def functions(self) -> dict[str, Function]:
        out: dict[str, Function] = {}
        for item in self.items:
            if isinstance(item, Function):
                # A definition wins over an earlier prototype declaration.
                if item.body is not None or item.name not in out:
                    out[item.name] = item
        return out

    @property
    def kernels(self) -> dict[str, Function]:
        return {n: f for n, f in self.functions.items() if f.is_kernel and f.body is not None}

    @property
    def globals(self) -> dict[str, VarDecl]:
        return {i.name: i for i in self.items if isinstance(i, VarDecl)}

    @property
    def sm(self) -> int | None:
        for t in self.target:
            if t.startswith("sm_"):
                digits = "".join(c for c in t[3:] if c.isdigit())
                return int(digits) if digits else None
        return None
