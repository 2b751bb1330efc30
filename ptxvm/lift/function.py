"""Lowering one PTX function body to one LLVM function.

Registers become entry-block allocas of their storage width (``iN``, ``i1`` for
predicates; floats are stored as their bits so NaN payloads survive moves) that
mem2reg promotes.  Labels become basic blocks; a guarded instruction becomes a
conditional branch around its lowering.  Operand reads and writes convert between
storage and the emitter convention of ``ptxvm.lift`` (floats as LLVM floats).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Callable

from llvmlite import ir

from ..errors import UnsupportedError
from ..ir import nodes as ptx
from ..ir.sregs import lookup_special
from ..ir.types import ScalarType, StateSpace
from ..passes.vectors import COMPONENTS, expand_vector_registers

if TYPE_CHECKING:
    from .hooks import TargetHooks
    from .module import ModuleLowering

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
I8P = ir.PointerType(I8)
_VECTOR = "vector:"                  # a scope's entry for a vector register: its width follows


def storage_type(t: ScalarType) -> ir.Type:
    """How a register of type ``t`` is stored: raw bits (``i1`` for predicates)."""
    if t is ScalarType.PRED:
        return I1
    return ir.IntType(max(t.bits, 8))


def value_type(t: ScalarType) -> ir.Type:
    """The emitter convention: f32/f64 as LLVM floats, everything else as bits."""
    if t is ScalarType.F32:
        return F32
    if t is ScalarType.F64:
        return F64
    return storage_type(t)


def to_value(b: ir.IRBuilder, bits: ir.Value, t: ScalarType) -> ir.Value:
    if t is ScalarType.F32 or t is ScalarType.F64:
        return b.bitcast(bits, value_type(t))
    return bits


def to_bits(b: ir.IRBuilder, v: ir.Value, t: ScalarType) -> ir.Value:
    if isinstance(v.type, (ir.FloatType, ir.DoubleType)):
        return b.bitcast(v, ir.IntType(64 if isinstance(v.type, ir.DoubleType) else 32))
    return v


def resize(b: ir.IRBuilder, v: ir.Value, width: int, signed: bool) -> ir.Value:
    have = v.type.width
    if have == width:
        return v
    if have > width:
        return b.trunc(v, ir.IntType(width))
    return b.sext(v, ir.IntType(width)) if signed else b.zext(v, ir.IntType(width))


def offset_address(b: ir.IRBuilder, base: ir.Value, offset: int) -> ir.Value:
    """``[reg+offset]`` as an i64 address: formed in the register's width, so a 32-bit register's
    address wraps modulo 2^32 as on the GPU (`[%r4+68]` with %r4 just below a shared array)."""
    width = max(base.type.width, 32)
    base = resize(b, base, width, False)
    return resize(b, b.add(base, ir.IntType(width)(offset & ((1 << width) - 1))), 64, False)


def immediate_bits(imm: ptx.Immediate, t: ScalarType) -> int:
    """The raw bits an immediate operand denotes for an instruction of type ``t``."""
    bits = max(t.bits, 8) if t is not ScalarType.PRED else 1
    if t.kind == "f" and t.bits in (32, 64):
        if imm.kind is ptx.ImmKind.F32:
            v = struct.unpack("<f", struct.pack("<I", imm.value))[0]
        elif imm.kind is ptx.ImmKind.F64:
            v = struct.unpack("<d", struct.pack("<Q", imm.value))[0]
        else:
            v = float(imm.value)
        if t.bits == 32:
            if imm.kind is ptx.ImmKind.F32:
                return int(imm.value)
            return _f32_bits(v)
        if imm.kind is ptx.ImmKind.F64:
            return int(imm.value)
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    if imm.kind is ptx.ImmKind.F32 and bits == 32 or imm.kind is ptx.ImmKind.F64 and bits == 64:
        return int(imm.value)
    if imm.kind is ptx.ImmKind.FLOAT:
        if bits == 16:
            return struct.unpack("<H", struct.pack("<e", float(imm.value)))[0]
        if bits == 32:
            return _f32_bits(float(imm.value))
        return struct.unpack("<Q", struct.pack("<d", float(imm.value)))[0]
    if imm.kind in (ptx.ImmKind.F32, ptx.ImmKind.F64) and bits != 32 and bits != 64:
        return int(imm.value) & ((1 << bits) - 1)
    return int(imm.value) & ((1 << bits) - 1)


def _f32_bits(v: float) -> int:
    import numpy as np
    with np.errstate(over="ignore", invalid="ignore"):         # §4.5.2's conversion: inf past FLT_MAX
        return int(np.asarray(v, dtype=np.float32).view(np.uint32))


class FunctionLowering:
    """State while one PTX function is lowered into ``llfn``."""

    def __init__(self, ml: "ModuleLowering", fn: ptx.Function, llfn: ir.Function,
                 param_args: dict[str, ir.Value]) -> None:
        self.ml, self.fn, self.llfn = ml, expand_vector_registers(fn), llfn
        self.hooks: "TargetHooks" = ml.hooks
        self.is_kernel = fn.is_kernel
        self.param_args = param_args          # `.param` name -> pointer argument (device functions)
        self.entry = llfn.append_basic_block("entry")
        self.body = llfn.append_basic_block("body")
        self.b = ir.IRBuilder(self.body)
        self._alloca_b = ir.IRBuilder(self.entry)
        self.regs: dict[str, tuple[ir.Value, ScalarType]] = {}       # unique key -> (alloca, type)
        self.scopes: list[dict[str, str]] = [{}]                       # PTX name -> unique key
        self.param_bufs: list[dict[str, ir.Value]] = [{}]              # `.param` decls in body scopes
        self.labels: dict[str, ir.Block] = {}
        self.targets: dict[str, tuple[str, ...]] = {}                 # `.branchtargets` lists
        self.resume_blocks: list[tuple[int, ir.Block]] = []
        self.cc = self._alloca_b.alloca(I1, name="cc")                 # the carry flag (CC.CF)
        self._alloca_b.store(I1(0), self.cc)
        self.loc: tuple[int, int, int] | None = None
        self.ins: ptx.Instruction | None = None
        self.inline: list[tuple[str, ir.Block]] = []          # (label prefix, return block) per inlined call
        self.frames: list[tuple[str, ir.Value]] = []          # (function, frame-pointer register) for `.local`
        self._inlined_keys: set[str] = set()                  # registers of callees lowered inline
        self.target_state: object | None = None               # the target's record (new_function_state)

    # ------------------------------------------------------------------ errors
    def unsupported(self, ins: ptx.Instruction, why: str) -> UnsupportedError:
        return self.ml.unsupported(ins, why)

    # ------------------------------------------------------------------ registers
    def declare(self, d: ptx.VarDecl) -> None:
        for name in d.register_names():
            if d.vector:
                # A `.v2`/`.v4` register is its elements `v.x`, `v.y`... (passes.vectors writes
                # whole uses as their brace list); the name itself marks the vector's width.
                self.scopes[-1][name] = f"{_VECTOR}{d.vector}"
                for comp in COMPONENTS[:d.vector]:
                    self._declare_scalar(f"{name}.{comp}", d.type)
            else:
                self._declare_scalar(name, d.type)

    def _declare_scalar(self, name: str, t: ScalarType) -> None:
        key = f"{name}#{len(self.regs)}"
        slot = self._alloca_b.alloca(storage_type(t), name=name.lstrip("%").replace("%", ""))
        self.regs[key] = (slot, t)
        self.scopes[-1][name] = key
        if self.inline:
            self._inlined_keys.add(key)

    def vector_width(self, name: str) -> int:
        """The element count of the vector register ``name`` in scope (0: none)."""
        for scope in reversed(self.scopes):
            key = scope.get(name)
            if key is not None:
                return int(key[len(_VECTOR):]) if key.startswith(_VECTOR) else 0
        return 0

    def own_register_slots(self, names: frozenset[str] | set[str]) -> list[ir.Value]:
        """The allocas of the registers named ``names`` that ``fn`` itself declares (in any of its
        scopes; not those of callees lowered inline, whose names may repeat the caller's)."""
        return [slot for key, (slot, _t) in self.regs.items()
                if key not in self._inlined_keys and key.rsplit("#", 1)[0] in names]

    def register(self, op: ptx.Register) -> tuple[ir.Value, ScalarType] | None:
        # `v.x`: an element of a vector register (special registers such as `%tid.x` are not
        # in scope); a whole vector `v` is no one register.
        name = op.name if op.component is None else f"{op.name}.{op.component}"
        for scope in reversed(self.scopes):
            key = scope.get(name)
            if key is not None:
                return None if key.startswith(_VECTOR) else self.regs[key]
        return None

    def alloca_bytes(self, size: int, align: int, name: str) -> ir.Value:
        slot = self._alloca_b.alloca(ir.ArrayType(I8, max(size, 1)), name=name)
        slot.align = max(align, 1)
        return self._alloca_b.bitcast(slot, I8P)

    def argument_buffer(self, t: ScalarType, name: str) -> tuple[ir.Value, ir.Value]:
        """A call's by-value buffer for one ``t`` value: (i8*, storage pointer), both made in the
        entry block, so they dominate code after a stop inside an inlined callee."""
        width = 1 if t is ScalarType.PRED else max(t.bits, 8) // 8
        buf = self.alloca_bytes(width, width, name)
        return buf, self._alloca_b.bitcast(buf, ir.PointerType(storage_type(t)))

    # ------------------------------------------------------------------ operands
    def read(self, op: ptx.Operand, t: ScalarType) -> ir.Value:
        """The operand's value of instruction type ``t`` in the emitter convention."""
        b = self.b
        if isinstance(op, ptx.Register):
            hit = self.register(op)
            if hit is not None:
                slot, rt = hit
                raw = b.load(slot)
                if t is ScalarType.PRED or rt is ScalarType.PRED:
                    if t is not ScalarType.PRED or rt is not ScalarType.PRED:
                        raise self.unsupported(self.ins, f"`{op}` is used as {t.value} but declared {rt.value}")
                    return raw
                return to_value(b, resize(b, raw, max(t.bits, 8), False), t)
            if lookup_special(op.name, op.component) is not None:
                from .sregs import special_register      # sregs builds on this module
                v = special_register(self, op.name, op.component, max(t.bits, 8), self.ins)
                return to_value(b, resize(b, v, max(t.bits, 8), False), t)
            raise self.unsupported(self.ins, f"reads `{op}`, which is not declared")
        if isinstance(op, ptx.Negated):
            return b.not_(self.read(op.operand, ScalarType.PRED))
        if isinstance(op, ptx.Immediate):
            if t is ScalarType.PRED:
                return I1(int(op.value) & 1)
            return to_value(b, ir.IntType(max(t.bits, 8))(immediate_bits(op, t)), t)
        if isinstance(op, ptx.Symbol):
            addr = self.hooks.symbol_address(self, op.name, None, self.ins)
            return to_value(b, resize(b, addr, max(t.bits, 8), False), t)
        if isinstance(op, ptx.Offset):
            # `arr+8` / `%r1+4` (§6.4.1 address expressions): the base's value plus the constant.
            if t.kind == "f" or t is ScalarType.PRED:
                raise self.unsupported(self.ins, f"adds an offset to `{op.base}` as a .{t.value} value; an "
                                                 "address expression `base+imm` is an integer")
            ty = ir.IntType(max(t.bits, 8))
            return b.add(self.read(op.base, t), ty(op.offset & ((1 << ty.width) - 1)))
        raise self.unsupported(self.ins, f"operand `{op}` cannot be read as a value here")

    def write(self, op: ptx.Operand, t: ScalarType, value: ir.Value) -> None:
        b = self.b
        if isinstance(op, ptx.Sink):
            return
        if not isinstance(op, ptx.Register):
            raise self.unsupported(self.ins, f"cannot write to `{op}`")
        hit = self.register(op)
        if hit is None:
            raise self.unsupported(self.ins, f"writes `{op}`, which is not a declared register")
        slot, rt = hit
        if rt is ScalarType.PRED or t is ScalarType.PRED:
            if value.type != I1:
                raise self.unsupported(self.ins, f"`{op}` is a {rt.value} register")
            b.store(value, slot)
            return
        bits = to_bits(b, value, t)
        b.store(resize(b, bits, max(rt.bits, 8), t.kind == "s"), slot)

    def address(self, a: ptx.Address, space: str) -> ir.Value:
        """The i64 address of ``[base+offset]`` in ``space``."""
        b = self.b
        if a.base is None:
            base = I64(0)
        elif isinstance(a.base, ptx.Symbol):
            base = self.hooks.symbol_address(self, a.base.name, space, self.ins)
        else:
            hit = self.register(a.base)
            if hit is None:
                raise self.unsupported(self.ins, f"addresses through `{a.base}`, which is not a declared register")
            slot, rt = hit
            if rt.bits <= 32 and a.offset:
                return offset_address(b, b.load(slot), a.offset)
            base = resize(b, b.load(slot), 64, False)
        return b.add(base, I64(a.offset & 0xFFFF_FFFF_FFFF_FFFF)) if a.offset else base

    def param_buffer(self, name: str) -> ir.Value | None:
        for scope in reversed(self.param_bufs):
            if name in scope:
                return scope[name]
        # A `.reg` formal's buffer holds what the caller passed, not the register's value now.
        if any(d.name == name and d.space is StateSpace.REG for d in (*self.fn.returns, *self.fn.params)):
            return None
        return self.param_args.get(name)

    # ------------------------------------------------------------------ blocks
    def new_block(self, name: str = "") -> ir.Block:
        return self.llfn.append_basic_block(name)

    def terminated(self) -> bool:
        return self.b.block.is_terminated

    def continue_in(self, block: ir.Block) -> None:
        if not self.b.block.is_terminated:
            self.b.branch(block)
        self.b.position_at_end(block)

    def label(self, name: str) -> ir.Block:
        if self.inline:
            name = self.inline[-1][0] + name
        blk = self.labels.get(name)
        if blk is None:
            blk = self.labels[name] = self.llfn.append_basic_block(f"L_{name.lstrip('$')}")
        return blk

    def branch_targets(self, name: str) -> tuple[str, ...] | None:
        if self.inline:
            name = self.inline[-1][0] + name
        return self.targets.get(name)

    def guarded(self, guard: ptx.Guard, lower: Callable[[], None]) -> None:
        p = self.read(guard.register, ScalarType.PRED)
        if guard.negated:
            p = self.b.not_(p)
        then, cont = self.new_block("then"), self.new_block("cont")
        self.b.cbranch(p, then, cont)
        self.b.position_at_end(then)
        lower()
        self.continue_in(cont)

    # ------------------------------------------------------------------ walking
    def lower_body(self) -> None:
        self.ml.check_calls(self.fn)
        self.target_state = self.hooks.new_function_state(self)
        if not self.is_kernel:
            self._register_formals(self.fn, self.param_args, self._alloca_b)
        self.hooks.begin_function(self)
        self._walk(self.fn.body)
        if not self.terminated():
            if self.is_kernel:
                self.hooks.exit_thread(self, None)
            else:
                self.store_register_returns()
                self.ml.return_from(self)
        self.hooks.finish_function(self)
        if not self.entry.is_terminated:
            self._alloca_b.branch(self.body)

    def inline_call(self, callee: ptx.Function, params: dict[str, ir.Value]) -> None:
        """Lower ``callee``'s body here, its formals bound to the caller's buffers (`.reg` formals
        loaded from theirs, `.reg` results stored back at the return): how calls to functions that
        synchronise become part of the kernel's state machine."""
        self.ml.check_calls(callee)
        callee = expand_vector_registers(callee)
        ret = self.new_block(f"ret_{callee.name}")
        self.inline.append((f"{callee.name}#{len(self.labels)}#", ret))
        self.scopes.append({})
        self.param_bufs.append({n: p for n, p in params.items()
                                if n not in {d.name for d in (*callee.returns, *callee.params)
                                             if d.space is StateSpace.REG}})
        self._register_formals(callee, params, self.b)
        results = [(part, params[d.name]) for d in callee.returns if d.space is StateSpace.REG
                   for part in self.register_parts(d.name)]
        self.hooks.push_frame(self, callee)
        self.hooks.loop_header(self, _segment_counts(callee.body).get(None, 0))
        self._walk(callee.body)
        self.scopes.pop()
        self.param_bufs.pop()
        self.inline.pop()
        self.continue_in(ret)
        for (off, slot, t), buf in results:
            self.b.store(self.b.load(slot), self.buffer_part(self.b, buf, off, t))
        self.hooks.pop_frame(self, callee)

    def _register_formals(self, f: ptx.Function, buffers: dict[str, ir.Value], b: ir.IRBuilder) -> None:
        """Declare ``f``'s `.reg` parameters and results as registers of the current scope; each
        parameter starts as the bytes of its buffer (what the caller passed, by value)."""
        for d in (*f.returns, *f.params):
            if d.space is not StateSpace.REG:
                continue
            self.declare(d)
            if any(d is p for p in f.params):
                for off, slot, t in self.register_parts(d.name):
                    b.store(b.load(self.buffer_part(b, buffers[d.name], off, t)), slot)

    def store_register_returns(self) -> None:
        """`ret` from a device function: its `.reg` results into the buffers the caller passed."""
        for d in self.fn.returns:
            if d.space is StateSpace.REG:
                for off, slot, t in self.register_parts(d.name):
                    self.b.store(self.b.load(slot), self.buffer_part(self.b, self.param_args[d.name], off, t))

    def register_parts(self, name: str) -> list[tuple[int, ir.Value, ScalarType]]:
        """(byte offset, slot, type) of the register ``name`` as its bytes lie in a by-value
        buffer: one for a scalar, the elements of a vector register (element i at i * size)."""
        width = self.vector_width(name)
        if not width:
            slot, t = self.register(ptx.Register(name))
            return [(0, slot, t)]
        parts = [self.register(ptx.Register(name, c)) for c in COMPONENTS[:width]]
        size = max(parts[0][1].bits, 8) // 8
        return [(i * size, slot, t) for i, (slot, t) in enumerate(parts)]

    def buffer_part(self, b: ir.IRBuilder | None, buf: ir.Value, offset: int, t: ScalarType) -> ir.Value:
        """A ``t`` pointer ``offset`` bytes into the i8* buffer ``buf``, built with ``b`` (None: in the
        entry block, so it dominates code after a stop inside an inlined callee)."""
        b = b or self._alloca_b
        return b.bitcast(b.gep(buf, [I64(offset)]) if offset else buf, ir.PointerType(storage_type(t)))

    def hidden_register(self, name: str, t: ScalarType) -> ir.Value:
        """A register the PTX does not name (saved and restored at stops like any other)."""
        slot = self._alloca_b.alloca(storage_type(t), name=name)
        self.regs[f"%%{name}#{len(self.regs)}"] = (slot, t)
        return slot

    def _walk(self, block: ptx.Block) -> None:
        from .ops import lower_instruction
        # Pre-declare this scope's labels so forward branches find them.
        for st in block.statements:
            if isinstance(st, ptx.Label):
                self.label(st.name)
            elif isinstance(st, ptx.BranchTargets) and st.kind == "branchtargets":
                prefix = self.inline[-1][0] if self.inline else ""
                self.targets[prefix + st.name] = st.targets
        counts = _segment_counts(block)
        if block is self.fn.body:
            self.hooks.loop_header(self, counts.get(None, 0))
        for st in block.statements:
            if isinstance(st, ptx.Instruction):
                if self.terminated():
                    self.b.position_at_end(self.new_block("dead"))
                self.ins = st
                self.hooks.before_instruction(self, st)
                if st.guard is not None and st.opcode != "bra":
                    self.guarded(st.guard, lambda st=st: lower_instruction(self, st))
                else:
                    lower_instruction(self, st)
            elif isinstance(st, ptx.Label):
                self.continue_in(self.label(st.name))
                self.hooks.loop_header(self, counts.get(st.name, 0))
            elif isinstance(st, ptx.VarDecl):
                self._declare(st)
            elif isinstance(st, ptx.Block):
                self.scopes.append({})
                self.param_bufs.append({})
                self._walk(st)
                self.scopes.pop()
                self.param_bufs.pop()
            elif isinstance(st, ptx.Loc):
                self.loc = (st.file, st.line, st.column)
            # Pragmas, prototypes, branch-target lists need no code.

    def _declare(self, d: ptx.VarDecl) -> None:
        if d.space is StateSpace.REG:
            self.declare(d)
        elif d.space is StateSpace.PARAM:
            size = d.size_bytes() or 0
            self.param_bufs[-1][d.name] = self.alloca_bytes(size, d.align or d.element_bytes(), d.name)
        # .shared/.local/.const declarations in a body have addresses from the launch layout.

    def all_registers(self) -> list[tuple[ir.Value, ScalarType]]:
        return [*self.regs.values(), (self.cc, ScalarType.PRED)]


def _segment_counts(block: ptx.Block) -> dict[str | None, int]:
    """Instructions from each label (``None``: the block's start) to the next label: the
    executed-instruction count a thread adds when it enters that straight-line stretch."""
    counts: dict[str | None, int] = {None: 0}
    current: str | None = None
    for st in block.statements:
        if isinstance(st, ptx.Label):
            current = st.name
            counts[current] = 0
        elif isinstance(st, ptx.Instruction):
            counts[current] += 1
        elif isinstance(st, ptx.Block):
            counts[current] += sum(1 for _ in st.instructions())
    return counts
