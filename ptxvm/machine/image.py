"""Module images: a module's `.global` and `.const` variables placed in one device memory, with
their initialisers encoded as the GPU holds them (little-endian; symbol addresses resolved).

``encode_init`` is also what the AMD targets use to emit initialised data.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ..ir import nodes as ir
from ..ir.types import StateSpace
from .memory import DeviceMemory


@dataclass
class ModuleImage:
    """A module's global/const variables, placed in one DeviceMemory: name -> address, and the
    functions' addresses (``addressmap.function_addresses``)."""

    addresses: dict[str, int] = field(default_factory=dict)
    functions: dict[str, int] = field(default_factory=dict)


def place_globals(module: ir.Module, memory: DeviceMemory, functions: dict[str, int]) -> ModuleImage:
    """Allocate every `.global`/`.const` variable of ``module``, then write the initialisers (after
    all are placed, since one may hold another's address)."""
    image = ModuleImage(functions=dict(functions))
    decls = [d for d in module.items if isinstance(d, ir.VarDecl)
             and d.space in (StateSpace.GLOBAL, StateSpace.CONST)]
    for d in decls:
        size = _declared_bytes(d)
        a = memory.alloc(size, d.name, space="const" if d.space is StateSpace.CONST else "global")
        image.addresses[d.name] = a.base
    for d in decls:
        if d.init is not None:
            data = encode_init(d, {**image.addresses, **functions})
            memory.find(image.addresses[d.name]).data[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    return image


def _declared_bytes(d: ir.VarDecl) -> int:
    """A variable's size; `a[] = {1, 2, 3}` takes its size from the initialiser (PTX ISA §5.4.4)."""
    size = d.size_bytes()
    if size is None and d.init is not None:
        return len(encode_init(d, {}))      # the length does not depend on symbol addresses
    return size or 0


def encode_init(d: ir.VarDecl, symbols: dict[str, int]) -> bytes:
    """The bytes of a variable's initialiser (little-endian, as on the GPU)."""
    t = d.type
    size = max(t.bits // 8, 1)
    flat: list = []

    def walk(x):
        if isinstance(x, ir.InitList):
            for e in x.elements:
                walk(e)
        else:
            flat.append(x)
    walk(d.init)
    out = bytearray()
    for v in flat:
        if isinstance(v, ir.SymbolRef):
            value = symbols.get(v.name, 0) + v.offset
            out += value.to_bytes(size, "little", signed=False)
        elif t.kind == "f":
            if v.kind is ir.ImmKind.F32 and t.bits == 32 or v.kind is ir.ImmKind.F64 and t.bits == 64:
                out += int(v.value).to_bytes(size, "little")
            else:
                fv = float(v.value) if v.kind is not ir.ImmKind.F32 else struct.unpack("<f", struct.pack("<I", v.value))[0]
                out += struct.pack("<f" if t.bits == 32 else "<d", fv) if t.bits in (32, 64) else bytes(size)
        else:
            out += (int(v.value) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    total = d.size_bytes() or len(out)
    return bytes(out[:total]) + bytes(max(0, total - len(out)))
