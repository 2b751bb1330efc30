"""Compile one kernel's IR into a flat program of executable steps.

Blocks are flattened (registers of nested scopes are renamed so shadowing
works), labels become PCs, and every instruction becomes an ``Op`` whose
``run(batch, lanes)`` executes it for the given lanes. Operands are resolved
once here into small reader/writer closures, so the run loop does no lookups.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from ..errors import UnsupportedError
from ..ir import nodes as ir
from ..ir.sregs import lookup_special
from ..ir.types import ScalarType, StateSpace
from .lanevalues import Affine, extend as extend_affine
from ..machine.addressmap import LOCAL_BASE, PARAM_BASE, SHARED_BASE
from ..machine.symbols import Symbols
from .state import FLOAT, SINT, UINT, Batch, storage_dtype

Reader = Callable[[Batch, np.ndarray], np.ndarray]

VECTOR_COMPONENTS = "xyzw"          # the frontend writes `.r .g .b .a` as these


def _register_keys(key: str, count: int | None) -> list[str]:
    return [key] if count is None else [f"{key}{i}" for i in range(count)]
Writer = Callable[[Batch, np.ndarray, np.ndarray], None]


class Control:
    """What an op tells the scheduler besides "advance": kinds of control transfer."""

    NEXT = 0
    BRANCH = 1       # op.target for the lanes whose guard holds
    EXIT = 2
    BARRIER = 3
    JUMP = 4         # run() returns each lane's next pc (call, ret from a function)


@dataclass
class Op:
    pc: int
    ins: ir.Instruction
    run: Callable[[Batch, np.ndarray], object]
    control: int = Control.NEXT
    target: int = -1
    loc: tuple[int, int, int] | None = None     # (.file, line, column) of the nearest .loc
    guard: "Reader | None" = None
    guard_negated: bool = False
    warp_sync: bool = False      # reads other lanes: must run with every lane that reaches it together


@dataclass
class Program:
    kernel: ir.Function
    ops: list[Op]
    symbols: Symbols
    files: dict[int, str]


class CompileContext:
    """Name resolution while compiling one function of the program.

    Register and per-thread `.param` variable keys are prefixed with the
    function's name (``f|%r1``), and suffixed in nested scopes, so every
    function and scope has its own storage.
    """

    def __init__(self, module: ir.Module, kernel: ir.Function, symbols: Symbols,
                 function: ir.Function | None = None, entries: dict[str, int] | None = None) -> None:
        self.module, self.kernel, self.symbols = module, kernel, symbols
        self.function = function or kernel
        self.prefix = "" if self.function is kernel else self.function.name + "|"
        self.scopes: list[dict[str, tuple]] = [{}]
        self.labels: dict[str, int] = {}
        self.branch_targets: dict[str, tuple[str, ...]] = {}       # `.branchtargets` lists by name
        self.fresh = itertools.count()
        self.entries = entries if entries is not None else {}     # function name -> entry pc
        self.all_scopes: list[dict[str, tuple]] = []               # closed nested scopes

    # registers --------------------------------------------------------
    def declare(self, d: ir.VarDecl) -> None:
        depth = len(self.scopes) - 1
        key = self.prefix + (d.name if depth == 0 else f"{d.name}@{next(self.fresh)}")
        if d.space is StateSpace.PARAM:
            self.scopes[-1][d.name] = (key, d.type, None, "pvar", d.size_bytes() or 0)
        elif d.vector:
            # A `.v2`/`.v4` register (§5.4.2) is its elements: one scalar register per element,
            # named `v.x` (`v3.y` for `v<4>`), which no PTX identifier can spell.
            self.scopes[-1][d.name] = (key, d.type, d.count, "vreg", d.vector)
            for name, k in zip(d.register_names(), _register_keys(key, d.count)):
                for comp in VECTOR_COMPONENTS[:d.vector]:
                    self.scopes[-1][f"{name}.{comp}"] = (f"{k}.{comp}", d.type, None, "reg", 0)
        else:
            self.scopes[-1][d.name] = (key, d.type, d.count, "reg", 0)

    def lookup(self, name: str) -> tuple | None:
        for scope in reversed(self.scopes):
            hit = scope.get(name)
            if hit is not None:
                return hit
        return None

    def register(self, r: ir.Register) -> tuple[str, ScalarType] | None:
        name = r.name
        if r.component is not None:
            # An element of a vector register; special registers (`%tid.x`) are not in scope.
            hit = self.lookup(f"{name}.{r.component}")
            return (hit[0], hit[1]) if hit is not None and hit[3] == "reg" else None
        hit = self.lookup(name)
        if hit is not None and hit[3] == "reg":
            return hit[0], hit[1]
        # %r12 from `.reg .b32 %r<20>`
        base = name.rstrip("0123456789")
        if base != name:
            for scope in reversed(self.scopes):
                hit = scope.get(base)
                if hit is not None and hit[2] is not None:
                    return hit[0] + name[len(base):], hit[1]
        return None

    def vector_elements(self, r: ir.Register) -> tuple[ir.Register, ...] | None:
        """The element registers of a whole vector register operand (`v` of `.reg .v4 .u32 v`,
        `v2` of `v<4>`), in element order; None when ``r`` is no vector register."""
        if r.component is not None:
            return None
        hit = self.lookup(r.name)
        if hit is None:
            base = r.name.rstrip("0123456789")
            hit = self.lookup(base) if base != r.name else None
            if hit is None or hit[2] is None or int(r.name[len(base):]) >= hit[2]:
                return None
        if hit[3] != "vreg":
            return None
        return tuple(ir.Register(r.name, c) for c in VECTOR_COMPONENTS[:hit[4]])

    def expand_vectors(self, ins: ir.Instruction) -> ir.Instruction:
        """``ins`` with each whole vector register operand written as the brace list of its
        elements, the form every vector-taking instruction (ld/st/tex/mov packing) reads."""
        ops = tuple(ir.Vector(els) if isinstance(op, ir.Register) and (els := self.vector_elements(op))
                    else op for op in ins.operands)
        return ins if ops == ins.operands else replace(ins, operands=ops)

    def pvar(self, name: str) -> tuple[str, int] | None:
        """A per-thread `.param` variable (call arguments, return values, .func formals)."""
        hit = self.lookup(name)
        if hit is not None and hit[3] == "pvar":
            return hit[0], hit[4]
        return None

    def unsupported(self, ins: ir.Instruction, why: str) -> UnsupportedError:
        span = ins.span
        return UnsupportedError(f"`{ins.full_opcode}` {why}", filename=span.filename,
                                line=span.line or None, column=span.column or None)


# --------------------------------------------------------------------- operands

def _imm_bits(imm: ir.Immediate, t: ScalarType) -> np.generic:
    """An immediate as the raw bits of type ``t``."""
    if t is ScalarType.PRED:
        return np.bool_(bool(imm.value))
    bits = t.bits
    if t.kind == "f" and bits in (32, 64):
        if imm.kind is ir.ImmKind.F32:
            v = np.uint32(imm.value).view(np.float32)
        elif imm.kind is ir.ImmKind.F64:
            v = np.uint64(imm.value).view(np.float64)
        else:
            v = float(imm.value)
        with np.errstate(over="ignore", invalid="ignore"):     # §4.5.2's conversion: inf past FLT_MAX
            return np.asarray(v, dtype=FLOAT[bits]).view(UINT[bits])[()]
    if imm.kind is ir.ImmKind.F32 and bits == 32 or imm.kind is ir.ImmKind.F64 and bits == 64:
        return UINT[bits](imm.value)
    if imm.kind is ir.ImmKind.FLOAT:
        return np.asarray(float(imm.value), dtype=FLOAT.get(bits, np.float64)).view(UINT[bits])[()]
    return UINT[max(bits, 8)](int(imm.value) & ((1 << max(bits, 8)) - 1))


def width_convert(arr: np.ndarray, have_bits: int, want: ScalarType) -> np.ndarray:
    """Read a register of ``have_bits`` as type ``want`` (truncating wider registers)."""
    wb = max(want.bits, 8)
    if have_bits == wb:
        return arr
    return arr.astype(UINT[wb])


def extend(values: np.ndarray, t: ScalarType, reg_bits: int) -> np.ndarray:
    """Write a ``t`` value into a wider register: sign-extend signed types, else zero-extend."""
    if values.dtype.itemsize * 8 == reg_bits:
        return values
    if t.kind == "s":
        return values.view(SINT[values.dtype.itemsize * 8]).astype(SINT[reg_bits]).view(UINT[reg_bits])
    return values.astype(UINT[reg_bits])


def reader(ctx: CompileContext, op: ir.Operand, t: ScalarType, ins: ir.Instruction) -> Reader:
    """A closure giving the operand's value as raw bits of ``t`` (bool for .pred) for the lanes."""
    if isinstance(op, ir.Register):
        hit = ctx.register(op)
        if hit is not None:
            key, rt = hit
            _held(ctx, op, rt, ins)
            rbits = 1 if rt is ScalarType.PRED else max(rt.bits, 8)
            if t is ScalarType.PRED or rt is ScalarType.PRED:
                return lambda b, lanes: b.take(b.read_reg(key, rt), lanes)
            return lambda b, lanes: width_convert(b.take(b.read_reg(key, rt), lanes), rbits, t)
        sreg = lookup_special(op.name, op.component)
        if sreg is not None:
            return _special(ctx, op, t, ins)
        raise ctx.unsupported(ins, f"reads `{op}`, which is not declared")
    if isinstance(op, ir.Negated):
        inner = reader(ctx, op.operand, ScalarType.PRED, ins)
        return lambda b, lanes: ~inner(b, lanes)
    if isinstance(op, ir.Immediate):
        c = _imm_bits(op, t)
        return lambda b, lanes: np.full(lanes.shape, c)
    if isinstance(op, ir.Symbol):
        ut = UINT[max(t.bits, 8)]
        off = frame_offset(ctx, op.name)
        if off is not None:
            return lambda b, lanes: (b.take(b.fp, lanes) + off).astype(ut)
        addr = symbol_address(ctx, op.name, ins)
        c = ut(addr & ((1 << max(t.bits, 8)) - 1))
        return lambda b, lanes: np.full(lanes.shape, c)
    if isinstance(op, ir.Offset):
        return _offset_reader(ctx, op, t, ins)
    raise ctx.unsupported(ins, f"operand `{op}` cannot be read as a value here")


def _offset_reader(ctx: CompileContext, op: ir.Offset, t: ScalarType, ins: ir.Instruction) -> Reader:
    """`arr+8` / `%r1+4` as a source (§6.4.1 address expressions): the base's value (a variable's
    address, a register's contents) plus the constant, in the instruction type's width."""
    if t.kind == "f" or t is ScalarType.PRED:
        raise ctx.unsupported(ins, f"adds an offset to `{op.base}` as a .{t.value} value; an address "
                                   "expression `base+imm` is an integer")
    bits = max(t.bits, 8)
    base = reader(ctx, op.base, t, ins)
    c = UINT[bits](op.offset & ((1 << bits) - 1))
    return lambda b, lanes: (base(b, lanes) + c).astype(UINT[bits])


LaneReader = Callable[[Batch], "Affine | None"]


def lane_reader(ctx: CompileContext, op: ir.Operand, t: ScalarType, ins: ir.Instruction) -> LaneReader:
    """A closure giving the operand as a formula (lanevalues.Affine, ``t``'s width) for every thread
    of the batch, or None when it is not one (then the op reads it with ``reader``). Only valid
    while the op runs for every thread (``lanes is batch.all``)."""
    if t is ScalarType.PRED:
        return lambda b: None
    bits = max(t.bits, 8)
    if isinstance(op, ir.Register):
        hit = ctx.register(op)
        if hit is not None:
            key, rt = hit
            if rt is ScalarType.PRED:
                return lambda b: None
            rbits = max(rt.bits, 8)

            def read(b):
                v = b.regs.get(key)
                if not isinstance(v, Affine):
                    return None
                if bits <= rbits:
                    return v.truncate(bits)
                return extend_affine(v, bits, False, b.geometry.threads_per_cta, b.n_ctas)
            return read
        if lookup_special(op.name, op.component) is not None:
            return _special_affine(op.name, op.component, bits)
        return lambda b: None
    if isinstance(op, ir.Immediate):
        v = Affine.make(bits, int(_imm_bits(op, t)))
        return lambda b: v
    if isinstance(op, ir.Symbol) and frame_offset(ctx, op.name) is None:
        try:
            v = Affine.make(bits, symbol_address(ctx, op.name, ins))
        except UnsupportedError:
            return lambda b: None
        return lambda b: v
    return lambda b: None


def _special_affine(name: str, comp: str | None, bits: int) -> LaneReader:
    """Thread and CTA indices as formulas where the geometry makes them one (one-dimensional blocks
    and grids, and the size registers)."""
    axis = "xyz".index(comp) if comp in ("x", "y", "z") else 0

    def index(dims_of, linear):
        # An index is 0 along a unit dimension, and along x the linear thread (or CTA) index
        # when every dimension above x is 1; otherwise it is no formula of (tid, cta).
        def read(b):
            dims = dims_of(b)
            if dims[axis] == 1:
                return Affine.make(bits, 0)
            if axis == 0 and dims[1] == dims[2] == 1:
                return linear(b)
            return None
        return read

    if name == "%tid":
        return index(lambda b: b.geometry.block, lambda b: Affine.make(bits, 0, 1, 0))
    if name == "%ctaid":
        return index(lambda b: b.geometry.grid, lambda b: Affine.make(bits, b.first_cta, 0, 1))
    if name == "%ntid":
        return lambda b: Affine.make(bits, b.geometry.block[axis])
    if name == "%nctaid":
        return lambda b: Affine.make(bits, b.geometry.grid[axis])
    return lambda b: None


def address_formula(ctx: CompileContext, a: ir.Address, space: str, ins: ir.Instruction) -> LaneReader:
    """A `[base+offset]` operand's address (64-bit) as a formula for every thread, or None."""
    off = a.offset
    if a.base is None:
        v = Affine.make(64, off)
        return lambda b: v
    if isinstance(a.base, ir.Symbol):
        if frame_offset(ctx, a.base.name) is not None:
            return lambda b: None
        v = Affine.make(64, symbol_address(ctx, a.base.name, ins, space) + off)
        return lambda b: v
    hit = ctx.register(a.base)
    if hit is not None and hit[1].bits <= 32 and off:
        # A 32-bit register's address arithmetic wraps at 32 bits (see ``address``).
        base32 = lane_reader(ctx, a.base, ScalarType.U32, ins)
        k32 = Affine.make(32, off & 0xFFFF_FFFF)

        def addr32(b):
            v = base32(b)
            return None if v is None else extend_affine(v + k32, 64, False, b.geometry.threads_per_cta, b.n_ctas)
        return addr32
    base = lane_reader(ctx, a.base, ScalarType.U64, ins)
    k = Affine.make(64, off)

    def addr(b):
        v = base(b)
        return None if v is None else (v + k if off else v)
    return addr


def writer(ctx: CompileContext, op: ir.Operand, t: ScalarType, ins: ir.Instruction) -> Writer:
    if isinstance(op, ir.Sink):
        return lambda b, lanes, v: None
    if isinstance(op, ir.Register):
        hit = ctx.register(op)
        if hit is None:
            raise ctx.unsupported(ins, f"writes `{op}`, which is not a declared register")
        key, rt = hit
        _held(ctx, op, rt, ins)
        if rt is ScalarType.PRED or t is ScalarType.PRED:
            def write_pred(b, lanes, v, key=key, rt=rt):
                b.assign(key, rt, lanes, v)
            return write_pred
        rbits = max(rt.bits, 8)
        signed = t.kind == "s"

        def write(b, lanes, v, key=key, rt=rt, rbits=rbits):
            if isinstance(v, Affine):
                if lanes is b.all:
                    # A formula for every thread: keep it (extended/truncated as an array would be).
                    e = v.truncate(rbits) if v.bits >= rbits else \
                        extend_affine(v, rbits, signed, b.geometry.threads_per_cta, b.n_ctas)
                    if e is not None:
                        b.set_formula(key, e)
                        return
                v = b.take(b.materialize(v), lanes)
            b.assign(key, rt, lanes, extend(v, t, rbits) if v.dtype.itemsize * 8 < rbits else
                     (v if v.dtype.itemsize * 8 == rbits else v.astype(UINT[rbits])))
        return write
    raise ctx.unsupported(ins, f"operand `{op}` cannot be written")


def _held(ctx: CompileContext, r: ir.Register, rt: ScalarType, ins: ir.Instruction) -> None:
    """Registers are numpy lanes of at most 64 bits here (the host JIT and AMD have .b128)."""
    if rt.bits > 64:
        raise ctx.unsupported(ins, f"uses `{r}`, a .{rt.value} register, which the interpreter does not hold yet")


def _special(ctx: CompileContext, r: ir.Register, t: ScalarType, ins: ir.Instruction) -> Reader:
    name, comp = r.name, r.component
    want = UINT[max(t.bits, 8)]
    axis = "xyz".index(comp) if comp in ("x", "y", "z") else 0

    def const(v):
        return lambda b, lanes: np.full(lanes.shape, want(v))

    if name == "%tid":
        return lambda b, lanes: b.take(b.tid[axis], lanes).astype(want)
    if name == "%ntid":
        return lambda b, lanes: np.full(lanes.shape, want(b.geometry.block[axis]))
    if name == "%ctaid":
        return lambda b, lanes: b.take(b.ctaid[axis], lanes).astype(want)
    if name == "%nctaid":
        return lambda b, lanes: np.full(lanes.shape, want(b.geometry.grid[axis]))
    if name == "%laneid":
        return lambda b, lanes: b.take(b.laneid, lanes).astype(want)
    if name == "%warpid":
        return lambda b, lanes: b.take(b.warpid, lanes).astype(want)
    if name == "%nwarpid":
        return lambda b, lanes: np.full(lanes.shape, want((b.geometry.threads_per_cta + 31) // 32))
    if name in ("%smid", "%gridid"):
        return const(0)
    if name == "%nsmid":
        return const(1)
    if name.startswith("%lanemask_"):
        rel = name[len("%lanemask_"):]

        def lanemask(b, lanes, rel=rel):
            lane = b.laneid[lanes].astype(np.uint64)
            one = np.uint64(1) << lane
            m = {"eq": one, "lt": one - np.uint64(1), "le": (one << np.uint64(1)) - np.uint64(1)}
            if rel in m:
                v = m[rel]
            else:
                le = (one << np.uint64(1)) - np.uint64(1)
                lt = one - np.uint64(1)
                v = ~le if rel == "gt" else ~lt
            return (v & np.uint64(0xFFFFFFFF)).astype(want)
        return lanemask
    if name in ("%clock", "%clock64", "%clock_hi"):
        # Cycle counters: the batch's step count (monotone and deterministic).
        return lambda b, lanes: np.full(lanes.shape, want(b.steps))
    if name.startswith("%globaltimer"):
        import time
        shift = 32 if name.endswith("_hi") else 0      # nanoseconds, as the GPU's global timer
        return lambda b, lanes: np.full(lanes.shape, want((time.time_ns() >> shift) & 0xFFFFFFFFFFFFFFFF
                                                           if want is np.uint64 else
                                                           (time.time_ns() >> shift) & 0xFFFFFFFF))
    if name.startswith("%reserved_smem_offset"):
        return const(0)              # no shared memory is reserved in this model
    if name.startswith("%envreg"):
        # Driver-defined (§10.27): the launch's values (machine.cooperative: the grid workspace).
        k = int(name[len("%envreg"):])
        return lambda b, lanes: np.full(lanes.shape, want(b.envreg[k]))
    if name == "%dynamic_smem_size":
        return lambda b, lanes: np.full(lanes.shape, want(b.dynamic_shared))
    if name in ("%total_smem_size", "%aggr_smem_size"):
        return lambda b, lanes: np.full(lanes.shape, want(b.shared_bytes))
    raise ctx.unsupported(ins, f"reads special register `{r}`, which the interpreter does not provide")


def frame_offset(ctx: CompileContext, name: str) -> int | None:
    """For a `.local` variable of a `.func` being compiled: its offset in the function's call frame
    (its address is the executing thread's frame pointer plus that). None for anything else."""
    if ctx.function is ctx.kernel:
        return None
    return ctx.symbols.local_frames.get(ctx.function.name, {}).get(name)


def symbol_address(ctx: CompileContext, name: str, ins: ir.Instruction, space: str | None = None) -> int:
    """The address of a named variable in its own state space; for ``space`` "generic" (a generic
    `ld [var]`), its generic address: the window's base plus that for .shared/.local/.param."""
    s = ctx.symbols
    base = {"shared": SHARED_BASE, "local": LOCAL_BASE}
    if space == "generic":
        space_of = ("shared" if name in s.shared else "local" if name in s.local
                    or name in s.local_frames.get(ctx.kernel.name, {}) else None)
        if space_of is not None and name not in s.params:
            return base[space_of] + symbol_address(ctx, name, ins)
    kernel_local = s.local_frames.get(ctx.kernel.name, {}).get(name)
    if kernel_local is not None and ctx.function is ctx.kernel:
        return kernel_local
    if name in s.params:
        # A kernel parameter's address is in the .param space (§5.1.6.1: what `mov` gives and
        # `ld.param` / `cvta.param` take); only a generic `[param]` operand means its window address.
        return PARAM_BASE + s.params[name] if space == "generic" else s.params[name]
    if name in s.shared:
        return s.shared[name]
    if name in s.local:
        return s.local[name]
    if name in s.globals:
        return s.globals[name]
    if name in s.functions:
        return s.functions[name]
    raise ctx.unsupported(ins, f"refers to `{name}`, which has no storage in this launch")


def address(ctx: CompileContext, a: ir.Address, space: str, ins: ir.Instruction) -> Reader:
    """Per-lane addresses (uint64) of a `[base+offset]` operand in state space ``space``."""
    off = np.uint64(a.offset & 0xFFFFFFFFFFFFFFFF)
    if a.base is None:
        return lambda b, lanes: np.full(lanes.shape, off)
    if isinstance(a.base, ir.Symbol):
        frame = frame_offset(ctx, a.base.name)
        if frame is not None:
            frame += LOCAL_BASE if space == "generic" else 0
            return lambda b, lanes: b.take(b.fp, lanes).astype(np.uint64) + np.uint64(frame) + off
        base = np.uint64(symbol_address(ctx, a.base.name, ins, space))
        return lambda b, lanes: np.full(lanes.shape, base + off)
    hit = ctx.register(a.base)
    if hit is None:
        raise ctx.unsupported(ins, f"addresses through `{a.base}`, which is not a declared register")
    key, rt = hit
    if rt.bits <= 32 and a.offset:
        # `[%r4+68]`: the sum is formed in the register's 32 bits, so it wraps modulo 2^32 as on
        # the GPU (a shared address below the array base brought back by the offset).
        off32 = np.uint32(a.offset & 0xFFFF_FFFF)
        return lambda b, lanes: (b.take(b.read_reg(key, rt), lanes).astype(np.uint32) + off32).astype(np.uint64)
    return lambda b, lanes: b.take(b.read_reg(key, rt), lanes).astype(np.uint64) + off


def numpy_dtype(t: ScalarType) -> np.dtype:
    """The numpy type holding a value of ``t`` for arithmetic (signed ints, floats)."""
    if t.kind == "s":
        return np.dtype(SINT[t.bits])
    if t.kind == "f" and t.bits in (32, 64):
        return np.dtype(FLOAT[t.bits])
    return np.dtype(UINT[max(t.bits, 8)])


__all__ = ["Control", "Op", "Program", "CompileContext", "reader", "writer", "address",
           "lane_reader", "address_formula",
           "numpy_dtype", "storage_dtype", "extend", "symbol_address"]
