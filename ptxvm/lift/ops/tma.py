"""Tensor copies through a tensor map (PTX ISA 9.0 §9.7.9.25.5.2 cp.async.bulk.tensor, tile mode),
lowered for every LLVM target as a software copy over the box (AMD GPUs have no TMA unit).

The interpreter (interp/ops/tma.py) is the definition; this is a second implementation from the
same facts: the map is ptxvm's 128-byte encoding (``machine/tensormap.py``'s field offsets), read
at run time through its generic address and validated (magic, dtype code, rank equal to `.dim`,
no interleave, element strides 1..8, else a trap at the instruction); the box is walked in shared
order, dimension 0 fastest, ceil(box/stride) elements per dimension, each element's global
position ``c_k + i_k * stride_k`` inside the tensor or filled (loads) / skipped (stores); the
shared address of element n is ``s + n * esize`` with the swizzle xor of its address bits
[4, 7) by bits [7, 10). Each element is one checked access of its size. A load then
completes ``box bytes`` on the mbarrier. ``cp.reduce.async.bulk.tensor`` (§9.7.9.25.5.3) walks the
same box and writes global = global redOp shared per in-bounds element (host JIT only).
"""

from __future__ import annotations

from llvmlite import ir

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ...machine import tensormap as tm
from ..function import I1, I32, I64, FunctionLowering
from . import lowers
from .mbarrier import _fields, _settle, _tx_bad, object_pointer, update

I8 = ir.IntType(8)
_MAGIC = int.from_bytes(tm.MAGIC, "little")
_LOG2 = {1: 0, 2: 1, 4: 2, 8: 3}
# log2(element size) of dtype code c in bits [2c, 2c+2)
_SIZE_TABLE = sum(_LOG2[size] << (2 * code) for code, size in tm.DTYPES.values())
_MAX_CODE = max(code for code, _ in tm.DTYPES.values())
# the swizzle's xor mask of address bits [4, 7) per swizzle code, one byte each
_SWIZZLE_BITS = 0x10 << 8 | 0x30 << 16 | 0x70 << 24


def _form(fl: FunctionLowering, ins: ptx.Instruction) -> int:
    mode = ins.mod("load_mode") or "tile"
    if mode != "tile":
        raise fl.unsupported(ins, f"uses the `.{mode}` load mode; ptxvm's tensor maps model tile mode only")
    if ins.has("multicast::cluster") or ins.mod("ctagroup"):
        raise fl.unsupported(ins, "multicasts to, or pairs, CTAs of a cluster, which needs cluster launches")
    return int(ins.mod("dim")[0])


def _loop(fl: FunctionLowering, n: ir.Value, body, name: str) -> None:
    """for (i = 0; i < n; i++) body(i), with i an i64."""
    b = fl.b
    pre = b.block
    head, work, end = fl.new_block(name), fl.new_block(name + "_body"), fl.new_block(name + "_end")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(I64(0), pre)
    b.cbranch(b.icmp_unsigned("<", i, n), work, end)
    b.position_at_end(work)
    body(i)
    i.add_incoming(b.add(i, I64(1)), b.block)
    b.branch(head)
    b.position_at_end(end)


def _if(fl: FunctionLowering, cond: ir.Value, then, name: str) -> None:
    b = fl.b
    yes, end = fl.new_block(name), fl.new_block(name + "_end")
    b.cbranch(cond, yes, end)
    b.position_at_end(yes)
    then()
    b.branch(end)
    b.position_at_end(end)


class _Map:
    """The fields of the map at i8* ``p`` as IR values (validity in ``bad``)."""

    def __init__(self, fl: FunctionLowering, p: ir.Value, rank: int):
        b = self.b = fl.b
        self.p = p
        code = self.byte(8)
        bad = b.icmp_unsigned("!=", self.load(0, I64), I64(_MAGIC))
        bad = b.or_(bad, b.icmp_unsigned(">", code, I64(_MAX_CODE)))
        bad = b.or_(bad, b.icmp_unsigned("!=", self.byte(9), I64(rank)))
        bad = b.or_(bad, b.icmp_unsigned("!=", self.byte(10), I64(0)))         # interleave: not executable
        bad = b.or_(bad, b.icmp_unsigned(">", self.byte(11), I64(3)))
        bad = b.or_(bad, b.icmp_unsigned(">", self.byte(13), I64(1)))
        # a NaN fill needs a floating-point dtype (codes from float16 up)
        bad = b.or_(bad, b.and_(b.icmp_unsigned("!=", self.byte(13), I64(0)),
                                b.icmp_unsigned("<", code, I64(tm.DTYPES["float16"][0]))))
        self.estr = [self.byte(88 + k) for k in range(rank)]
        for e in self.estr:
            bad = b.or_(bad, b.or_(b.icmp_unsigned("==", e, I64(0)), b.icmp_unsigned(">", e, I64(8))))
        self.bad = bad
        self.esize = b.shl(I64(1), b.and_(b.lshr(I64(_SIZE_TABLE), b.mul(code, I64(2))), I64(3)))
        self.swizzle = b.and_(b.lshr(I64(_SWIZZLE_BITS), b.mul(self.byte(11), I64(8))), I64(0xFF))
        self.oob_nan = b.icmp_unsigned("!=", self.byte(13), I64(0))
        self.gaddr = self.load(16, I64)
        self.dims = [b.zext(self.load(24 + 4 * k, I32), I64) for k in range(rank)]
        self.pitches = [self.esize] + [self.load(48 + 8 * (k - 1), I64) for k in range(1, rank)]
        self.rank = rank
        self.counts: list[ir.Value] = []

    def count(self) -> None:
        """Elements per dimension, ceil(box / stride): only once the strides are known valid
        (a division by a zero stride would kill the host process)."""
        b = self.b
        boxes = [b.add(self.byte(80 + k), I64(1)) for k in range(self.rank)]
        self.counts = [b.udiv(b.add(bx, b.sub(e, I64(1))), e) for bx, e in zip(boxes, self.estr)]

    def load(self, off: int, t: ir.IntType) -> ir.Value:
        return self.b.load(self.b.bitcast(self.b.gep(self.p, [I64(off)]), t.as_pointer()))

    def byte(self, off: int) -> ir.Value:
        return self.b.zext(self.load(off, I8), I64)


@lowers("cp.async.bulk.tensor")
def _tensor_copy(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    rank = _form(fl, ins)
    to_shared = ins.form == "to-shared"
    op = ins.operands[1 if to_shared else 0]
    if not isinstance(op, ptx.Address) or len(op.extra) != 1 or not isinstance(op.extra[0], ptx.Vector) \
            or len(op.extra[0].elements) != rank:
        raise fl.unsupported(ins, f"needs `[tensorMap, {{{rank} coordinates}}]` as its tensor operand")
    b = fl.b
    coords = [b.sext(fl.read(c, ScalarType.S32), I64) for c in op.extra[0].elements]
    s = fl.address(ins.operands[0 if to_shared else 1], "shared")
    at = fl.address(ptx.Address(op.base, op.offset), "generic")
    m = _Map(fl, fl.hooks.access(fl, "generic", at, tm.SIZE, ins, write=False, align=8), rank)
    bad = b.or_(m.bad, b.icmp_unsigned("!=", b.and_(s, I64(15)), I64(0)))
    trap, ok = fl.new_block("tmap_bad"), fl.new_block("tmap_ok")
    b.cbranch(bad, trap, ok)
    b.position_at_end(trap)
    fl.hooks.trap(fl, ins, "trap")           # not a ptxvm tensor map, or one this form cannot use
    b.position_at_end(ok)
    m.count()
    total = I64(1)
    for c in m.counts:
        total = b.mul(total, c)
    _loop(fl, total, lambda n: _element(fl, ins, m, coords, s, n, to_shared), "tma_elem")
    if to_shared:
        nbytes = b.mul(total, m.esize)
        p = object_pointer(fl, ins, ins.operands[2], "shared")

        def step(old):
            pending, expected, tx, valid, phase = _fields(b, old)
            tx2 = b.sub(tx, nbytes)
            return _settle(b, pending, expected, tx2, phase), I64(0), b.or_(b.not_(valid), _tx_bad(b, tx2))
        update(fl, ins, p, step)


def _element(fl, ins, m: _Map, coords, s, n, to_shared: bool) -> None:
    """Copy element ``n`` of the box (shared order) in the copy's direction."""
    b = fl.b
    rem, inside, goff = n, ir.Constant(I1, 1), I64(0)
    for c, count, e, dim, pitch in zip(coords, m.counts, m.estr, m.dims, m.pitches):
        pos = b.add(c, b.mul(b.urem(rem, count), e))
        rem = b.udiv(rem, count)
        inside = b.and_(inside, b.and_(b.icmp_signed(">=", pos, I64(0)), b.icmp_signed("<", pos, dim)))
        goff = b.add(goff, b.mul(pos, pitch))
    lin = b.add(s, b.mul(n, m.esize))
    sh = b.xor(lin, b.and_(b.lshr(lin, I64(3)), m.swizzle))
    g = b.add(m.gaddr, goff)
    end = fl.new_block("tma_elem_done")
    sw = b.switch(m.esize, end)
    for size in (1, 2, 4, 8):           # one typed access per element (sizes from the dtype code)
        blk = fl.new_block(f"tma_e{size}")
        sw.add_case(I64(size), blk)
        b.position_at_end(blk)
        _copy(fl, ins, m, inside, g, sh, size, to_shared)
        b.branch(end)
    b.position_at_end(end)


def _copy(fl, ins, m: _Map, inside, g, sh, size: int, to_shared: bool) -> None:
    b = fl.b
    t = ir.IntType(8 * size)
    ptr = t.as_pointer()
    if not to_shared:
        def put():
            v = b.load(b.bitcast(fl.hooks.access(fl, "shared", sh, size, ins, write=False), ptr), align=size)
            b.store(v, b.bitcast(fl.hooks.access(fl, "global", g, size, ins, write=True), ptr), align=size)
        _if(fl, inside, put, "tma_put")
        return
    # out of bounds: zeros, or the NaN 0x7f.. (tensormap.oob_fill_bytes) when the map asks for it
    fill = b.select(m.oob_nan, t((1 << (8 * size - 1)) - 1), t(0))
    pre = b.block
    yes, join = fl.new_block("tma_in"), fl.new_block("tma_in_end")
    b.cbranch(inside, yes, join)
    b.position_at_end(yes)
    v = b.load(b.bitcast(fl.hooks.access(fl, "global", g, size, ins, write=False), ptr), align=size)
    tail = b.block
    b.branch(join)
    b.position_at_end(join)
    val = b.phi(t)
    val.add_incoming(fill, pre)
    val.add_incoming(v, tail)
    b.store(val, b.bitcast(fl.hooks.access(fl, "shared", sh, size, ins, write=True), ptr), align=size)



# -- cp.reduce.async.bulk.tensor (§9.7.9.25.5.3), tile mode, shared::cta -> global ------------

def _codes(names) -> int:
    return sum(1 << tm.DTYPES[n][0] for n in names)


@lowers("cp.reduce.async.bulk")
def _tensor_reduce(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    if ins.form != "tensor":
        raise fl.unsupported(ins, "(the non-tensor bulk reduction) is not executable yet")
    if fl.hooks.name != "host":         # built and tested on the host JIT only (no emulator run yet)
        raise fl.unsupported(ins, "is lowered for the host JIT only; no AMD lowering yet")
    rank = _form(fl, ins)
    red = ins.mod("redop")
    op = ins.operands[0]
    if not isinstance(op, ptx.Address) or len(op.extra) != 1 or not isinstance(op.extra[0], ptx.Vector) \
            or len(op.extra[0].elements) != rank:
        raise fl.unsupported(ins, f"needs `[tensorMap, {{{rank} coordinates}}]` as its tensor operand")
    b = fl.b
    coords = [b.sext(fl.read(c, ScalarType.S32), I64) for c in op.extra[0].elements]
    s = fl.address(ins.operands[1], "shared")
    at = fl.address(ptx.Address(op.base, op.offset), "generic")
    m = _Map(fl, fl.hooks.access(fl, "generic", at, tm.SIZE, ins, write=False, align=8), rank)
    code = m.byte(8)
    allowed = b.and_(b.lshr(I64(_codes(tm.REDUCE_DTYPES[red])), code), I64(1))
    signed = b.icmp_unsigned("!=", b.and_(b.lshr(I64(_codes(tm.SIGNED_DTYPES)), code), I64(1)), I64(0))
    bad = b.or_(m.bad, b.icmp_unsigned("!=", b.and_(s, I64(15)), I64(0)))
    bad = b.or_(bad, b.icmp_unsigned("==", allowed, I64(0)))    # a dtype this redOp does not reduce
    trap, ok = fl.new_block("tmap_bad"), fl.new_block("tmap_ok")
    b.cbranch(bad, trap, ok)
    b.position_at_end(trap)
    fl.hooks.trap(fl, ins, "trap")
    b.position_at_end(ok)
    m.count()
    total = I64(1)
    for c in m.counts:
        total = b.mul(total, c)
    _loop(fl, total, lambda n: _reduce_element(fl, ins, m, coords, s, n, red, signed), "tmared_elem")


def _reduce_element(fl, ins, m: _Map, coords, s, n, red: str, signed) -> None:
    """global[element n] = global redOp shared[element n], for an in-bounds element of the box."""
    b = fl.b
    rem, inside, goff = n, ir.Constant(I1, 1), I64(0)
    for c, count, e, dim, pitch in zip(coords, m.counts, m.estr, m.dims, m.pitches):
        pos = b.add(c, b.mul(b.urem(rem, count), e))
        rem = b.udiv(rem, count)
        inside = b.and_(inside, b.and_(b.icmp_signed(">=", pos, I64(0)), b.icmp_signed("<", pos, dim)))
        goff = b.add(goff, b.mul(pos, pitch))
    lin = b.add(s, b.mul(n, m.esize))
    sh = b.xor(lin, b.and_(b.lshr(lin, I64(3)), m.swizzle))
    g = b.add(m.gaddr, goff)
    end = fl.new_block("tmared_done")
    sw = b.switch(m.esize, end)
    for size in (4, 8):                 # the reducible dtypes are 32- and 64-bit integers
        blk = fl.new_block(f"tmared_e{size}")
        sw.add_case(I64(size), blk)
        b.position_at_end(blk)

        def put(size=size):
            t = ir.IntType(8 * size)
            ptr = t.as_pointer()
            v = b.load(b.bitcast(fl.hooks.access(fl, "shared", sh, size, ins, write=False), ptr), align=size)
            gp = b.bitcast(fl.hooks.access(fl, "global", g, size, ins, write=True), ptr)
            old = b.load(gp, align=size)
            b.store(_combine(b, red, old, v, signed, t), gp, align=size)
        _if(fl, inside, put, f"tmared_put{size}")
        b.branch(end)
    b.position_at_end(end)


def _combine(b, red: str, old, v, signed, t):
    if red == "and":
        return b.and_(old, v)
    if red == "or":
        return b.or_(old, v)
    if red == "xor":
        return b.xor(old, v)
    if red == "add":
        return b.add(old, v)
    if red in ("min", "max"):
        cmp = "<" if red == "min" else ">"
        pick_s = b.select(b.icmp_signed(cmp, old, v), old, v)
        pick_u = b.select(b.icmp_unsigned(cmp, old, v), old, v)
        return b.select(signed, pick_s, pick_u)
    if red == "inc":                    # (old >= b) ? 0 : old + 1
        return b.select(b.icmp_unsigned(">=", old, v), t(0), b.add(old, t(1)))
    # dec: (old == 0 || old > b) ? b : old - 1
    return b.select(b.or_(b.icmp_unsigned("==", old, t(0)), b.icmp_unsigned(">", old, v)), v, b.sub(old, t(1)))
