"""Where a variable's name or an integer literal may stand as a value, as ptxas 13.0 has it.

PTX ISA §6.4.1 lets a variable's name stand for its address, but ptxas takes a *bare* name as a
source value only in `mov` and `cvta` (not `cvta.to`), and in `mapa`/`getctarank`, whose
operand the ISA defines as a shared variable or an address; elsewhere it says "Argument N of
instruction 'add': must be register" (`add.u64 %rd1, G, 8`, `st.global.u64 [%rd1], G`,
`setp`, `cvt`, `shfl`, `atom` ...), while the expression `G+4` is a value everywhere (and a
function's name is one anywhere: `add.u64 %rd1, f, 8` assembles). The
address is an integer, so `mov.f32 %f1, G` is refused too ("Arguments mismatch"; `mov.b64` of
it is fine). And a function's input parameters are read-only: `st.param [a]` on one is "Illegal
to write to function input parameter" (a kernel's parameters and a `.func`'s inputs, not its
return parameters). An integer literal is no .f32/.f64 operand either: `mov.f32 %f1, 0`,
`add.f32 %f1, %f2, 1`, `setp.lt.f32 %p1, %f1, 0` are "Arguments mismatch" (write `0f00000000`,
`1.0`), as is `mov.f32 %f1, WARP_SZ`; `mov.b32 %f1, 1` is fine. The verifier reports each as a
located diagnostic.
"""

from __future__ import annotations

import struct
from typing import Iterator

from .. import isa
from .nodes import Address, Function, ImmKind, Immediate, Instruction, Symbol
from .scopes import Scope
from .types import ScalarType, StateSpace

_TAKES_A_NAME = frozenset({"mov", "cvta", "mapa", "getctarank"})
_FLOATS = (ScalarType.F32, ScalarType.F64)


def _hex_float(v: int, t: ScalarType) -> str:
    """PTX's exact spelling of float(v): 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX (§4.5.1)."""
    if t is ScalarType.F32:
        return "0f%08X" % struct.unpack("<I", struct.pack("<f", float(v)))[0]
    return "0d%016X" % struct.unpack("<Q", struct.pack("<d", float(v)))[0]


def _is_variable(sym: Symbol, scope: Scope) -> bool:
    """A variable's name; function names are values anywhere (ptxas takes `add.u64 d, f, 8`)."""
    decl = scope.lookup(sym.name)
    return decl is not None and decl.space is not StateSpace.REG


def symbol_value_problems(ins: Instruction, roles: tuple[isa.OperandRole, ...],
                          wants: list[ScalarType | None], scope: Scope,
                          fn: Function) -> Iterator[tuple[str, str]]:
    """(message, spelling to point at) for each bare variable name used as a value where ptxas
    refuses one, and for a store into an input parameter."""
    op_name = ins.full_opcode
    takes_name = ins.opcode in _TAKES_A_NAME and not (ins.opcode == "cvta" and ins.mod("to"))
    for op, role, want in zip(ins.operands, roles, wants):
        if role.kind is not isa.RoleKind.SRC:
            continue
        if isinstance(op, Immediate) and op.kind is ImmKind.INT and want in _FLOATS:
            yield (f"`{op}` is an integer constant, but `{op_name}` needs a .{want.value} operand here: "
                   f"write a floating-point constant (`{float(op.value)!r}` or `{_hex_float(op.value, want)}`)",
                   str(op))
            continue
        if not isinstance(op, Symbol):
            continue
        if not _is_variable(op, scope):
            continue
        if not takes_name:
            yield (f"operand `{op.name}` of `{op_name}` names a variable: only `mov`, `cvta` (not "
                   f"`cvta.to`), `mapa` and `getctarank` take a bare name as a value (ptxas: 'must be register'); "
                   f"load its address into a register with `mov` first", op.name)
        elif want is not None and (want.kind == "f" or want is ScalarType.PRED):
            yield (f"`{op.name}` is the address of a variable, an integer, but `{op_name}` needs a "
                   f".{want.value} ({want.bits}-bit) operand here", op.name)
    if ins.opcode == "st" and ins.mod("space") == "param" and ins.operands:
        addr = ins.operands[0]
        base = addr.base if isinstance(addr, Address) else None
        if isinstance(base, Symbol) and any(p.name == base.name for p in fn.params):
            kind = "kernel" if fn.is_kernel else "function"
            yield (f"`{op_name}` writes `{base.name}`, an input parameter of {kind} `{fn.name}`: "
                   "input parameters are read-only (ptxas: 'Illegal to write to function input "
                   "parameter')", base.name)
