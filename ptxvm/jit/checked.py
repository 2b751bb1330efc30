"""Checked memory access of the host JIT (a mixin of ``HostHooks``).

Every access is checked against the launch's allocation map: global and const memory through
a page table, shared and local memory against their window sizes, kernel parameters against
the block's size, generic addresses by the window they fall in.  No PTX program can touch host
memory outside the buffers it was given; a bad access records a fault report in the thread
record and stops the thread (``_fault``).
"""

from __future__ import annotations

from llvmlite import ir

from ..ir import nodes as ptx
from ..lift.function import I1, I8P, I32, I64, offset_address, resize
from ..machine.addressmap import GLOBAL_BASE, LOCAL_BASE, LOCAL_LIMIT, PARAM_BASE, PARAM_LIMIT, SHARED_BASE, SHARED_LIMIT
from . import layout as L
from .state import GroupCheck, host_state

I32P, I64P = ir.PointerType(I32), ir.PointerType(I64)


class CheckedMemory:
    """The memory hooks; ``ctx``, ``thr``, ``cta_field``, ``set_state`` and ``frame_address``
    come from ``HostHooks``."""

    def param_pointer(self, fl, offset, element: int = 0, count: int = 1, ins: ptx.Instruction | None = None):
        """Pointer to the kernel parameter block at ``offset``; with ``ins``, ``count`` accesses of
        ``element`` bytes there are checked against the block's size first, each in turn (the
        interpreter's order: the first element out of range is the one reported)."""
        b = fl.b
        if ins is not None:
            site = fl.ml.site(fl, ins)
            size = self.ctx(fl, L.X_PARAM_SIZE)
            for i in range(count):
                at = offset + i * element
                bad, ok = fl.new_block("param_oob"), fl.new_block("param_ok")
                if at < 0:
                    b.branch(bad)
                else:
                    b.cbranch(b.icmp_unsigned(">", I64(at + element), size), bad, ok)
                self._fault(fl, bad, site, I64(at & 0xFFFF_FFFF_FFFF_FFFF), L.FaultKind.BOUNDS, element,
                            L.Space.PARAM)
                b.position_at_end(ok)
            if offset < 0:
                return ir.Constant(I8P, None)        # not reached: the access faults
        base = b.inttoptr(self.ctx(fl, L.X_PARAMS), I8P)
        return b.gep(base, [I64(offset)]) if offset else base

    def symbol_address(self, fl, name, space, ins):
        lay = fl.ml.layout
        b = fl.b
        if name in lay.params:
            if fl.is_kernel:
                # In the .param space (what `mov` gives, §5.1.6.1); generic `[param]` is the window's.
                return I64(PARAM_BASE + lay.params[name] if space == "generic" else lay.params[name])
        if fl.param_buffer(name) is not None:
            raise fl.unsupported(ins, f"takes the address of the `.param` variable `{name}`")
        # A generic `ld [var]` takes the variable's generic address: its window's base added.
        if name in lay.shared:
            return I64(lay.shared[name] + (SHARED_BASE if space == "generic" else 0))
        addr = self.frame_address(fl, name)
        if addr is not None:
            return b.add(addr, I64(LOCAL_BASE)) if space == "generic" else addr
        if name in lay.local:
            raise fl.unsupported(ins, f"refers to the `.local` variable `{name}` outside its function")
        index = fl.ml.symbol_index(name)
        if index is None:
            raise fl.unsupported(ins, f"refers to `{name}`, which has no storage in this launch")
        table = b.inttoptr(self.ctx(fl, L.X_SYMBOLS), I64P)
        return b.load(b.gep(table, [I64(index)]))

    def cvta(self, fl, address, space, to_generic):
        b = fl.b
        base = {"shared": SHARED_BASE, "local": LOCAL_BASE, "param": PARAM_BASE}.get(space)
        if base is None:
            return address               # global and const addresses are generic addresses
        return b.add(address, I64(base)) if to_generic else b.sub(address, I64(base))

    def isspacep(self, fl, address, space):
        b = fl.b
        win = {"shared": (SHARED_BASE, SHARED_LIMIT), "local": (LOCAL_BASE, LOCAL_LIMIT),
               "param": (PARAM_BASE, PARAM_LIMIT)}.get(space)
        if win is not None:
            return b.icmp_unsigned("<", b.sub(address, I64(win[0])), I64(win[1] - win[0]))
        return b.icmp_unsigned(">=", address, I64(GLOBAL_BASE))

    def access(self, fl, space, address, size, ins, *, write, align=None):
        b = fl.b
        site = fl.ml.site(fl, ins)
        align = align or size
        code = L.space_code(space)
        fault = fl.new_block("fault")
        ok_blk = fl.new_block("mem_ok")
        if space in ("const", "param") and write:
            self._fault(fl, fault, site, address, L.FaultKind.READONLY, size, code)
            b.branch(fault)
            b.position_at_end(ok_blk)
            return ir.Constant(I8P, None)
        if align > 1:
            mis = b.icmp_unsigned("!=", b.and_(address, I64(align - 1)), I64(0))
            nxt = fl.new_block("aligned")
            mis_blk = fl.new_block("misaligned")
            b.cbranch(mis, mis_blk, nxt)
            b.position_at_end(mis_blk)
            self._fault(fl, None, site, address, L.FaultKind.MISALIGNED, align, code)   # the size it must align to
            b.position_at_end(nxt)
        self._fault(fl, fault, site, address, L.FaultKind.BOUNDS, size, code)
        group = host_state(fl).shared_groups.get(id(ins)) if space == "shared" and not write else None
        if group is not None and self._grouped_check(fl, group, ins, size, align, site):
            # In bounds: the group's one range check (or its slow path) has shown it.
            b.branch(ok_blk)
            b.position_at_end(ok_blk)
            return b.gep(b.inttoptr(b.load(self.cta_field(fl, L.C_SHARED, I64)), I8P), [address])
        if space in ("shared", "local"):
            ptr = self._window(fl, space, address, size, fault)
        elif space in ("global", "const"):
            ptr = self._global(fl, address, size, fault, const=(space == "const"))
        elif space == "param":
            ptr = self._param(fl, address, size, fault)
        else:
            ptr = self._generic(fl, address, size, fault, write)
        b.branch(ok_blk)
        b.position_at_end(ok_blk)
        return ptr

    def _grouped_check(self, fl, group, ins, size, align, site) -> bool:
        """A `ld.shared` of a group (``passes.shared_loads``): loads through one base register
        with constant offsets, only side-effect-free instructions between them.  The first one
        checks the whole group's range with one compare; when that fails, a slow path checks
        each load in program order (alignment, then bounds) and faults at the first bad one,
        exactly where the loads one by one would have faulted: nothing between them has an
        effect outside the thread's registers.  False: check this load alone."""
        members, index = group
        checks = host_state(fl).group_state
        st = checks.get(id(members))
        b = fl.b
        if index == 0:
            hit = fl.register(members[0][1])
            if hit is None or not isinstance(hit[0].type.pointee, ir.IntType):
                checks[id(members)] = None
                return False
            base = resize(b, b.load(hit[0]), 64, False)
            max_end = max(off + sz for _ins, _reg, off, sz in members)
            slow, fast = fl.new_block("group_slow"), fl.new_block("group_fast")
            b.cbranch(b.icmp_unsigned(">", base, I64(fl.ml.layout.shared_bytes - max_end)), slow, fast)
            b.position_at_end(fast)
            st = checks[id(members)] = GroupCheck(base, slow, fast)
        if st is None:
            return False
        m_ins, _reg, off, m_size = members[index]
        if m_ins is not ins or m_size != size:
            raise fl.unsupported(ins, "is lowered differently from its pre-scan (a ptxvm bug)")
        here = b.block
        b.position_at_end(st.tail)
        address = b.add(st.base, I64(off)) if off else st.base
        if off and fl.register(members[0][1])[1].bits <= 32:
            address = offset_address(b, b.trunc(st.base, I32), off)      # wraps as lone loads do
        if align > 1:
            mis = fl.new_block("group_misaligned")
            nxt = fl.new_block("group_aligned")
            b.cbranch(b.icmp_unsigned("!=", b.and_(address, I64(align - 1)), I64(0)), mis, nxt)
            b.position_at_end(mis)
            self._fault(fl, None, site, address, L.FaultKind.MISALIGNED, align, L.Space.SHARED)
            b.position_at_end(nxt)
        oob, nxt = fl.new_block("group_oob"), fl.new_block("group_next")
        limit = fl.ml.layout.shared_bytes
        bad = b.icmp_unsigned(">", address, I64(limit - size)) if limit >= size else ir.Constant(I1, 1)
        b.cbranch(bad, oob, nxt)
        b.position_at_end(oob)
        self._fault(fl, None, site, address, L.FaultKind.BOUNDS, size, L.Space.SHARED)
        b.position_at_end(nxt)
        if index == len(members) - 1:
            b.branch(st.resume)          # not reached: some load of the group is out of bounds
        st.tail = nxt
        b.position_at_end(here)
        return True

    def _fault(self, fl, blk, site, address, kind, size, space: int = L.Space.GENERIC) -> None:
        """Fill ``blk`` (or the current block) with: record the fault (``space``: where the access
        was checked; ``site`` None: keep the site already recorded), stop the thread."""
        b = fl.b
        here = b.block
        if blk is not None:
            b.position_at_end(blk)
        b.store(address, self.thr(fl, L.T_FAULT_ADDR, I64))
        b.store(I32(kind), self.thr(fl, L.T_FAULT_KIND, I32))
        b.store(I32(size), self.thr(fl, L.T_FAULT_SIZE, I32))
        b.store(I32(space), self.thr(fl, L.T_FAULT_SPACE, I32))
        b.store(b.load(host_state(fl).steps_reg), self.thr(fl, L.T_STEPS, I64))
        if site is None:
            b.store(I32(L.State.FAULT), self.thr(fl, L.T_STATE, I32))
        else:
            self.set_state(fl, L.State.FAULT, site)
        b.ret(I32(L.State.FAULT))
        if blk is not None:
            b.position_at_end(here)

    def _window(self, fl, space, offset, size, fault) -> ir.Value:
        b = fl.b
        if space == "shared":
            # The window's size is the layout's (the launch context holds the same number): a
            # constant, so the check is one compare with an immediate.
            limit, base = fl.ml.layout.shared_bytes, b.load(self.cta_field(fl, L.C_SHARED, I64))
            bad = (b.icmp_unsigned(">", offset, I64(limit - size)) if limit >= size
                   else ir.Constant(ir.IntType(1), 1))
        else:
            limit, base = self.ctx(fl, L.X_LOCAL_SIZE), b.load(self.thr(fl, L.T_LOCAL, I64))
            end = b.add(offset, I64(size))
            bad = b.or_(b.icmp_unsigned(">", end, limit), b.icmp_unsigned("<", end, offset))
        ok = fl.new_block(f"{space}_ok")
        b.cbranch(bad, fault, ok)
        b.position_at_end(ok)
        return b.gep(b.inttoptr(base, I8P), [offset])

    def _param(self, fl, offset, size, fault) -> ir.Value:
        """The launch's parameter block through a `.param` address in a register (a kernel
        parameter's address taken with `mov`); ``offset + size`` may wrap past 2^64."""
        b = fl.b
        end = b.add(offset, I64(size))
        bad = b.or_(b.icmp_unsigned(">", end, self.ctx(fl, L.X_PARAM_SIZE)), b.icmp_unsigned("<", end, offset))
        ok = fl.new_block("param_ok")
        b.cbranch(bad, fault, ok)
        b.position_at_end(ok)
        return b.gep(b.inttoptr(self.ctx(fl, L.X_PARAMS), I8P), [offset])

    def _global(self, fl, address, size, fault, const=False) -> ir.Value:
        b = fl.b
        rel = b.sub(address, I64(GLOBAL_BASE))
        page = b.lshr(rel, I64(L.PAGE_SHIFT))
        ok1 = fl.new_block("page_ok")
        b.cbranch(b.icmp_unsigned("<", page, self.ctx(fl, L.X_NPAGES)), ok1, fault)
        b.position_at_end(ok1)
        pages = b.inttoptr(self.ctx(fl, L.X_PAGES), I32P)
        idx = b.load(b.gep(pages, [page]))
        ok2 = fl.new_block("alloc_ok")
        b.cbranch(b.icmp_signed("<", idx, I32(0)), fault, ok2)
        b.position_at_end(ok2)
        entry = b.mul(b.zext(idx, I64), I64(L.ALLOC_ENTRY // 8))
        allocs = b.inttoptr(self.ctx(fl, L.X_ALLOCS), I64P)
        base = b.load(b.gep(allocs, [entry]))
        end = b.load(b.gep(allocs, [b.add(entry, I64(1))]))
        host = b.load(b.gep(allocs, [b.add(entry, I64(2))]))
        stop = b.add(address, I64(size))
        bad = b.or_(b.icmp_unsigned("<", address, base), b.icmp_unsigned(">", stop, end))
        if const:           # the .const state space reaches only const allocations (as the interpreter)
            is_const = b.load(b.gep(allocs, [b.add(entry, I64(3))]))
            bad = b.or_(bad, b.icmp_unsigned("==", is_const, I64(0)))
        ok3 = fl.new_block("in_bounds")
        b.cbranch(bad, fault, ok3)
        b.position_at_end(ok3)
        return b.gep(b.inttoptr(host, I8P), [b.sub(address, base)])

    def _generic(self, fl, address, size, fault, write) -> ir.Value:
        b = fl.b
        shared_b, local_b, param_b, global_b, done = (fl.new_block(n) for n in
                                                      ("gen_shared", "gen_local", "gen_param", "gen_global", "gen_done"))
        is_sh = b.icmp_unsigned("<", b.sub(address, I64(SHARED_BASE)), I64(SHARED_LIMIT - SHARED_BASE))
        not_sh = fl.new_block("gen_not_shared")
        b.cbranch(is_sh, shared_b, not_sh)
        b.position_at_end(not_sh)
        is_lo = b.icmp_unsigned("<", b.sub(address, I64(LOCAL_BASE)), I64(LOCAL_LIMIT - LOCAL_BASE))
        not_lo = fl.new_block("gen_not_local")
        b.cbranch(is_lo, local_b, not_lo)
        b.position_at_end(not_lo)
        is_pa = b.icmp_unsigned("<", b.sub(address, I64(PARAM_BASE)), I64(PARAM_LIMIT - PARAM_BASE))
        b.cbranch(is_pa, param_b, global_b)
        incoming = []
        b.position_at_end(shared_b)
        p = self._window(fl, "shared", b.sub(address, I64(SHARED_BASE)), size, fault)
        incoming.append((p, b.block))
        b.branch(done)
        b.position_at_end(local_b)
        p = self._window(fl, "local", b.sub(address, I64(LOCAL_BASE)), size, fault)
        incoming.append((p, b.block))
        b.branch(done)
        b.position_at_end(param_b)
        if write:
            b.branch(fault)
        else:
            off = b.sub(address, I64(PARAM_BASE))
            end = b.add(off, I64(size))
            okp = fl.new_block("param_ok")
            b.cbranch(b.icmp_unsigned(">", end, self.ctx(fl, L.X_PARAM_SIZE)), fault, okp)
            b.position_at_end(okp)
            incoming.append((b.gep(b.inttoptr(self.ctx(fl, L.X_PARAMS), I8P), [off]), b.block))
            b.branch(done)
        b.position_at_end(global_b)
        p = self._global(fl, address, size, fault)
        incoming.append((p, b.block))
        b.branch(done)
        b.position_at_end(done)
        phi = b.phi(I8P)
        for v, blk in incoming:
            phi.add_incoming(v, blk)
        return phi
