"""Checked memory access of the warp-as-SIMD lowering: one check per warp instruction.

Global addresses: the active lanes' lowest and highest address must lie in one allocation (one
page-table lookup) and all be aligned; otherwise a slow path checks lane by lane in lane order
and faults at the first bad lane, with the per-thread report the scalar path gives (the
executor builds it from the record the driver writes).  Shared addresses are checked per lane in
vector form.  The ``.param`` block is read uniformly (its offsets are constants).  A full warp's
contiguous access is one vector load or store; any other is 32 scalar accesses on addresses the
check has cleared (inactive lanes borrow an active lane's address for loads; stores skip them),
so nothing unchecked is touched."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from llvmlite import ir

from ...ir import nodes as ptx
from ...lift.function import I1, I8, I32, I64
from ...machine.addressmap import GLOBAL_BASE
from .. import layout as L
from . import vec as V

I32P, I64P = ir.PointerType(I32), ir.PointerType(I64)
GCHECK = "ptxvm_simd_global"


def add_global_check(llmod: ir.Module) -> ir.Function:
    """``i64 ptxvm_simd_global(ctx, address, size)``: the host address of a global access of
    ``size`` bytes, or 0 when it is outside every allocation (as ``CheckedMemory._global``)."""
    fn = ir.Function(llmod, ir.FunctionType(I64, [I64P, I64, I64]), name=GCHECK)
    fn.linkage = "internal"
    ctx, address, size = fn.args
    entry, bad, ok1, ok2, ok3 = (fn.append_basic_block(n) for n in ("entry", "bad", "ok1", "ok2", "ok3"))
    b = ir.IRBuilder(entry)
    ld = lambda slot: b.load(b.gep(ctx, [I64(slot)]))
    page = b.lshr(b.sub(address, I64(GLOBAL_BASE)), I64(L.PAGE_SHIFT))
    b.cbranch(b.icmp_unsigned("<", page, ld(L.X_NPAGES)), ok1, bad)
    b.position_at_end(ok1)
    idx = b.load(b.gep(b.inttoptr(ld(L.X_PAGES), I32P), [page]))
    b.cbranch(b.icmp_signed("<", idx, I32(0)), bad, ok2)
    b.position_at_end(ok2)
    entry_i = b.mul(b.zext(idx, I64), I64(L.ALLOC_ENTRY // 8))
    allocs = b.inttoptr(ld(L.X_ALLOCS), I64P)
    base = b.load(b.gep(allocs, [entry_i]))
    end = b.load(b.gep(allocs, [b.add(entry_i, I64(1))]))
    host = b.load(b.gep(allocs, [b.add(entry_i, I64(2))]))
    last = b.add(address, size)
    # ``last < address``: the range wraps past 2^64 (a warp spanning a valid lane and one near the top).
    out = b.or_(b.or_(b.icmp_unsigned("<", address, base), b.icmp_unsigned(">", last, end)),
                b.icmp_unsigned("<", last, address))
    b.cbranch(out, bad, ok3)
    b.position_at_end(ok3)
    b.ret(b.add(host, b.sub(address, base)))
    b.position_at_end(bad)
    b.ret(I64(0))
    return fn


def _safe(S, addrs: ir.Value, mask: ir.Value) -> ir.Value:
    """Inactive lanes take the first active lane's address."""
    b = S.b
    first = b.extract_element(addrs, V.first_lane(b, mask))
    return b.select(mask, addrs, V.splat(b, first))


@dataclass(frozen=True)
class Checked:
    """A warp access after its check: host pointers, the lanes that may access (``ok``), and the
    lanes that fault (``bad``; the lowest is reported once the ``ok`` lanes have completed the
    instruction, the interpreter's fault-write rule)."""
    ptrs: ir.Value
    ok: ir.Value
    bad: ir.Value
    addrs: ir.Value
    mis: ir.Value
    site: int
    size: int
    code: int

    def fault_rest(self, S) -> None:
        b = S.b
        with b.if_then(V.any_(b, self.bad), likely=False):
            lane = V.first_lane(b, self.bad)
            kind = b.select(b.extract_element(self.mis, lane), I32(L.FaultKind.MISALIGNED),
                            I32(L.FaultKind.BOUNDS))
            S.fault(lane, self.site, b.extract_element(self.addrs, lane), kind, I32(self.size), self.code)


def checked_pointers(S, ins: ptx.Instruction, space: str, addrs: ir.Value, size: int, mask: ir.Value,
                     write: bool) -> Checked:
    """Host addresses (``<32 x i64>``) of a warp's access and the lanes it may touch."""
    b = S.b
    site = S.site(ins)
    a = _safe(S, addrs, mask)
    mis = b.icmp_unsigned("!=", b.and_(a, V.const(I64, size - 1)), V.const(I64, 0)) if size > 1 \
        else V.const(I1, 0)
    code = L.space_code(space)
    if space == "shared":
        limit = S.layout.shared_bytes
        oob = b.icmp_unsigned(">", a, V.const(I64, limit - size)) if limit >= size else V.const(I1, 1)
        bad = b.and_(b.or_(mis, oob), mask)
        p = b.add(a, V.splat(b, S.shared_base))
    else:
        p, bad = _global(S, a, mis, mask, size)
    ok = b.and_(mask, b.not_(bad))
    # Lanes that may not access borrow an accessing lane's pointer (only used when one exists).
    first = b.extract_element(p, b.select(V.any_(b, ok), V.first_lane(b, ok), I32(0)))
    return Checked(b.select(ok, p, V.splat(b, first)), ok, bad, a, mis, site, size, code)


def _global(S, a, mis, mask, size) -> tuple[ir.Value, ir.Value]:
    b = S.b
    lo, hi = V.reduce(b, "umin", a), V.reduce(b, "umax", a)
    # One allocation holds [lo, hi + size): one lookup for the whole warp.
    fast_host = b.call(S.gcheck, [S.ctx, lo, b.add(b.sub(hi, lo), I64(size))])
    ok = b.and_(b.icmp_unsigned("!=", fast_host, I64(0)), b.not_(V.any_(b, b.and_(mis, mask))))
    slot = S.ptr_slot
    fast_blk, slow_blk, done = S.new_block("g_fast"), S.new_block("g_slow"), S.new_block("g_done")
    b.cbranch(ok, fast_blk, slow_blk).set_weights([1000, 1])
    b.position_at_end(fast_blk)
    b.store(b.add(a, V.splat(b, b.sub(fast_host, lo))), slot)
    b.branch(done)
    b.position_at_end(slow_blk)
    _slow_lanes(S, a, mask, size, slot)
    b.branch(done)
    b.position_at_end(done)
    p = b.load(slot)
    bad = b.and_(mask, b.or_(mis, b.icmp_unsigned("==", p, V.const(I64, 0))))
    return p, bad


@contextmanager
def _lanes(S):
    """``for lane in range(32)`` as an IR loop (not unrolled: the slow paths stay small)."""
    b = S.b
    pre = b.block
    head, body, done = S.new_block("lane_head"), S.new_block("lane_body"), S.new_block("lane_done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I32)
    i.add_incoming(I32(0), pre)
    b.cbranch(b.icmp_unsigned("<", i, I32(V.WARP)), body, done)
    b.position_at_end(body)
    yield i
    i.add_incoming(b.add(i, I32(1)), b.block)
    b.branch(head)
    b.position_at_end(done)


def _slow_lanes(S, a, mask, size, slot) -> None:
    """Lane by lane: each active lane's host address, 0 where it is unmapped."""
    b = S.b
    b.store(V.const(I64, 0), slot)
    with _lanes(S) as i:
        with b.if_then(b.extract_element(mask, i)):
            host = b.call(S.gcheck, [S.ctx, b.extract_element(a, i), I64(size)])
            b.store(b.insert_element(b.load(slot), host, i), slot)


def _contiguous(S, ptrs: ir.Value, size: int, mask: ir.Value) -> tuple[ir.Value, ir.Value]:
    """Whether the active lanes access ``p0 + lane * size`` (one vector access), and ``p0``."""
    b = S.b
    first = V.first_lane(b, mask)
    p0 = b.sub(b.extract_element(ptrs, first), b.mul(b.zext(first, I64), I64(size)))
    want = b.add(V.splat(b, p0), ir.Constant(V.I64V, [I64(i * size) for i in range(V.WARP)]))
    same = b.or_(b.icmp_unsigned("==", ptrs, want), b.not_(mask))
    return V.reduce(b, "and", same), p0


def _masked(b: ir.IRBuilder, what: str, vty: ir.VectorType) -> ir.Function:
    """llvm.masked.load / llvm.masked.store on ``vty``: masked-off lanes are not accessed."""
    name = f"llvm.masked.{what}.v{V.WARP}i{vty.element.width}.p0"
    fn = b.module.globals.get(name)
    if fn is None:
        ptr, mty = ir.PointerType(vty), V.vt(I1)
        sig = (ir.FunctionType(vty, [ptr, I32, mty, vty]) if what == "load"
               else ir.FunctionType(ir.VoidType(), [vty, ptr, I32, mty]))
        fn = ir.Function(b.module, sig, name=name)
    return fn


def gather(S, ptrs: ir.Value, ity: ir.IntType, mask: ir.Value) -> ir.Value:
    b = S.b
    vty = V.vt(ity)
    cont, p0 = _contiguous(S, ptrs, ity.width // 8, mask)
    slot = S.value_slot(ity)
    with b.if_else(cont, likely=True) as (then, other):
        with then:
            p = b.inttoptr(p0, ir.PointerType(vty))
            b.store(b.call(_masked(b, "load", vty), [p, I32(1), mask, ir.Constant(vty, None)]), slot)
        with other:
            v = ir.Constant(vty, ir.Undefined)
            for i in range(V.WARP):
                p = b.inttoptr(b.extract_element(ptrs, I32(i)), ir.PointerType(ity))
                v = b.insert_element(v, b.load(p, align=1), I32(i))
            b.store(v, slot)
    return b.load(slot)


def scatter(S, ptrs: ir.Value, value: ir.Value, mask: ir.Value) -> None:
    b = S.b
    ity = value.type.element
    cont, p0 = _contiguous(S, ptrs, ity.width // 8, mask)
    with b.if_else(cont, likely=True) as (then, other):
        with then:
            b.call(_masked(b, "store", value.type), [value, b.inttoptr(p0, ir.PointerType(value.type)), I32(1), mask])
        with other:
            with _lanes(S) as i:      # in lane order: a later lane's store wins, as the interpreter's
                with b.if_then(b.extract_element(mask, i)):
                    p = b.inttoptr(b.extract_element(ptrs, i), ir.PointerType(ity))
                    b.store(b.extract_element(value, i), p, align=1)

__all__ = ["Checked", "I8", "add_global_check", "checked_pointers", "gather", "scatter"]
