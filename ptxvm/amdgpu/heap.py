"""Device `malloc`/`free` on AMD GPUs: an allocator of ptxvm's own over a heap that lives in the
code object itself (ROCm's allocator state behind ``hidden_heap_v1`` has no documented layout).

The heap is one zero-initialised global, ``__ptxvm_device_heap`` (in ``.bss``: it costs the file
nothing; the loader allocates and zeroes it with the module, and it lives as long as the module,
across launches, as CUDA's heap does)::

    u32 top;  u32 pad;  u32 free_list[CLASSES];  ...  u8 arena[HEAP_BYTES]   (arena at byte 256)

Blocks come in power-of-two sizes from 16 bytes to the whole arena; a block is a 16-byte header
``{u32 class; u32 next}`` and its bytes (16-byte aligned).  ``malloc(n)`` pops a block of n's
class from that class's free list, else cuts a new one at ``top`` (an atomic add); with neither
it returns NULL, as CUDA's does when its heap is exhausted.  ``free`` pushes the block on its
class's list; ``free(NULL)`` and ``malloc(0)`` do nothing; freeing a pointer that is no block
of the heap, or a block twice, aborts the dispatch (``s_trap``).  The lists are lock-free stacks
(32-bit compare-and-swap): each head holds the top block's index (its offset / 16, plus one; 0
is the empty list) in its low ``INDEX_BITS`` bits and a counter bumped by every push and pop in
the rest, so a head that was popped and pushed back meanwhile does not match (ABA).  No lock:
a spin lock per lane deadlocks inside a wave once LLVM moves the critical section out of the
lock loop, which it may.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import nodes as ptx
from ..lift.function import FunctionLowering
from .llvm_ext import GLOBAL, I8, I32, I64, ScopedAtomicRMW, ScopedCmpXchg, ScopedLoadAtomic, ptr

HEAP_BYTES = 8 << 20          # CUDA's default cudaLimitMallocHeapSize
HEAP_SYMBOL = "__ptxvm_device_heap"
CLASSES = 32                  # a power of two (the class is masked with it); 16 B .. 8 MiB use 20
ARENA = 256                   # byte offset of the arena in the heap (after top and the lists)
INDEX_BITS = 20               # HEAP_BYTES / 16 + 1 indices
_LISTS = 8                    # byte offset of free_list[0]
_INDEX = (1 << INDEX_BITS) - 1
_TAG_STEP = 1 << INDEX_BITS
FREED = 1 << 31               # header bit: the block is on a free list


def _heap(llmod: ir.Module) -> ir.GlobalVariable:
    gv = llmod.globals.get(HEAP_SYMBOL)
    if gv is None:
        ty = ir.ArrayType(I8, ARENA + HEAP_BYTES)
        gv = ir.GlobalVariable(llmod, ty, HEAP_SYMBOL, addrspace=GLOBAL)
        gv.linkage = "internal"
        gv.initializer = ir.Constant(ty, None)
        gv.align = 16
    return gv


def _field(b: ir.IRBuilder, base: ir.Value, at: ir.Value | int, ty: ir.Type = I32) -> ir.Value:
    off = I64(at) if isinstance(at, int) else at
    return b.bitcast(b.gep(base, [off]), ptr(GLOBAL, ty))


def _operand(fl: FunctionLowering, ins, args) -> ir.Value:
    a = args[0] if args else None
    buf = fl.param_buffer(a.name) if isinstance(a, ptx.Symbol) else None
    if buf is None:
        raise fl.unsupported(ins, f"passes `{a}`, which is not a `.param` variable")
    return fl.b.load(fl.b.bitcast(buf, ptr(buf.type.addrspace, I64)))


def lower_call(h, fl: FunctionLowering, ins: ptx.Instruction, name: str, rets, args) -> None:
    b = fl.b
    value = _operand(fl, ins, args)
    heap = b.bitcast(_heap(fl.ml.llmod), ptr(GLOBAL, I8))
    # malloc(0), a request larger than the heap, and free(NULL) do nothing.
    skip = b.icmp_unsigned("==", value, I64(0))
    if name == "malloc":
        skip = b.or_(skip, b.icmp_unsigned(">", value, I64(HEAP_BYTES)))
    before = b.block
    work, done = fl.new_block(f"{name}_work"), fl.new_block(f"{name}_done")
    b.cbranch(skip, done, work)
    b.position_at_end(work)
    if name == "malloc":
        result = _malloc(fl, heap, value)
    else:
        _free(h, fl, heap, value)
    end = b.block
    b.branch(done)
    b.position_at_end(done)
    if name == "malloc" and rets:
        r = b.phi(I64)
        r.add_incoming(I64(0), before)
        r.add_incoming(result, end)
        buf = fl.param_buffer(rets[0].name)
        b.store(r, b.bitcast(buf, ptr(buf.type.addrspace, I64)))


def _atomic(fl: FunctionLowering, instr) -> ir.Value:
    instr.scope = "agent"
    fl.b._insert(instr)
    return instr


def _load_head(fl: FunctionLowering, p: ir.Value) -> ir.Value:
    return _atomic(fl, ScopedLoadAtomic(fl.b.block, p, "acquire", 4, ""))


def _retag(b: ir.IRBuilder, old_head: ir.Value, index: ir.Value) -> ir.Value:
    tag = b.and_(b.add(old_head, I32(_TAG_STEP)), I32(~_INDEX & 0xFFFFFFFF))
    return b.or_(tag, index)


def _malloc(fl: FunctionLowering, heap: ir.Value, n: ir.Value) -> ir.Value:
    """A block of ``n``'s class from its free list, else a new one at ``top``; 0 when the arena
    is full."""
    b = fl.b
    size = b.select(b.icmp_unsigned("<", n, I64(16)), I64(16), n)
    bits = b.sub(I64(64), b.call(_ctlz(fl), [b.sub(size, I64(1)), ir.Constant(ir.IntType(1), 0)]))
    cls = b.trunc(b.sub(bits, I64(4)), I32)                  # 16 B is class 0
    block_bytes = b.shl(I32(16), cls)
    arena = b.gep(heap, [I64(ARENA)])
    head_p = b.gep(_field(b, heap, _LISTS), [cls])
    pop, take, bump, made, full, out = (fl.new_block(f"malloc_{x}") for x in
                                        ("pop", "take", "bump", "made", "full", "out"))
    b.branch(pop)
    b.position_at_end(pop)
    head = _load_head(fl, head_p)
    index = b.and_(head, I32(_INDEX))
    b.cbranch(b.icmp_unsigned("==", index, I32(0)), bump, take)
    b.position_at_end(take)
    block = b.gep(arena, [b.mul(b.zext(b.sub(index, I32(1)), I64), I64(16))])
    nxt = b.and_(b.load(_field(b, block, 4)), I32(_INDEX))
    cas = _atomic(fl, ScopedCmpXchg(b.block, head_p, head, _retag(b, head, nxt), "acq_rel", "acquire", ""))
    taken = fl.new_block("malloc_taken")
    b.cbranch(b.extract_value(cas, 1), taken, pop)
    b.position_at_end(taken)
    b.store(cls, _field(b, block, 0))                       # in use again: FREED cleared
    got = b.ptrtoint(b.gep(block, [I64(16)]), I64)
    b.branch(out)
    b.position_at_end(bump)
    # A compare-and-swap, not an add: failed requests must not move ``top`` (it would wrap).
    step = b.add(block_bytes, I32(16))
    top_p = _field(b, heap, 0)
    top = _load_head(fl, top_p)
    fits = b.icmp_unsigned("<=", b.zext(top, I64), b.sub(I64(HEAP_BYTES), b.zext(step, I64)))
    reserve = fl.new_block("malloc_reserve")
    b.cbranch(fits, reserve, full)
    b.position_at_end(reserve)
    cut = _atomic(fl, ScopedCmpXchg(b.block, top_p, top, b.add(top, step), "monotonic", "monotonic", ""))
    b.cbranch(b.extract_value(cut, 1), made, bump)
    b.position_at_end(made)
    new = b.gep(arena, [b.zext(top, I64)])
    b.store(cls, _field(b, new, 0))
    fresh = b.ptrtoint(b.gep(new, [I64(16)]), I64)
    b.branch(out)
    b.position_at_end(full)
    b.branch(out)
    b.position_at_end(out)
    r = b.phi(I64)
    r.add_incoming(got, taken)
    r.add_incoming(fresh, made)
    r.add_incoming(I64(0), full)
    return r


def _free(h, fl: FunctionLowering, heap: ir.Value, p: ir.Value) -> None:
    """Push the block whose bytes start at ``p`` on its class's free list.  A pointer that is no
    block of the heap, or a block already free (its header's FREED bit), aborts the dispatch:
    undefined in C, a corrupted heap otherwise."""
    b = fl.b
    arena = b.ptrtoint(b.gep(heap, [I64(ARENA)]), I64)
    offset = b.sub(b.sub(p, I64(16)), arena)
    inside = b.and_(b.icmp_unsigned("<", offset, I64(HEAP_BYTES)),
                    b.icmp_unsigned("==", b.and_(offset, I64(15)), I64(0)))
    bad, check = fl.new_block("free_bad"), fl.new_block("free_check")
    b.cbranch(inside, check, bad)
    b.position_at_end(bad)
    h._trap(fl)
    b.position_at_end(check)
    block = b.inttoptr(b.sub(p, I64(16)), ptr(GLOBAL, I8))
    index = b.add(b.trunc(b.lshr(offset, I64(4)), I32), I32(1))
    old = _atomic(fl, ScopedAtomicRMW(b.block, "or", _field(b, block, 0), I32(FREED), "monotonic", ""))
    cls = b.and_(old, I32(CLASSES - 1))
    twice, ok = fl.new_block("free_twice"), fl.new_block("free_ok")
    b.cbranch(b.icmp_unsigned("!=", b.and_(old, I32(FREED)), I32(0)), twice, ok)
    b.position_at_end(twice)
    h._trap(fl)
    b.position_at_end(ok)
    head_p = b.gep(_field(b, heap, _LISTS), [cls])
    push, done = fl.new_block("free_push"), fl.new_block("free_done")
    b.branch(push)
    b.position_at_end(push)
    head = _load_head(fl, head_p)
    b.store(b.and_(head, I32(_INDEX)), _field(b, block, 4))
    cas = _atomic(fl, ScopedCmpXchg(b.block, head_p, head, _retag(b, head, index), "acq_rel", "acquire", ""))
    b.cbranch(b.extract_value(cas, 1), done, push)
    b.position_at_end(done)


def _ctlz(fl: FunctionLowering) -> ir.Function:
    from .llvm_ext import intrinsic
    return intrinsic(fl.ml.llmod, "llvm.ctlz.i64", I64, [I64, ir.IntType(1)])
