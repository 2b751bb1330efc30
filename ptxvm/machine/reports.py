"""The fault and deadlock reports every executor raises, built in one place from its facts.

An executor knows *what* happened in its own terms (a lane of a numpy batch, a thread record of
generated code); it hands the facts here and gets the user's error back, so a fault reads the
same on the interpreter and the host JIT: the message, then kernel, block and thread, the
instruction with its source line (from `.loc`), and the address of a memory fault. The texts of
faults both executors detect (bounds, alignment, watchdog, stack, assert, deadlock) are here too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .. import limits
from ..demangle import demangle
from ..errors import KernelFault
from ..ir import nodes as ir

Dim3 = tuple[int, int, int]


def bad_indirect_call(address: int) -> str:
    """A `call` through a register that holds no function's address (on a GPU: an illegal
    instruction fault)."""
    return f"indirect call through 0x{address:x}, which is not the address of a function of this module"


def kernel_fault(cls: type[KernelFault], message: str, *, kernel: str, block: tuple, thread: tuple,
                 instruction=None, loc: tuple[int, int, int] | None = None, files: dict | None = None,
                 memory=None, address: int | None = None, space: str | None = None) -> KernelFault:
    """The one fault report every executor raises: the message, then kernel, block and thread,
    the instruction with its CUDA source line (from `.loc`), and the address for memory faults.
    ``instruction`` is an IR instruction (its span gives the PTX location) or None."""
    source = where = ""
    if instruction is not None and loc is not None:
        f, line, _col = loc
        source = f"{(files or {}).get(f, f'file {f}')}:{line}"
        where = f" [{source}]"
    text = str(instruction) if instruction is not None else None
    shown = demangle(kernel)          # a C++ name reads better than _Z...
    named = f"`{shown}` ({kernel})" if shown else f"`{kernel}`"
    full = f"{message}\n  in kernel {named}, block {block}, thread {thread}"
    if text:
        full += f"\n  at `{text}`{where}"
    if address is not None and cls is KernelFault:
        full += f"\n  address 0x{address:x}" + (f" in the .{space} state space" if space else "")
    span = instruction.span if instruction is not None else None
    err = cls(full, kernel=kernel, block=block, thread=thread, instruction=text,
              filename=span.filename if span else None, line=span.line if span and span.line else None,
              column=span.column if span and span.line else None, source=source or None,
              address=address, space=space)
    err.memory = memory
    return err


# ------------------------------------------------------------------------------ deadlocks

@dataclass(frozen=True, slots=True)
class WaitSite:
    """Threads of one block waiting at one barrier instruction."""

    threads: tuple[Dim3, ...]       # the first few (thread index in the block)
    more: bool                      # more threads wait there than ``threads`` lists
    line: int | None                # the instruction's PTX line
    instruction: str


@dataclass(frozen=True, slots=True)
class BarrierWait:
    """One blocked barrier of one block. ``expects`` 0: all non-exited threads (then ``has``
    counts the threads waiting); else the announced thread count, ``has`` the arrivals in
    threads (whole warps count 32) of which ``by_arrive`` came by `bar.arrive`."""

    barrier: int
    expects: int
    has: float
    by_arrive: float
    sites: tuple[WaitSite, ...]


@dataclass(frozen=True, slots=True)
class BlockWait:
    """One block with threads that wait at barriers no thread can complete."""

    block: Dim3
    waiting: int                    # threads waiting at barriers
    live: int                       # non-exited threads
    exited: int
    barriers: tuple[BarrierWait, ...]


DEADLOCK = "deadlock: threads wait at a barrier that the rest of their block can never reach"
MAX_DEADLOCK_LINES = 40


def _count(x: float) -> str:
    # Interpreter arrivals are weighted (a partial warp's thread counts 32/p): 21.3333, not 21.333333.
    return f"{x:g}"


def deadlock_message(blocks: Iterable[BlockWait]) -> str:
    """Per blocked block and barrier: what it expects, what has arrived, who waits where."""
    lines: list[str] = []
    for bw in blocks:
        lines.append(f"  block {bw.block}: {bw.waiting} of {bw.live} non-exited threads wait at barriers, "
                     f"{bw.exited} exited")
        for bar in bw.barriers:
            if bar.expects > 0:
                lines.append(f"    barrier {bar.barrier} expects {bar.expects} threads, has {_count(bar.has)} "
                             f"({_count(bar.has - bar.by_arrive)} waiting, {_count(bar.by_arrive)} by `bar.arrive`)")
            else:
                lines.append(f"    barrier {bar.barrier} expects all {bw.live} non-exited threads, has "
                             f"{_count(bar.has)}")
            for site in bar.sites:
                lines.append(f"      waiting: threads {list(site.threads)}{' ...' if site.more else ''} "
                             f"at line {site.line}: `{site.instruction}`")
    return DEADLOCK + "\n" + "\n".join(lines[:MAX_DEADLOCK_LINES])


# ------------------------------------------------------------------------------ fault texts

def out_of_bounds(space: str, nbytes: int, address: int, nearest: str) -> str:
    """A global, const or generic access outside every allocation (``nearest``: DeviceMemory's)."""
    return f"out-of-bounds {space} access of {nbytes} bytes at 0x{address:x} ({nearest})"


def window_out_of_bounds(space: str, nbytes: int, offset: int, size: int) -> str:
    """A shared, local or param access past its window."""
    return (f"out-of-bounds {space} access of {nbytes} bytes at offset 0x{offset:x}; "
            f"the {space} window holds {size} bytes")


def param_out_of_bounds(offset: int) -> str:
    """A kernel-parameter access at a constant offset outside the block (may be negative)."""
    return f"out-of-bounds param access at offset {offset}"


def misaligned(space: str, nbytes: int, address: int) -> str:
    return f"misaligned {space} access: {nbytes}-byte access at 0x{address:x} is not {nbytes}-byte aligned"


STORE_TO_CONST = "store to the read-only .const state space"
STORE_TO_PARAM = "store to a kernel parameter (.param is read-only in kernels)"


def watchdog_message(max_steps: int) -> str:
    return (f"the launch exceeded its budget of {max_steps:,} steps in one thread (an endless loop?); "
            "raise it with --max-steps N (max_steps=N from Python)")


def call_depth_exceeded(depth: int) -> str:
    """A call past limits.call_depth."""
    lim = limits.current()
    return (f"stack overflow: call depth {depth:,} is more than ptxvm's limit of {lim.call_depth:,} nested "
            "calls (call_depth; endless recursion? raise it with PTXVM_LIMIT_CALL_DEPTH=... or "
            "ptxvm.limits.configure(call_depth=...))")


def stack_exceeded(used: int) -> str:
    """Call frames past limits.stack_per_thread."""
    lim = limits.current()
    return (f"stack overflow: the call frames need {used:,} bytes per thread, more than ptxvm's limit of "
            f"{limits.describe(lim.stack_per_thread)} (stack_per_thread; endless recursion? raise it with "
            "PTXVM_LIMIT_STACK_PER_THREAD=... or ptxvm.limits.configure(stack_per_thread=...))")


def assert_failed(text: str, function: str, file: str, line: int) -> str:
    """CUDA's `__assertfail(message, file, line, function, charSize)`."""
    return f"device-side assert failed: `{text}` in {function} at {file}:{line}"


def local_window_full(need: int, available: int) -> str:
    """Call frames that do not fit the local-memory window this launch gave each thread."""
    return (f"stack overflow: the `.local` call frames need {need:,} bytes of local memory per thread, more than "
            f"the {available:,} bytes this launch provides (stack_per_thread)")


MATRIX_OPS = frozenset({"mma", "wmma.mma", "wmma.load", "wmma.store", "ldmatrix", "stmatrix", "movmatrix",
                        "mma.sp", "mma.sp::ordered_metadata"})


def matrix_trap(ins: ir.Instruction) -> str:
    """The trap of a warp-level matrix instruction whose warp broke its rules (a compiled target
    checks them together; the interpreter names which)."""
    rule = ("a row address that is not 16-byte aligned (or, generic, not in .shared)"
            if ins.opcode in ("ldmatrix", "stmatrix")
            else "an address or stride that differs between lanes" if ins.opcode.startswith("wmma.") and
            ins.opcode != "wmma.mma"
            else "a sparsity metadata field the ISA leaves undefined" if ins.opcode.startswith("mma.sp") else None)
    return (f"`{ins.full_opcode}` is warp-collective (.sync.aligned): not all 32 lanes of the warp executed it "
            f"together" + (f", or a lane gave {rule}" if rule else "") + " (PTX ISA §9.7.14: undefined; a trap here)")


def cp_async_too_big(ins: ir.Instruction) -> str:
    """The trap of a `cp.async` whose src-size is above its cp-size."""
    return (f"`cp.async` src-size is larger than its cp-size {ins.operands[2]} "
            "(undefined in PTX ISA 9.7.9.25.3.1; a trap here)")


def tensor_copy_trap(ins: ir.Instruction) -> str:
    """The trap of a cp.async.bulk.tensor whose tensor map or shared address it cannot use (a
    compiled target checks them together; the interpreter names which)."""
    if ins.opcode == "cp.reduce.async.bulk":
        return (f"`{ins.full_opcode}`: its tensor map is not a ptxvm tensor map (ptxvm.TensorMap.tiled), has a rank "
                f"other than the instruction's .dim, an interleaved layout or a dtype .{ins.mod('redop')} does not "
                "reduce here, or the shared address is not 16-byte aligned (PTX ISA 9.7.9.25.5.3; a trap here)")
    return (f"`{ins.full_opcode}`: its tensor map is not a ptxvm tensor map (ptxvm.TensorMap.tiled), has a rank "
            "other than the instruction's .dim or an interleaved layout, or the shared address is not 16-byte "
            "aligned (PTX ISA 9.7.9.25.5.2; a trap here)")
