"""Atomics and fences with PTX's scopes and orderings (a mixin of AmdgpuHooks).

PTX says what an atomic synchronises with (``.cta`` / ``.gpu`` / ``.sys``) and how
(``.relaxed`` by default, ``.acquire``, ``.release``, ``.acq_rel``); LLVM's AMDGPU memory
model takes the same two facts as ``syncscope`` and ordering, and emits exactly the cache
maintenance each needs.  (The shared lowering's ``seq_cst`` system-scope atomics are
correct but flush caches around every atomic.)

Atomics that are not system-scope carry ``!amdgpu.no.fine.grained.memory`` and
``!amdgpu.no.remote.memory``, as HIP's defaults do: the memory is device memory of this
GPU, which lets the backend use the hardware instructions (``global_atomic_add_f32``...)
instead of compare-and-swap loops.  Global f32 ``add`` on targets that list it as native
also carries ``!amdgpu.ignore.denormal.mode``: gfx90a's instruction flushes subnormal
inputs and results to sign-preserving zero, which is what the PTX ISA specifies for
``atom.add.f32`` (and what NVIDIA GPUs do in global memory); gfx942's and gfx1100's keep
subnormals, as ptxvm's interpreter and the compare-and-swap loops do.  Floating-point adds are kept out of LLVM's
wave-level atomic combining, which would round differently (``_opaque_offset``).
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import nodes as ptx
from ..isa import typeset
from ..lift.function import FunctionLowering
from ..lift.ops.memory import space_of
from .llvm_ext import ScopedAtomicRMW, ScopedCmpXchg, call
from .targets import Target

_HALF = typeset("half")

LLVM_SCOPE = {"cta": "workgroup", "cluster": "agent", "gpu": "agent", "sys": ""}
LLVM_ORDER = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel",
              "sc": "seq_cst"}
_INT_RMW = {"add": "add", "and": "and", "or": "or", "xor": "xor", "exch": "xchg", "inc": "uinc_wrap",
            "dec": "udec_wrap"}


def scope_of(ins: ptx.Instruction, space: str, default: str = "gpu") -> str:
    """The LLVM sync scope for an instruction's `.scope` (shared memory is per workgroup)."""
    scope = LLVM_SCOPE[ins.mod("scope") or default]
    return "workgroup" if space == "shared" and scope != "" else scope


def _empty_md(module: ir.Module) -> ir.MDValue:
    return module.add_metadata([])


class AtomicHooks:
    target: Target

    def native_atomic(self, fl: FunctionLowering, ins, op, t, ptr, values):
        b = fl.b
        space = space_of(ins)
        if t.bits > 64:
            raise fl.unsupported(ins, "is a 128-bit atomic, which AMD GPUs do not provide")
        scope = scope_of(ins, space)
        order = LLVM_ORDER[ins.mod("atomsem") or "relaxed"]
        if t.value in _HALF or (t.kind == "f" and op not in ("add", "exch", "cas")):
            return None         # compare-and-swap loop around the shared emitters
        if op == "cas":
            fail = "acquire" if order in ("acquire", "acq_rel") else "monotonic"
            cmp, new = (_bits(b, v) for v in values[:2])
            instr = ScopedCmpXchg(b.block, ptr, cmp, new, order, fail, "")
            instr.scope = scope
            b._insert(instr)
            self._tag(fl, instr, scope)
            return b.extract_value(instr, 0)
        if t.kind == "f" and op == "add":
            rmw, val = "fadd", values[0]
            ptr = _opaque_offset(b, ptr)
        elif op in ("min", "max"):
            rmw, val = (op if t.kind == "s" else "u" + op), values[0]
        else:
            rmw, val = _INT_RMW[op], _bits(b, values[0])
        instr = ScopedAtomicRMW(b.block, rmw, ptr_for(b, ptr, val.type), val, order, "")
        instr.scope = scope
        b._insert(instr)
        self._tag(fl, instr, scope)
        if rmw == "fadd" and space in ("global", "generic") and t.value == "f32" \
                and self.target.has_native_atomic("global", "add", "f32"):
            instr.set_metadata("amdgpu.ignore.denormal.mode", _empty_md(fl.ml.llmod))
        return _bits(b, instr)

    def _tag(self, fl: FunctionLowering, instr: ir.Instruction, scope: str) -> None:
        if scope:     # not system scope: device memory of this GPU
            md = _empty_md(fl.ml.llmod)
            instr.set_metadata("amdgpu.no.fine.grained.memory", md)
            instr.set_metadata("amdgpu.no.remote.memory", md)

    def fence(self, fl: FunctionLowering, ins: ptx.Instruction) -> None:
        b = fl.b
        if ins.opcode == "membar":
            level = ins.mod("membar_level")
            if level is None:             # membar.proxy: no proxies here; a full fence is safe
                b.fence("seq_cst")
                return
            b.fence("seq_cst", {"cta": "workgroup", "gl": "agent", "sys": None}[level])
            return
        sem, scope = ins.mod("fencesem"), ins.mod("scope")
        if scope is None:                 # proxy / restricted forms: a full fence is safe
            b.fence("seq_cst")
            return
        b.fence(LLVM_ORDER[sem or "sc"], LLVM_SCOPE[scope] or None)


def _opaque_offset(b: ir.IRBuilder, p: ir.Value) -> ir.Value:
    """``p`` plus a per-lane zero the compiler does not see through.

    LLVM's AMDGPU atomic optimizer merges a wave's atomics on one address into a single
    atomic of the lanes' combined operand (``x * popcount`` for a uniform ``x``).  That is
    exact for integers, but for floating-point adds it rounds differently from any order of
    the individual adds PTX specifies (1.0 plus 2^-24 twice is 1.0 one add at a time and
    1.0000001 merged).  The optimizer leaves atomics on divergent addresses alone, so the
    address gets ``mbcnt_lo(0, 0)``: always 0, a per-lane value to the compiler, one
    ``v_mbcnt`` at run time.  (Tests check the merge stays off.)
    """
    zero = call(b, "llvm.amdgcn.mbcnt.lo", ir.IntType(32), [ir.IntType(32)(0), ir.IntType(32)(0)])
    raw = b.bitcast(p, ir.PointerType(ir.IntType(8), p.type.addrspace))
    return b.bitcast(b.gep(raw, [zero]), p.type)


def _bits(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
    if isinstance(v.type, ir.FloatType):
        return b.bitcast(v, ir.IntType(32))
    if isinstance(v.type, ir.DoubleType):
        return b.bitcast(v, ir.IntType(64))
    return v


def ptr_for(b: ir.IRBuilder, p: ir.Value, ty: ir.Type) -> ir.Value:
    """``p`` as a pointer to ``ty`` (the shared lowering hands an integer-typed pointer)."""
    return p if p.type.pointee == ty else b.bitcast(p, ir.PointerType(ty, p.type.addrspace))
