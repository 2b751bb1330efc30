"""Byte layouts shared by the host lowering (``host.py``) and the executor (``executor.py``).

Thread record (one per thread of a batch, ``THREAD_HEADER + 8 * save_slots`` bytes):
the resume point and state the generated code leaves when it stops, the thread's
identity, its fault report, a mailbox for synchronisation, and the save area that
holds every register while the thread waits at a synchronisation point.
"""

from __future__ import annotations

import numpy as np

# thread record offsets
T_RESUME, T_STATE, T_SITE, T_AUX, T_AUX2, T_LINEAR = 0, 4, 8, 12, 16, 20
T_TID = 24                       # 3 x i32
T_DEPTH = 36                     # i32: nested device-function calls
T_STEPS = 40                     # i64
T_CTA = 48                       # ptr to the CTA record
T_LOCAL = 56                     # ptr to this thread's local memory
T_FAULT_ADDR, T_FAULT_KIND, T_FAULT_SIZE = 64, 72, 76
T_LIMIT = 80                     # i64: steps at which the thread must stop (quantum or budget)
T_IN = 88                        # i64: a result the scheduler hands back (mask, bar.red value)
T_OUT = 96                       # 16 x i64: operands a thread publishes at a stop (an mma's A and B)
OUT_SLOTS = 16
T_SP = 224                       # i64: top of this thread's local-memory call stack (an offset)
T_STACK = 232                    # i64: stack bytes the thread's active `.func` frames use (the budget's count)
T_FAULT_SPACE = 240              # i32: the state space (Space) a faulting access was checked in
THREAD_HEADER = 256
# Call depth and stack size come from ptxvm.limits (call_depth, stack_per_thread), per launch.

# CTA record
C_CTAID = 0                      # 3 x i32
C_SHARED = 16                    # ptr
C_XCHG = 24                      # ptr: per warp, 32 lanes x OUT_SLOTS x i64 (a snapshot at release)
CTA_RECORD = 32

# launch context: i64 slots
X_PARAMS, X_PAGES, X_NPAGES, X_ALLOCS, X_SYMBOLS = 0, 1, 2, 3, 4
X_SHARED_SIZE, X_LOCAL_SIZE, X_NTID, X_NCTAID, X_BUDGET, X_DYN_SHARED, X_PARAM_SIZE = 5, 6, 7, 10, 13, 14, 15
X_CTAS, X_LOCAL_BASE, X_LOCAL_STRIDE, X_KFRAME = 16, 17, 18, 19   # per batch: where its CTA records and local memory are
X_HOST_CALL = 20                 # per batch: i64 (*)(thread record, HostCall, operand), for malloc/free in a .func
X_STEPS = 21                     # per batch: instructions run, summed by the driver calls (atomically)
X_CALL_DEPTH = 22                # limits.call_depth: nested `.func` calls a thread may make
X_STACK_LIMIT = 23               # limits.stack_per_thread: bytes of `.func` frames a thread may use
X_STOP = 24                      # set (by the executor, from another host thread) to stop: Ctrl-C
X_ENVREG = 25                    # ptr to u32[32]: the launch's %envreg values (machine.cooperative)
X_QUANTUM = 26                   # instructions a spinning thread runs before it yields (QUANTUM or less)
CTX_SLOTS = 27
PENDING = -1                     # ptxvm_run's result when threads of its CTAs wait (none exited in error)

QUANTUM = 1 << 20                # instructions a thread runs before it yields to the others
PAGE_SHIFT = 8                   # allocations start on 256-byte boundaries (interp.memory.ALIGN)
ALLOC_ENTRY = 32                 # base, end, host pointer, is-const (i64 each)


class State:
    """Values of the thread record's state word."""

    RUNNABLE = 0
    EXITED = 1
    BARRIER = 2
    WARP = 3
    FAULT = 4
    TRAP = 5
    WATCHDOG = 6
    PRINTF = 7
    ASSERT = 8
    ARRIVE = 9
    BARRIER_RED = 11             # waiting at bar.red (the executor computes the reduction)
    YIELD = 10                   # a spinning thread gives others a turn (quantum, nanosleep)
    MALLOC = 12                  # device malloc: size in T_OUT[0]; the executor answers there
    FREE = 13                    # device free: pointer in T_OUT[0]
    INTERRUPTED = 14             # the executor asked the launch to stop (KeyboardInterrupt)
    DEVRT = 15                   # a device-runtime call (machine.cdp): DevRt op in T_AUX, operands in T_OUT
    TEXTURE = 16                 # a texture/surface instruction (jit.texture): operands, then results, in T_OUT


class DevRt:
    """T_AUX of a DEVRT stop: which device-runtime call (the executor answers in T_OUT[0])."""
    PARAM_BUFFER = 1             # T_OUT: func, grid x y z, block x y z, shared
    LAUNCH = 2                   # T_OUT: buffer, stream
    MALLOC = 3                   # T_OUT: size; answer: pointer, then the cudaError_t in T_OUT[1]
    FREE = 4                     # T_OUT: pointer
    # API + k: the k-th call of machine.cdp.ARG_BYTES (streams, events, last error); T_OUT: its
    # arguments; answer: the cudaError_t, the created handle, the first argument (a create's *where)
    API = 8


class FaultKind:
    BOUNDS = 1
    MISALIGNED = 2
    READONLY = 3
    STACK = 4
    BAD_CALL = 5
    HEAP = 6                     # a bad free inside a .func: the executor holds the message
    TEXTURE = 7                  # a refused texture/surface access (jit.texture): the executor holds the message


class Space:
    """Values of T_FAULT_SPACE: where the faulting access was checked."""

    GENERIC = 0                  # a generic address: the executor tells the window from the address
    GLOBAL = 1
    SHARED = 2
    LOCAL = 3
    PARAM = 4
    CONST = 5
    NAMES = {GLOBAL: "global", SHARED: "shared", LOCAL: "local", PARAM: "param", CONST: "const"}


def space_code(space: str) -> int:
    return {"global": Space.GLOBAL, "shared": Space.SHARED, "local": Space.LOCAL, "param": Space.PARAM,
            "const": Space.CONST}.get(space, Space.GENERIC)


class HostCall:
    """Operations of the X_HOST_CALL callback (a `.func` cannot stop for the executor)."""
    MALLOC = 1
    FREE = 2                     # returns 0, or 1 when the pointer is no live block (a fault)
    TEXTURE = 3                  # operand: a jit.texture call buffer; returns 0, or 1 (a fault)


def thread_dtype(record_bytes: int) -> np.dtype:
    """A numpy view of the thread records' header fields."""
    return np.dtype({
        "names": ["resume", "state", "site", "aux", "aux2", "linear", "tid", "steps", "cta", "local",
                  "fault_addr", "fault_kind", "fault_size", "limit", "inbox", "out", "sp", "stack", "fault_space"],
        "formats": ["<i4", "<i4", "<i4", "<i4", "<i4", "<i4", ("<i4", 3), "<i8", "<u8", "<u8",
                    "<u8", "<i4", "<i4", "<i8", "<u8", ("<u8", OUT_SLOTS), "<i8", "<i8", "<i4"],
        "offsets": [T_RESUME, T_STATE, T_SITE, T_AUX, T_AUX2, T_LINEAR, T_TID, T_STEPS, T_CTA, T_LOCAL,
                    T_FAULT_ADDR, T_FAULT_KIND, T_FAULT_SIZE, T_LIMIT, T_IN, T_OUT, T_SP, T_STACK, T_FAULT_SPACE],
        "itemsize": record_bytes,
    })
