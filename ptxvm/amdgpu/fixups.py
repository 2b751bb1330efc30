"""Rewrites of a lowered function that the shared lowering leaves to the target.

Run once per function, after its body is lowered (``AmdgpuHooks.finish_function``):

0. **By-value parameters.**  A kernel parameter passed by value (``memory.by_value_params``)
   was read through a placeholder pointer; each such load becomes the argument (bitcast to
   the load's type).

1. **Private allocas.**  The lifter's register and `.param` buffer allocas are in address
   space 0; AMDGPU's data layout puts the stack in address space 5 (``A5``).  Each alloca
   is retyped in place; its loads and stores print the new pointer type by themselves, and
   the byte-buffer bitcasts become ``addrspacecast`` to flat pointers.
2. **Alignment.**  The shared lowering emits every load and store with ``align 1`` (the host
   checks alignment itself).  PTX requires natural alignment (a vector access to the whole
   vector's size), so each access gets it back: without it LDS accesses split into bytes.
   Each access is also re-pointed at the address in its own address space (not the flat
   pointer the shared lowering saw), so volatile and atomic accesses stay ``global_*``.
3. **Memory ordering.**  ``ld/st.volatile`` become volatile, ``.relaxed/.acquire/.release``
   become atomic loads and stores with PTX's scope, ``ld.global.nc`` gets
   ``!invariant.load``; the shared lowering's compare-and-swap loops (half-precision
   atomics) get the atomic's scope and ordering instead of ``seq_cst`` system-wide.  An
   ordered access the rewrite cannot find is an error, never a plain load (a spin-wait
   hoisted out of its loop would hang on the GPU).
4. **Unobservable NaN canonicalisation.**  Every f32 result is made the canonical NaN
   ``0x7fffffff`` when it is a NaN (two instructions).  Into a register that only f32
   arithmetic with canonical results or comparisons read (``passes.nan_blind``, the rule the
   host JIT uses too) the stores keep the raw result (``lift.nan``); the bits of chained
   arithmetic (a stencil's sum) are canonicalised once, where they leave it.  f64 is left
   alone (its NaN policy passes an input NaN's payload on).
5. **Dead values.**  Casts, address arithmetic, comparisons, selects, plain loads and the
   allocas of registers the function never mentions, that nothing uses (the flat pointers replaced in 2., the selects of 4.) are removed before
   the module is printed: LLVM would drop them, but printing and parsing them costs time.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from llvmlite import ir
from llvmlite.ir import instructions as llins

from ..errors import CodegenError
from ..lift.nan import defer_nan_canonicalisation
from .atomics import LLVM_ORDER, scope_of
from .llvm_ext import (
    PRIVATE,
    OrderedLoad,
    OrderedStore,
    PrivateAlloca,
    ScopedAtomicRMW,
    ScopedCmpXchg,
    ScopedLoadAtomic,
)

if TYPE_CHECKING:
    from ..lift.function import FunctionLowering
    from .hooks import AmdgpuHooks
    from .memory import Access


def run(hooks: AmdgpuHooks, fl: FunctionLowering) -> None:
    instrs = [i for blk in fl.llfn.blocks for i in blk.instructions]
    _by_value_params(hooks, fl, instrs)
    _private_allocas(fl, instrs)
    _memory_accesses(hooks, fl, instrs)
    defer_nan_canonicalisation(fl)
    _drop_dead_values(fl)


# ---------------------------------------------------------------------- 0. by-value parameters

def _by_value_params(hooks: AmdgpuHooks, fl: FunctionLowering, instrs: list[ir.Instruction]) -> list:
    mine = {id(i): hooks.by_value_reads.pop(id(i))[1] for i in instrs if id(i) in hooks.by_value_reads}
    if not mine:
        return instrs

    def argument(v: ir.Value) -> ir.Value | None:
        while isinstance(v, llins.CastInstr) and v.opname == "bitcast":
            v = v.operands[0]
        return mine.get(id(v))

    values: dict[int, ir.Value] = {}
    for i in instrs:
        if type(i) is llins.LoadInstr:
            arg = argument(i.operands[0])
            if arg is not None:
                if i.type == arg.type:
                    values[id(i)] = arg
                else:
                    b = ir.IRBuilder(i.parent)
                    b.position_before(i)
                    values[id(i)] = b.bitcast(arg, i.type)
        elif any(argument(op) is not None for op in i.operands if not isinstance(i, llins.CastInstr)):
            raise CodegenError(f"internal error in {fl.fn.name}: a by-value kernel parameter is used by "
                               f"`{i.opname}`, not read by a load")
    for i in instrs:
        for op in i.operands:
            if id(op) in values:
                i.replace_usage(op, values[id(op)])
    for blk in fl.llfn.blocks:
        blk.instructions = [i for i in blk.instructions if id(i) not in values]
    instrs[:] = [i for blk in fl.llfn.blocks for i in blk.instructions]
    return instrs


# ---------------------------------------------------------------------- 1. allocas

def _private_allocas(fl: FunctionLowering, instrs: list[ir.Instruction]) -> None:
    moved: set[int] = set()
    for i in instrs:
        if type(i) is llins.AllocaInstr:
            i.__class__ = PrivateAlloca
            i.type = i.allocated_type.as_pointer(PRIVATE)
            moved.add(id(i))
    if not moved:
        return
    for i in instrs:
        for k, op in enumerate(i.operands):
            if id(op) not in moved:
                continue
            if isinstance(i, llins.LoadInstr) or (isinstance(i, llins.StoreInstr) and k == 1):
                continue
            if isinstance(i, llins.CastInstr) and i.opname in ("bitcast", "addrspacecast"):
                i.opname = "addrspacecast" if i.type.addrspace != PRIVATE else "bitcast"
                continue
            raise CodegenError(f"internal error in {fl.fn.name}: a private alloca is used by "
                               f"`{i.opname}`, which the AMDGPU rewrite does not handle")


# ---------------------------------------------------------------------- 2./3. accesses

_ORDERED = ("volatile", "relaxed", "acquire", "release", "mmio")


def _memory_accesses(hooks: AmdgpuHooks, fl: FunctionLowering, instrs: list[ir.Instruction]) -> None:
    mine = {id(i): hooks.accesses.pop(id(i)) for i in instrs if id(i) in hooks.accesses}
    if not mine:
        return
    resolved: dict[int, tuple[Access, int] | None] = {}

    def resolve(v: ir.Value) -> tuple[Access, int] | None:
        key = id(v)
        if key in resolved:
            return resolved[key]
        out = None
        if key in mine:
            out = (mine[key][1], 0)
        elif isinstance(v, llins.CastInstr) and v.opname == "bitcast":
            out = resolve(v.operands[0])
        elif isinstance(v, llins.GEPInstr) and len(v.indices) == 1 and isinstance(v.indices[0], ir.Constant) \
                and v.source_etype == ir.IntType(8):
            base = resolve(v.pointer)
            if base is not None:
                out = (base[0], base[1] + int(v.indices[0].constant))
        elif isinstance(v, llins.GEPInstr) and len(v.indices) == 1 and _lane_zero(v.indices[0]):
            out = resolve(v.pointer)           # a float atomic's address (atomics._opaque_offset)
        resolved[key] = out
        return out

    converted: set[int] = set()
    for i in instrs:
        if type(i) in _SHARED_ATOMICS:
            hit = resolve(i.operands[0])
            if hit is not None:
                _scope_atomic(hooks, fl, i, hit[0])
                converted.add(id(hit[0]))
            continue
        if type(i) in _NATIVE_ATOMICS:            # atom/red lowered with their own ordering and scope
            hit = resolve(i.operands[0])
            if hit is not None:
                converted.add(id(hit[0]))
            continue
        if type(i) is llins.LoadInstr:
            hit = resolve(i.operands[0])
        elif type(i) is llins.StoreInstr:
            hit = resolve(i.operands[1])
        else:
            continue
        if hit is None:
            continue
        acc, offset = hit
        i.align = _alignment(acc.size, offset)
        _retarget(i, acc, offset)
        if _ordered(acc):
            _order(fl, i, acc)
            converted.add(id(acc))
        elif acc.ins.opcode == "ld.global.nc" or "nc" in acc.ins.modifiers:
            i.set_metadata("invariant.load", fl.ml.llmod.add_metadata([]))
    for _ptr, acc in mine.values():
        if _ordered(acc) and id(acc) not in converted:
            raise CodegenError(f"internal error in {fl.fn.name}: could not find the memory access of "
                               f"`{acc.ins}` to give it its ordering")


def _retarget(i: ir.Instruction, acc: Access, offset: int) -> None:
    """Address the access through the pointer in its own address space.  InferAddressSpaces
    would do it for plain accesses, but leaves volatile ones flat (``flat_load ... glc``)."""
    if acc.typed is None:
        return
    k = 0 if isinstance(i, llins.LoadInstr) else 1
    elem = i.type if k == 0 else i.operands[0].type
    b = ir.IRBuilder(i.parent)
    b.position_before(i)
    q = b.gep(acc.typed, [ir.IntType(64)(offset)]) if offset else acc.typed
    i.operands[k] = b.bitcast(q, ir.PointerType(elem, acc.typed.type.addrspace))


def _lane_zero(v: ir.Value) -> bool:
    """``mbcnt_lo(0, 0)``: the per-lane zero atomics._opaque_offset adds to a float atomic's address."""
    return isinstance(v, llins.CallInstr) and getattr(v.callee, "name", "") == "llvm.amdgcn.mbcnt.lo" \
        and all(isinstance(a, ir.Constant) and a.constant == 0 for a in v.args)


_SHARED_ATOMICS = {llins.LoadAtomicInstr: ScopedLoadAtomic, llins.CmpXchg: ScopedCmpXchg,
                   llins.AtomicRMW: ScopedAtomicRMW}
# What ``AmdgpuAtomics.native_atomic`` emits: already ordered and scoped as the PTX says.
_NATIVE_ATOMICS = (ScopedAtomicRMW, ScopedCmpXchg, ScopedLoadAtomic)


def _scope_atomic(hooks: AmdgpuHooks, fl: FunctionLowering, i: ir.Instruction, acc: Access) -> None:
    """The shared lowering's compare-and-swap loops (half-precision atomics) are ``seq_cst``
    at system scope; give them the instruction's own scope and ordering."""
    if acc.ins.opcode not in ("atom", "red"):
        return
    scope = scope_of(acc.ins, acc.space)
    order = LLVM_ORDER[acc.ins.mod("atomsem") or "relaxed"]
    i.__class__ = _SHARED_ATOMICS[type(i)]
    i.scope = scope
    if isinstance(i, llins.CmpXchg):
        i.ordering, i.failordering = order, "acquire" if order in ("acquire", "acq_rel") else "monotonic"
    elif isinstance(i, llins.AtomicRMW):
        i.ordering = order
    hooks._tag(fl, i, scope)


def _alignment(size: int, offset: int) -> int:
    natural = size & -size if size > 0 else 1           # largest power of two dividing the size
    return math.gcd(natural, offset) if offset else natural


def _ordered(acc: Access) -> bool:
    return any(m in acc.ins.modifiers for m in _ORDERED)


def _order(fl: FunctionLowering, i: ir.Instruction, acc: Access) -> None:
    mods = acc.ins.modifiers
    is_load = isinstance(i, llins.LoadInstr)
    if "volatile" in mods:
        ordering, scope = None, None
    else:
        sem = "acquire" if "acquire" in mods else "release" if "release" in mods else "relaxed"
        if sem == "acquire" and not is_load or sem == "release" and is_load:
            raise fl.unsupported(acc.ins, f"has `.{sem}` semantics on a {'load' if is_load else 'store'}")
        ordering, scope = LLVM_ORDER[sem], scope_of(acc.ins, acc.space, default="sys")
    i.__class__ = OrderedLoad if is_load else OrderedStore
    i.ordering, i.scope = ordering, scope


# ---------------------------------------------------------------------- 5. dead values

_SIDE_EFFECT_FREE = (llins.CastInstr, llins.GEPInstr, llins.CompareInstr, llins.SelectInstr, llins.AllocaInstr)


def _drop_dead_values(fl: FunctionLowering) -> None:
    instrs = [i for blk in fl.llfn.blocks for i in blk.instructions]
    uses: dict[int, int] = {}
    for i in instrs:
        # A phi keeps its values in ``incomings``, not ``operands``.
        for op in (*i.operands, *(v for v, _ in getattr(i, "incomings", ()))):
            uses[id(op)] = uses.get(id(op), 0) + 1
    dead: set[int] = set()
    for i in reversed(instrs):          # users come after their operands within a block
        if uses.get(id(i)) or not (isinstance(i, _SIDE_EFFECT_FREE) or type(i) is llins.LoadInstr):
            continue
        dead.add(id(i))
        for op in i.operands:
            if id(op) in uses:
                uses[id(op)] -= 1
    if dead:
        for blk in fl.llfn.blocks:
            blk.instructions = [i for i in blk.instructions if id(i) not in dead]
