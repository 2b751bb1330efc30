"""PTX state spaces on AMD GPUs: addresses, pointers, cvta, isspacep (a mixin of AmdgpuHooks).

PTX addresses are integers in registers.  An address in a known state space becomes a
pointer in the matching AMDGPU address space (global 1, shared 3, const/param 4, local 5;
shared and local addresses are 32-bit offsets there, as in PTX); a generic address is a
flat pointer, and ``cvta`` is ``addrspacecast``, which on AMD GPUs maps LDS and private
offsets into the flat apertures exactly as PTX's generic windows do.

The shared lowering casts what ``access`` returns to element pointers in address space 0,
so ``access`` hands back a flat pointer made by ``addrspacecast`` from the typed one; LLVM's
InferAddressSpaces pass undoes the cast, so loads and stores still become ``global_*`` /
``ds_*`` / ``scratch_*`` instructions where the space is known.  ``fixups`` later gives
each access its natural alignment and its memory ordering.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir

from ..ir import nodes as ptx
from ..ir.types import StateSpace
from ..lift.function import FunctionLowering
from .layout import ModuleLayout
from .llvm_ext import CONSTANT, FLAT, GLOBAL, I8, I32, I64, LDS, PRIVATE, call, ptr

SPACE_AS = {"global": GLOBAL, "const": CONSTANT, "param": CONSTANT, "shared": LDS, "local": PRIVATE,
            "generic": FLAT}
_NARROW = (LDS, PRIVATE)          # 32-bit address spaces
DYNAMIC_SHARED = "__ptx_dynamic_shared"


@dataclass
class AmdFunctionState:
    """What the AMD hooks keep per lowered function (``FunctionLowering.target_state``)."""

    trap: ir.Block | None = None        # the function's one trap block (``AmdgpuHooks._trap``)
    frame: ir.Value | None = None       # private address (i64) of its `.local` frame


def amd_state(fl: FunctionLowering) -> AmdFunctionState:
    return fl.target_state  # type: ignore[return-value]


@dataclass
class Access:
    """What ``fixups`` needs to know about a pointer ``access`` returned."""

    ins: ptx.Instruction
    space: str
    size: int
    typed: ir.Value | None = None    # the same address as a pointer in the space's own address space


def by_value_params(kernel: ptx.Function) -> set[str]:
    """Kernel parameters passed by value rather than ``byref``: 4- and 8-byte scalars (naturally
    aligned) that the kernel only reads whole, with ``ld.param`` at offset 0, and whose address it
    never takes.  Their loads become the argument itself; LLVM then loads them from the kernarg
    segment at the top of the kernel, where neighbouring ones merge into one ``s_load_dwordxN``
    (a ``byref`` load is sunk to its first use, and the merge is lost)."""
    sizes = {d.name: d.size_bytes() for d in kernel.params
             if not d.array and d.size_bytes() in (4, 8) and (d.align or d.element_bytes()) == d.size_bytes()}
    if not sizes or kernel.body is None:
        return set()
    ok = set(sizes)
    for ins in kernel.body.instructions():
        whole_load = (ins.opcode == "ld" and ins.mod("space") == "param" and len(ins.operands) == 2
                      and not isinstance(ins.operands[0], ptx.Vector) and len(ins.types) == 1)
        for k, op in enumerate(ins.operands):
            for name, base in _symbols(op):
                if name not in ok:
                    continue
                if (whole_load and base and k == 1 and op.offset == 0
                        and ins.types[0].bits == 8 * sizes[name]):
                    continue
                ok.discard(name)
    return ok


def _symbols(op) -> list[tuple[str, bool]]:
    """(name, used as an address base) of every symbol in an operand."""
    if isinstance(op, ptx.Symbol):
        return [(op.name, False)]
    if isinstance(op, ptx.Address):
        out = [(op.base.name, True)] if isinstance(op.base, ptx.Symbol) else []
        return out + [s for e in op.extra for s in _symbols(e)]
    if isinstance(op, ptx.Vector):
        return [s for e in op.elements for s in _symbols(e)]
    if isinstance(op, ptx.Pair):
        return _symbols(op.first) + _symbols(op.second)
    return []


class MemoryHooks:
    layout: ModuleLayout
    accesses: dict[int, tuple[ir.Value, Access]]
    by_value: set[str]                                  # the current kernel's by-value parameters
    by_value_reads: dict[int, tuple[ir.Value, ir.Value]]   # placeholder pointer -> (it, argument)

    # ------------------------------------------------------------------ module symbols
    def _shared_global(self, llmod: ir.Module, name: str) -> ir.GlobalVariable:
        if name in self.layout.extern_shared:
            gv = llmod.globals.get(DYNAMIC_SHARED)
            if gv is None:
                # Every `.extern .shared` array starts where the dynamic LDS block does.
                gv = ir.GlobalVariable(llmod, ir.ArrayType(I8, 0), DYNAMIC_SHARED, addrspace=LDS)
                gv.linkage = "external"
                gv.align = 16
            return gv
        gv = llmod.globals.get(name)
        if gv is None:
            d = self.layout.shared[name]
            gv = ir.GlobalVariable(llmod, ir.ArrayType(I8, max(d.size_bytes() or 0, 1)), name, addrspace=LDS)
            gv.linkage = "internal"
            gv.initializer = ir.Constant(gv.value_type, ir.Undefined)     # LDS cannot be initialised
            gv.align = d.align or d.element_bytes()
        return gv

    def _variable_global(self, fl: FunctionLowering, name: str, ins: ptx.Instruction) -> ir.GlobalVariable:
        llmod = fl.ml.llmod
        gv = llmod.globals.get(name)
        if gv is not None:
            return gv
        d = self.layout.variables[name]
        if d.linkage is not None and d.linkage.value == "extern":
            raise fl.unsupported(ins, f"uses `{name}`, declared `.extern` and defined in no module here")
        size = d.size_bytes()
        if size is None:
            raise fl.unsupported(ins, f"uses `{name}`, an unsized `{d.space.value}` array")
        raw = self._initial_bytes(d, size)
        symbols = _symbol_slots(d)
        if symbols and max(d.type.bits // 8, 1) != 8:
            raise fl.unsupported(ins, f"uses `{name}`, whose initialiser stores addresses in "
                                      f"{d.type.bits}-bit elements (only 64-bit addresses relocate)")
        # Bytes, with a 64-bit relocated address wherever the initialiser names a symbol.
        pieces: list[tuple[int, int, ptx.SymbolRef | None]] = []
        at = 0
        for pos, ref in symbols:
            if pos > at:
                pieces.append((at, pos, None))
            pieces.append((pos, pos + 8, ref))
            at = pos + 8
        if at < len(raw) or not pieces:
            pieces.append((at, max(len(raw), at + 1), None))
        ty = ir.LiteralStructType([ir.ArrayType(I8, hi - lo) if ref is None else I64 for lo, hi, ref in pieces],
                                  packed=True)
        gv = ir.GlobalVariable(llmod, ty, name, addrspace=CONSTANT if d.space is StateSpace.CONST else GLOBAL)
        # Visible to the host (hipModuleGetGlobal / hipMemcpyToSymbol): nvcc leaves
        # `__constant__` variables without `.visible`, yet CUDA hosts write them by name.
        gv.storage_class = "protected"
        gv.align = d.align or d.element_bytes()
        values = [ir.Constant(ir.ArrayType(I8, hi - lo), bytearray(raw[lo:hi].ljust(hi - lo, b"\0")))
                  if ref is None else self._relocated(fl, ref, ins) for lo, hi, ref in pieces]
        gv.initializer = ir.Constant(ty, values)
        return gv

    def _relocated(self, fl: FunctionLowering, ref: ptx.SymbolRef, ins: ptx.Instruction) -> ir.Constant:
        """The address of ``ref`` as a relocated 64-bit constant."""
        if ref.name in self.layout.variables:
            target = self._variable_global(fl, ref.name, ins)
            if ref.offset:
                target = target.bitcast(ptr(target.type.addrspace)).gep([I64(ref.offset)])
            return target.ptrtoint(I64)
        f = fl.ml.ptx_functions.get(ref.name)
        if f is not None and not f.is_kernel and not ref.offset:
            return fl.ml.device_function(ref.name, ins).ptrtoint(I64)
        raise fl.unsupported(ins, f"needs the address of `{ref.name}` in an initialiser, which this "
                                  "target cannot relocate")

    @staticmethod
    def _initial_bytes(d: ptx.VarDecl, size: int) -> bytes:
        from ..machine.image import encode_init

        if d.init is None:
            return bytes(size)
        return encode_init(d, {})          # symbols read as 0 + offset; their slots are relocated

    # ------------------------------------------------------------------ hooks
    def symbol_address(self, fl, name, space, ins):
        b = fl.b
        if fl.is_kernel and name in fl.ml.layout.params:
            p = self.param_pointer(fl, fl.ml.layout.params[name])
            return b.ptrtoint(p, I64)         # the kernarg address: a generic (global) address
        frame = self.layout.frames.get(fl.fn.name)
        if frame is not None and name in frame.offsets:
            addr = b.add(self.frame_base(fl), I64(frame.offsets[name]))
            return self.cvta(fl, addr, "local", True) if space == "generic" else addr
        if name in self.layout.shared or name in self.layout.extern_shared:
            gv = self._shared_global(fl.ml.llmod, name)
            addr = b.zext(b.ptrtoint(gv, I32), I64)
            return self.cvta(fl, addr, "shared", True) if space == "generic" else addr
        if name in self.layout.variables:
            return b.ptrtoint(self._variable_global(fl, name, ins), I64)
        if name in self.layout.module_locals:
            raise fl.unsupported(ins, f"uses the module-scope `.local` variable `{name}`")
        f = fl.ml.ptx_functions.get(name)
        if f is not None and not f.is_kernel:
            return b.ptrtoint(fl.ml.device_function(name, ins), I64)
        raise fl.unsupported(ins, f"refers to `{name}`, which has no storage on this target")

    def frame_base(self, fl: FunctionLowering) -> ir.Value:
        """The private address (as i64) of this function's `.local` frame."""
        base = amd_state(fl).frame
        if base is None:
            raise fl.unsupported(fl.ins, "uses `.local` memory in a function without a frame")
        return base

    def make_frame(self, fl: FunctionLowering) -> None:
        frame = self.layout.frames.get(fl.fn.name)
        if frame is None or not frame.offsets:
            return
        flat = fl.alloca_bytes(frame.size, frame.align, "local_frame")
        b = fl.b
        private = b.addrspacecast(flat, ptr(PRIVATE))
        amd_state(fl).frame = b.zext(b.ptrtoint(private, I32), I64)

    def param_pointer(self, fl, offset, element=0, count=1, ins=None):
        # The offset is resolved against the parameter declarations while lowering (below);
        # ``element``/``count``/``ins`` serve targets that check accesses at run time.
        params = fl.ml.layout.kernel_params
        hit = params.containing(offset)
        if hit is None:
            raise fl.unsupported(fl.ins, f"reads kernel parameter bytes at offset {offset}, past every parameter")
        d, inner = hit
        arg = fl.llfn.args[params.decls.index(d)]
        if d.name in self.by_value:
            # A placeholder: fixups replaces every load through it with the argument itself.
            flat = fl.b.inttoptr(I64(0), ptr(FLAT))
            self.by_value_reads[id(flat)] = (flat, arg)
            return flat
        p = fl.b.bitcast(arg, ptr(CONSTANT))
        if inner:
            p = fl.b.gep(p, [I64(inner)])
        flat = fl.b.addrspacecast(p, ptr(FLAT))
        align = d.align or d.element_bytes()
        # Recorded like any access: ``size`` here is just the alignment the bytes have.
        self.accesses[id(flat)] = (flat, Access(fl.ins, "param", math.gcd(align, inner) if inner else align, p))
        return flat

    def access(self, fl, space, address, size, ins, *, write, align=None):
        b = fl.b
        if write and space in ("const", "param"):
            raise fl.unsupported(ins, f"writes to `.{space}` memory")
        asp = SPACE_AS.get(space)
        if asp is None:
            raise fl.unsupported(ins, f"accesses the `.{space}` state space")
        a = b.trunc(address, I32) if asp in _NARROW else address
        p = b.inttoptr(a, ptr(asp))
        flat = b.addrspacecast(p, ptr(FLAT)) if asp != FLAT else p
        self.accesses[id(flat)] = (flat, Access(ins, space, size, p if asp != FLAT else None))
        return flat

    def cvta(self, fl, address, space, to_generic):
        asp = SPACE_AS.get(space)
        if asp is None:
            raise fl.unsupported(fl.ins, f"converts a `.{space}` address")
        if asp not in _NARROW:
            # Global, const and kernarg addresses are already flat addresses on AMD GPUs.
            return address
        b = fl.b
        if to_generic:
            p = b.inttoptr(b.trunc(address, I32), ptr(asp))
            return b.ptrtoint(b.addrspacecast(p, ptr(FLAT)), I64)
        p = b.addrspacecast(b.inttoptr(address, ptr(FLAT)), ptr(asp))
        return b.zext(b.ptrtoint(p, I32), I64)

    def isspacep(self, fl, address, space):
        b = fl.b
        p = b.inttoptr(address, ptr(FLAT))
        shared = call(b, "llvm.amdgcn.is.shared", ir.IntType(1), [p])
        private = call(b, "llvm.amdgcn.is.private", ir.IntType(1), [p])
        if space == "shared":
            return shared
        if space == "local":
            return private
        if space == "global":
            return b.not_(b.or_(shared, private))
        raise fl.unsupported(fl.ins, f"tests for the `.{space}` space, which AMD GPUs do not tell apart from global")


def _symbol_slots(d: ptx.VarDecl) -> list[tuple[int, ptx.SymbolRef]]:
    """(byte offset, symbol) of every element of the initialiser that names a symbol."""
    flat: list = []

    def walk(x) -> None:
        if isinstance(x, ptx.InitList):
            for e in x.elements:
                walk(e)
        else:
            flat.append(x)
    if d.init is not None:
        walk(d.init)
    size = max(d.type.bits // 8, 1)
    return [(i * size, v) for i, v in enumerate(flat) if isinstance(v, ptx.SymbolRef)]
