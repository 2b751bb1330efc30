"""Small llvmlite extensions the AMDGPU target needs and llvmlite does not print.

llvmlite builds IR as Python objects and prints them; it has no syntax for private-space
allocas, sync scopes on atomics, volatile or atomic plain loads, or string function
attributes.  These subclasses print exactly that, and ``intrinsic`` declares amdgcn
intrinsics once per module.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions as llins

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
VOID = ir.VoidType()

# AMDGPU address spaces (LLVM AMDGPUUsage): what PTX state spaces become.
FLAT, GLOBAL, LDS, CONSTANT, PRIVATE = 0, 1, 3, 4, 5


def ptr(addrspace: int, pointee: ir.Type = I8) -> ir.PointerType:
    return ir.PointerType(pointee, addrspace)


def intrinsic(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    """The declaration of ``name`` in ``module`` (created on first use)."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name=name)
    return fn


def call(b: ir.IRBuilder, name: str, ret: ir.Type, args: list[ir.Value]) -> ir.Value:
    return b.call(intrinsic(b.module, name, ret, [a.type for a in args]), args)


def scope_text(scope: str | None) -> str:
    """`syncscope("...") ` for an LLVM scope name; the empty name is the system scope."""
    return f'syncscope("{scope}") ' if scope else ""


class PrivateAlloca(llins.AllocaInstr):
    """``alloca T, align N, addrspace(5)``: AMDGPU allocas live in the private space."""

    def descr(self, buf):
        super().descr(buf)
        text = buf.pop()
        if self.metadata:
            raise AssertionError("metadata on a private alloca")
        buf.append(f"{text}, addrspace({PRIVATE})")


class ScopedAtomicRMW(llins.AtomicRMW):
    """``atomicrmw`` with a sync scope (llvmlite prints none)."""

    scope: str | None = None

    def descr(self, buf):
        ptr_, val = self.operands
        buf.append(f"atomicrmw {self.operation} {ptr_.type} {ptr_.get_reference()}, {val.type} "
                   f"{val.get_reference()} {scope_text(self.scope)}{self.ordering}"
                   f"{self._stringify_metadata(leading_comma=True)}\n")


class ScopedCmpXchg(llins.CmpXchg):
    scope: str | None = None

    def descr(self, buf):
        ptr_, cmp, val = self.operands
        buf.append(f"cmpxchg {ptr_.type} {ptr_.get_reference()}, {cmp.type} {cmp.get_reference()}, "
                   f"{val.type} {val.get_reference()} {scope_text(self.scope)}{self.ordering} "
                   f"{self.failordering}{self._stringify_metadata(leading_comma=True)}\n")


class ScopedLoadAtomic(llins.LoadAtomicInstr):
    scope: str | None = None

    def descr(self, buf):
        [p] = self.operands
        buf.append(f"load atomic {self.type}, {p.type} {p.get_reference()} {scope_text(self.scope)}"
                   f"{self.ordering}, align {self.align}{self._stringify_metadata(leading_comma=True)}\n")


class OrderedLoad(llins.LoadInstr):
    """A plain ``load`` turned volatile or atomic after the fact (see ``fixups``)."""

    ordering: str | None = None          # None: volatile
    scope: str | None = None

    def descr(self, buf):
        [p] = self.operands
        md = self._stringify_metadata(leading_comma=True)
        if self.ordering is None:
            buf.append(f"load volatile {self.type}, {p.type} {p.get_reference()}, align {self.align}{md}\n")
        else:
            buf.append(f"load atomic {self.type}, {p.type} {p.get_reference()} {scope_text(self.scope)}"
                       f"{self.ordering}, align {self.align}{md}\n")


class OrderedStore(llins.StoreInstr):
    ordering: str | None = None
    scope: str | None = None

    def descr(self, buf):
        val, p = self.operands
        md = self._stringify_metadata(leading_comma=True)
        head = f"{val.type} {val.get_reference()}, {p.type} {p.get_reference()}"
        if self.ordering is None:
            buf.append(f"store volatile {head}, align {self.align}{md}\n")
        else:
            buf.append(f"store atomic {head} {scope_text(self.scope)}{self.ordering}, align {self.align}{md}\n")


class KernelAttributes(ir.values.FunctionAttributes):
    """Function attributes plus LLVM string attributes (``"key"="value"``)."""

    def __init__(self, base: ir.values.FunctionAttributes, strings: dict[str, str]) -> None:
        super().__init__(tuple(base))
        self.strings = dict(strings)

    def __bool__(self) -> bool:
        return bool(self.strings) or len(self) > 0

    def _to_list(self, ret_type):
        return super()._to_list(ret_type) + [f'"{k}"="{v}"' for k, v in self.strings.items()]


def set_string_attributes(fn: ir.Function, strings: dict[str, str]) -> None:
    have = fn.attributes
    merged = {**getattr(have, "strings", {}), **strings}
    fn.attributes = KernelAttributes(have, merged)


def insert_before(b: ir.IRBuilder, anchor: ir.Instruction, instr: ir.Instruction) -> ir.Instruction:
    """Put an instruction made outside a builder just before ``anchor`` in its block."""
    block = anchor.parent
    instr.parent = block
    block.instructions.insert(block.instructions.index(anchor), instr)
    return instr
