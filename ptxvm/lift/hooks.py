"""The target hooks interface: everything the lifter does differently per target.

Ordinary instructions (arithmetic, conversions, control flow inside a function) lower the
same way for every target.  What a target decides is behind these hooks: where a thread's
identity comes from (special registers), how an address in a state space becomes an LLVM
pointer (and whether it is checked), how threads synchronise (barriers, warp operations),
and the kernel ABI.  ``ptxvm.jit.host`` implements them for the host JIT; the AMDGPU
targets implement them with amdgcn intrinsics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir

if TYPE_CHECKING:
    from ..ir import nodes as ptx
    from .function import FunctionLowering


class TargetHooks:
    """Base class; every method raises until a target implements it."""

    name = "abstract"
    inline_synchronising = True      # inline `.func`s that stop threads (state-machine targets)
    # The shared lowering makes volatile/relaxed/acquire/release accesses LLVM atomics (False:
    # the target gives them their ordering and scope itself, after lowering).
    orders_accesses_in_lowering = False
    # Builtin calls that stop the thread (so the functions making them synchronise).
    stopping_builtins: frozenset[str] = frozenset()
    # External functions besides vprintf/__assertfail/malloc/free that calls go to builtin_call
    # for (the host's device runtime: CDP2 entry points; a target refuses them there precisely).
    extra_builtins: frozenset[str] = frozenset()
    triple = ""
    data_layout = ""
    # The lanes of a warp run one after another between warp exchanges (a state machine, the
    # host JIT), so one lane may compute a warp-wide result into the exchange (WarpView.store).
    warp_lanes_in_turn = False

    # -- kernel ABI -----------------------------------------------------------------
    def kernel_signature(self) -> ir.FunctionType:
        raise NotImplementedError

    def function_prefix_args(self) -> list[ir.Type]:
        """Leading LLVM arguments every lowered `.func` receives (target context)."""
        raise NotImplementedError

    def function_prefix_values(self, fl: "FunctionLowering") -> list[ir.Value]:
        """The values passed for ``function_prefix_args`` at a call site inside ``fl``."""
        raise NotImplementedError

    def before_call(self, fl: "FunctionLowering") -> None:
        """Just before a call to a lowered `.func`."""

    def after_call(self, fl: "FunctionLowering", status: ir.Value) -> None:
        """After a call to a lowered `.func` (which returns an i32 status: 0 = carry on)."""

    def function_return(self, fl: "FunctionLowering") -> None:
        """Just before a `.func` returns to its caller."""

    def push_frame(self, fl: "FunctionLowering", f) -> None:
        """Entering ``f`` (called or inlined): allocate its `.local` call frame."""

    def pop_frame(self, fl: "FunctionLowering", f) -> None:
        """Leaving an inlined ``f``: release its call frame."""

    def finish_module(self, ml, entry: ir.Function) -> None:
        """After every function is lowered (e.g. to add a driver or kernel wrapper)."""

    def new_function_state(self, fl: "FunctionLowering") -> object | None:
        """The target's record of one function being lowered (``fl.target_state``), created
        before ``begin_function``; None when the target keeps nothing per function."""
        return None

    def begin_function(self, fl: "FunctionLowering") -> None:
        """Called once the entry block exists (registers allocated), before the body."""

    def before_instruction(self, fl: "FunctionLowering", ins: "ptx.Instruction") -> None:
        """Each instruction the walk reaches, before it is lowered (guarded or not)."""

    def finish_function(self, fl: "FunctionLowering") -> None:
        """Called after the body is lowered (e.g. to build a resume dispatch)."""

    # -- identity ---------------------------------------------------------------------
    def special_register(self, fl: "FunctionLowering", name: str, component: str | None,
                         bits: int, ins: "ptx.Instruction") -> ir.Value:
        """A primitive special register (``%tid``, ``%ntid``, ``%ctaid``, ``%nctaid``, clocks,
        what only the target knows); the warp registers are derived in ``lift.sregs``."""
        raise NotImplementedError

    def linear_tid(self, fl: "FunctionLowering") -> ir.Value:
        """i32: the thread's index in its CTA, x fastest (PTX's order of lanes into warps)."""
        b = fl.b
        x, y, z = (self.special_register(fl, "%tid", c, 32, fl.ins) for c in "xyz")
        nx, ny = (self.special_register(fl, "%ntid", c, 32, fl.ins) for c in "xy")
        return b.add(x, b.mul(nx, b.add(y, b.mul(ny, z))))

    def lane_id(self, fl: "FunctionLowering") -> ir.Value:
        """i32: the thread's lane in its 32-lane PTX warp."""
        return fl.b.and_(self.linear_tid(fl), ir.IntType(32)(31))

    # -- memory -----------------------------------------------------------------------
    def access(self, fl: "FunctionLowering", space: str, address: ir.Value, size: int,
               ins: "ptx.Instruction", *, write: bool, align: int | None = None) -> ir.Value:
        """A pointer (i8*) to ``size`` bytes at ``address`` (i64) in ``space``; faults if invalid."""
        raise NotImplementedError

    def param_pointer(self, fl: "FunctionLowering", offset: int, element: int = 0, count: int = 1,
                      ins: "ptx.Instruction | None" = None) -> ir.Value:
        """Pointer to a kernel parameter byte offset; ``count`` accesses of ``element`` bytes
        there by ``ins`` (a target that checks them against the block's size does)."""
        raise NotImplementedError

    def symbol_address(self, fl: "FunctionLowering", name: str, space: str | None,
                       ins: "ptx.Instruction") -> ir.Value:
        raise NotImplementedError

    def cvta(self, fl: "FunctionLowering", address: ir.Value, space: str, to_generic: bool) -> ir.Value:
        raise NotImplementedError

    def isspacep(self, fl: "FunctionLowering", address: ir.Value, space: str) -> ir.Value:
        raise NotImplementedError

    # -- control ----------------------------------------------------------------------
    def exit_thread(self, fl: "FunctionLowering", ins: "ptx.Instruction | None") -> None:
        """Terminate the current block: the thread is done."""
        raise NotImplementedError

    def exit_from_function(self, fl: "FunctionLowering", ins: "ptx.Instruction") -> None:
        """`exit` inside a `.func`: the thread ends."""
        raise NotImplementedError

    def trap(self, fl: "FunctionLowering", ins: "ptx.Instruction", kind: str) -> None:
        raise NotImplementedError

    def bad_call(self, fl: "FunctionLowering", ins: "ptx.Instruction", target: ir.Value) -> None:
        """An indirect call through an address that names no function of the module."""
        raise NotImplementedError

    def builtin_call(self, fl: "FunctionLowering", ins: "ptx.Instruction", name: str, rets, args) -> None:
        """Calls to `vprintf`, `__assertfail`, `malloc`, `free` and the ``extra_builtins``."""
        raise fl.unsupported(ins, f"calls `{name}`, which this target does not provide")

    def loop_header(self, fl: "FunctionLowering", instructions: int) -> None:
        """Called where a labelled stretch of ``instructions`` instructions starts (accounting)."""

    def yield_thread(self, fl: "FunctionLowering", ins: "ptx.Instruction") -> None:
        """`nanosleep`: a hint that other threads should run."""

    def warp_lockstep(self, fl: "FunctionLowering", ins: "ptx.Instruction") -> None:
        """A volatile shared access: targets without lockstep warps make the warp catch up."""

    def barrier(self, fl: "FunctionLowering", ins: "ptx.Instruction", barrier_id: ir.Value,
                count: ir.Value | None, *, arrive: bool = False,
                reduce: tuple[str, ir.Value] | None = None) -> ir.Value | None:
        raise NotImplementedError

    def warp_exchange(self, fl: "FunctionLowering", ins: "ptx.Instruction",
                      values: list[ir.Value]) -> "WarpView":
        """Publish ``values`` (i64 each) to the warp and wait until the participating lanes have."""
        raise NotImplementedError

    def matrix_mma(self, fl: "FunctionLowering", ins: "ptx.Instruction", mma) -> bool:
        """Lower a warp's `mma`/`wmma.mma` (``mma``: lift.ops.matrix_frag.MmaOperands) with the
        target's matrix instructions; False: the shared lowering (fma per element) does it."""
        return False

    def fence(self, fl: "FunctionLowering", ins: "ptx.Instruction") -> None:
        """`membar` / `fence`: a sequentially consistent system-wide fence is right on every
        target; a target may emit a narrower one matching the instruction's scope."""
        fl.b.fence("seq_cst")

    def native_atomic(self, fl: "FunctionLowering", ins: "ptx.Instruction", op: str, t,
                      ptr: ir.Value, values: list[ir.Value]) -> ir.Value | None:
        """`atom`/`red` the target lowers itself: returns the old value (as bits), or None to
        use the shared lowering (LLVM atomics, compare-and-swap loops for floats)."""
        return None


class WarpView:
    """What a lane sees after a warp exchange: the participating mask and other lanes' values."""

    mask: ir.Value          # i32: lanes that took part (arrived at this instruction together)
    lane: ir.Value          # i32: this lane's id

    def value(self, b: ir.IRBuilder, lane: ir.Value, slot: int) -> ir.Value:   # i64
        raise NotImplementedError

    def store(self, b: ir.IRBuilder, lane: ir.Value, slot: int, value: ir.Value) -> None:
        """Overwrite lane ``lane``'s published ``slot`` (i64) for the lanes still to run: only
        on targets with ``TargetHooks.warp_lanes_in_turn``."""
        raise NotImplementedError

    def ballot(self, b: ir.IRBuilder, slot: int) -> ir.Value | None:
        """i32: bit ``l`` set when lane ``l`` took part and published a non-zero value in
        ``slot``, when the target has that in one step (an AMD ballot); None: fold the lanes."""
        return None
