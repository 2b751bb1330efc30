"""Render the chunks of a generated program as PTX lines (``kernel`` makes the module)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .isa import Opnd, reg_class, type_size
from .program import (CLASS_BITS, GLOBAL_COUNTER_OPS, INC_LIMIT, MAX_LOOP_DEPTH, POOL, REG_DECL, SCRATCH,
                      SHARED_COUNTER_OPS, SINK, SMEM_WORDS, Imm, Inst, Layout, call_frame, reg)

FULL = "0xffffffff"


def fmt_imm(t: str, bits: int) -> str:
    """An immediate of PTX type ``t`` from raw bits (hex floats, signed decimal for .sN)."""
    if t == "f32":
        return f"0f{bits & 0xFFFFFFFF:08X}"
    if t == "f64":
        return f"0d{bits & 0xFFFFFFFFFFFFFFFF:016X}"
    n = int(t[1:])
    v = bits & ((1 << n) - 1)
    if t.startswith("s"):
        return str(v - (1 << n) if v >> (n - 1) else v)
    return str(v) if v < 1 << 16 else f"0x{v:X}"


def safe_divisor(bits: int, t: str) -> int:
    """x & ~2 | 1 is odd (never 0) with bit 1 clear (never -1): both give unspecified results."""
    return (bits & ~2 | 1) & ((1 << int(t[1:])) - 1)


def _vec(regs: list[str]) -> str:
    return regs[0] if len(regs) == 1 else "{" + ", ".join(regs) + "}"


@dataclass
class Renderer:
    layout: Layout
    lines: list[str] = field(default_factory=list)
    labels: int = 0
    approx_ops: list[str] = field(default_factory=list)
    loop_depth: int = 0
    uses_shared: bool = False
    sm: int = 80
    arch_a: bool = False                                 # some form needs sm_XXa
    after: list[str] = field(default_factory=list)       # lines to emit after the current instruction
    functions: list[str] = field(default_factory=list)   # `.func`s of Call chunks, in order

    def emit(self, text: str) -> None:
        self.lines.append("    " + text)

    def label(self, stem: str) -> str:
        self.labels += 1
        return f"${stem}{self.labels}"

    def place(self, label: str) -> None:
        self.lines.append(f"{label}:")

    def chunk(self, c) -> None:
        getattr(self, "c_" + type(c).__name__.lower())(c)

    def block(self, chunks) -> None:
        for c in chunks:
            self.chunk(c)

    # ------------------------------------------------------------ arithmetic
    def operand(self, o: Opnd, a, neg: bool = False) -> str:
        if isinstance(a, Imm):
            return fmt_imm(o.type, safe_divisor(a.value, o.type) if o.safe == "divisor" else a.value)
        name = reg(o.cls, a)
        if o.safe == "divisor":
            t, s = f"b{CLASS_BITS[o.cls]}", SCRATCH[o.cls]
            self.emit(f"and.{t} {s}, {name}, {fmt_imm('u' + t[1:], ((1 << int(t[1:])) - 1) ^ 2)};")
            self.emit(f"or.{t} {s}, {s}, 1;")
            return s
        return ("!" if neg else "") + name

    def inst_text(self, i: Inst, dst: str | None = None) -> str:
        v = i.variant
        self.sm = max(self.sm, v.sm)
        self.arch_a |= v.arch_a
        ops = []
        guard = "" if i.guard is None else f"@{'!' if i.guard[1] else ''}{reg('p', i.guard[0])} "
        self.after = []
        for k, (o, a) in enumerate(zip(v.operands, i.args)):
            if o.role in ("d", "dp"):
                text = dst or reg(o.cls, a)
                if o.type == "b8" and not dst:
                    # .b8 operands (e2m1x2) need a .b8 register (ptxas): the scratch %t8, widened after.
                    self.after.append(f"{guard}cvt.u16.u8 {text}, %t8;")
                    text = "%t8"
                if k == 0 and i.pair is not None:
                    text += f"|{reg('p', i.pair)}"
                ops.append(text)
            elif o.type == "b8" and not isinstance(a, Imm):
                self.emit(f"cvt.u8.u16 %t8, {reg(o.cls, a)};")
                ops.append("%t8")
            else:
                ops.append(self.operand(o, a, bool(i.negs) and i.negs[k]))
        return f"{guard}{v.text(i.combo)} {', '.join(ops)};"

    def c_inst(self, i: Inst) -> None:
        self.emit(self.inst_text(i))
        for line in self.after:
            self.emit(line)

    def c_approx(self, a) -> None:
        """The result goes to a register nobody reads and, with the sources, to the
        ``apx`` record: the comparator checks it against the ISA's error bound."""
        i = a.inst
        v = i.variant
        slot = len(self.approx_ops)
        self.approx_ops.append(v.approx or v.opcode)
        d = v.operands[0]
        res = {"h": "%xh", "r": "%xr", "d": "%xd"}[d.cls]
        self.emit(self.inst_text(i, dst=res))
        words = self.layout.threads * 8
        base = slot * 3 * words
        srcs = [(o, x) for o, x in zip(v.operands[1:], i.args[1:]) if o.role == "s"][:2]
        for j, (o, x) in enumerate(srcs):
            if not isinstance(x, Imm):
                self.emit(f"st.global.b{CLASS_BITS[o.cls]} [%aapx+{base + j * words}], {reg(o.cls, x)};")
        self.emit(f"st.global.b{CLASS_BITS[d.cls]} [%aapx+{base + 2 * words}], {res};")

    def c_carry(self, c) -> None:
        cls = reg_class(c.type)
        n = len(c.steps)
        for k, regs in enumerate(c.steps):
            first, last = k == 0, k == n - 1
            if c.kind == "mad":
                op = "mad.lo.cc" if first else ("madc.lo" if last else "madc.lo.cc")
            else:
                op = f"{c.kind}.cc" if first else (f"{c.kind}c" if last else f"{c.kind}c.cc")
            self.emit(f"{op}.{c.type} {', '.join(reg(cls, r) for r in regs)};")

    # ------------------------------------------------------------ calls
    def _frame_io(self, load: bool, param: str) -> None:
        """Every pool register from (``load``) or to the `.param` array ``param``."""
        frame, _ = call_frame()
        for cls, i, off in frame:
            if cls == "p":
                if load:
                    self.emit(f"ld.param.b32 %t32, [{param}+{off}];")
                    self.emit(f"setp.ne.b32 %p{i}, %t32, 0;")
                else:
                    self.emit(f"selp.u32 %t32, 1, 0, %p{i};")
                    self.emit(f"st.param.b32 [{param}+{off}], %t32;")
            elif load:
                self.emit(f"ld.param.b{CLASS_BITS[cls]} {reg(cls, i)}, [{param}+{off}];")
            else:
                self.emit(f"st.param.b{CLASS_BITS[cls]} [{param}+{off}], {reg(cls, i)};")

    def c_call(self, c) -> None:
        name = f"fz_fn{len(self.functions)}"
        _, size = call_frame()
        outer, self.lines = self.lines, []
        self._frame_io(True, "fz_arg")
        self.block(c.body)
        self._frame_io(False, "fz_ret")
        self.emit("ret;")
        body, self.lines = self.lines, outer
        decls = [f".reg .{REG_DECL[k]} %{k}<{POOL[k]}>;" for k in ("h", "r", "d", "p")]
        decls += [".reg .b16 %t16, %s16;", ".reg .b32 %t32, %s32;", ".reg .b64 %t64, %s64;"]
        if any("%t8" in line for line in body):
            decls.append(".reg .b8 %t8;")
        self.functions.append("\n".join([
            f".func (.param .align 8 .b8 fz_ret[{size}]) {name}(.param .align 8 .b8 fz_arg[{size}])", "{",
            *("    " + d for d in decls), *body, "}", ""]))
        self.emit("{")
        self.emit(f".param .align 8 .b8 fz_a[{size}];")
        self.emit(f".param .align 8 .b8 fz_r[{size}];")
        self._frame_io(False, "fz_a")
        self.emit(f"call.uni (fz_r), {name}, (fz_a);")
        self._frame_io(True, "fz_r")
        self.emit("}")

    # ------------------------------------------------------------ control flow
    def c_if(self, c) -> None:
        end = self.label("END")
        if c.uniform:
            self.emit(f"setp.eq.u32 %tpu, %lcta, {c.ucmp};")
            cond, bra = "%tpu", "bra.uni"
        else:
            cond, bra = f"{'!' if c.neg else ''}{reg('p', c.pred)}", "bra"
        if c.orelse is None:
            self.emit(f"@{cond} {bra} {end};")
            self.block(c.then)
        else:
            other = self.label("ELSE")
            self.emit(f"@{cond} {bra} {other};")
            self.block(c.then)
            self.emit(f"{bra} {end};")
            self.place(other)
            self.block(c.orelse)
        self.place(end)

    def c_loop(self, c) -> None:
        d = self.loop_depth
        assert d < MAX_LOOP_DEPTH, "loops nest deeper than the counters declared"
        self.loop_depth += 1
        top = self.label("LOOP")
        if c.trips > 0:
            self.emit(f"mov.u32 %lc{d}, {c.trips};")
        elif c.trips < 0:
            # Trip count from the scalar kernel parameter: unknown to the compiler, uniform.
            self.emit(f"and.b32 %lc{d}, %kparam, 3;")
            self.emit(f"add.u32 %lc{d}, %lc{d}, 1;")
        else:
            self.emit(f"and.b32 %lc{d}, {reg('r', c.src)}, 3;")
            self.emit(f"add.u32 %lc{d}, %lc{d}, 1;")
        self.place(top)
        self.block(c.body)
        self.emit(f"sub.u32 %lc{d}, %lc{d}, 1;")
        self.emit(f"setp.ne.u32 %pl{d}, %lc{d}, 0;")
        self.emit(f"@%pl{d} bra{'.uni' if c.trips else ''} {top};")
        self.loop_depth -= 1

    def c_switch(self, c) -> None:
        table, end = self.label("TBL"), self.label("END")
        cases = [self.label("CASE") for _ in c.cases]
        self.emit(f"and.b32 %t32, {reg('r', c.src)}, {len(cases) - 1};")
        self.lines.append(f"{table}: .branchtargets {', '.join(cases)};")
        self.emit(f"brx.idx %t32, {table};")
        for k, (lab, body) in enumerate(zip(cases, c.cases)):
            self.place(lab)
            self.block(body)
            if k != len(cases) - 1:
                self.emit(f"bra {end};")
        self.place(end)

    # ------------------------------------------------------------ memory
    def c_mem(self, m) -> None:
        if m.op == "cp_async":
            self._cp_async(m)
            return
        cls = reg_class(m.type)
        regs = [reg(cls, r) for r in m.regs]
        vec = f".v{m.vec}" if m.vec > 1 else ""
        if m.op in ("ld_sown", "st_sown", "generic_shared"):
            self.uses_shared = True
        if m.op == "ld_own":
            self.emit(f"ld{_qual(m.cop, 'global')}{vec}.{m.type} {_vec(regs)}, [%aown+{m.offset}];")
        elif m.op == "st_own":
            self.emit(f"st{_qual(m.cop, 'global')}{vec}.{m.type} [%aown+{m.offset}], {_vec(regs)};")
        elif m.op == "ld_sown":
            self.emit(f"ld{_qual(m.cop, 'shared')}{vec}.{m.type} {_vec(regs)}, [%sown+{m.offset}];")
        elif m.op == "st_sown":
            self.emit(f"st{_qual(m.cop, 'shared')}{vec}.{m.type} [%sown+{m.offset}], {_vec(regs)};")
        elif m.op == "gather":
            self._in_address(m.src, type_size(m.type) * m.vec)
            op = {"nc": "ld.global.nc", "ldu": "ldu.global", "": "ld.global"}[m.cop]
            self.emit(f"{op}{vec}.{m.type} {_vec(regs)}, [%t64+{m.offset}];")
        elif m.op == "generic_global":
            self.emit("cvta.global.u64 %t64, %aown;")
            self.emit(f"isspacep.global {reg('p', m.src)}, %t64;")
            self.emit(f"{'ld' if m.cop == 'ld' else 'st'}{vec}.{m.type} " +
                      (f"{_vec(regs)}, [%t64+{m.offset}];" if m.cop == "ld" else f"[%t64+{m.offset}], {_vec(regs)};"))
        elif m.op == "generic_shared":
            self.emit("cvta.shared.u64 %t64, %sown;")
            self.emit(f"isspacep.shared {reg('p', m.src)}, %t64;")
            self.emit(f"{'ld' if m.cop == 'ld' else 'st'}{vec}.{m.type} " +
                      (f"{_vec(regs)}, [%t64+{m.offset}];" if m.cop == "ld" else f"[%t64+{m.offset}], {_vec(regs)};"))
        else:
            raise ValueError(m.op)

    def _in_address(self, src: int, size: int) -> None:
        """%t64 = the address of a word of the read-only input: index register ``src`` masked to
        its power-of-two length (and to an even index for 16-byte accesses)."""
        mask = self.layout.in_words - 1
        if size > 8:
            mask &= ~1
        self.emit(f"and.b32 %t32, {reg('r', src)}, {mask};")
        self.emit("mul.wide.u32 %t64, %t32, 8;")
        self.emit("add.s64 %t64, %t64, %ain0;")

    def _cp_async(self, m) -> None:
        """A word (pair for 16 bytes) of ``in`` into the own shared slots, then waited for."""
        self.uses_shared = True
        size = int(m.type[1:]) // 8
        self._in_address(m.src, size)
        cop, _, src_size = m.cop.partition(":")
        fill = f", {src_size}" if src_size else f", {reg('p', m.regs[0])}" if m.regs else ""
        self.emit(f"cp.async.{cop}.shared.global [%sown+{m.offset}], [%t64], {size}{fill};")
        self.emit("cp.async.commit_group;")
        self.emit("cp.async.wait_all;" if m.offset % 8 else "cp.async.wait_group 0;")

    def c_exchange(self, x) -> None:
        self.uses_shared = True
        cls = reg_class(x.type)
        off = 0
        self.emit(f"st.shared.{x.type} [%sown+{off}], {reg(cls, x.src)};")
        self.emit(self._barrier_text(x.barrier))
        if x.partner == "xor":
            self.emit(f"xor.b32 %t32, %ltid, {x.k};")
        else:
            self.emit(f"add.u32 %t32, %ltid, {x.k};")
            self.emit(f"and.b32 %t32, %t32, {self.layout.nt - 1};")
        self.emit(f"mad.wide.u32 %t64, %t32, {SMEM_WORDS * 8}, %sbase;")
        self.emit(f"ld.shared.{x.type} {reg(cls, x.dst)}, [%t64+{off}];")
        self.emit(self._barrier_text(x.barrier))

    def _barrier_text(self, kind: str) -> str:
        if kind == "bar.sync.n":
            return f"bar.sync 0, {self.layout.nt};"
        return f"{kind} 0;"

    def c_atomic(self, a) -> None:
        t = a.type
        cls = reg_class(t)
        sem = f".{a.sem}" if a.sem else ""
        noftz = ".noftz" if t in ("f16", "bf16", "f16x2", "bf16x2") else ""
        if t.startswith("bf16"):
            self.sm = max(self.sm, 90)           # atom.add.noftz.bf16{x2}: sm_90
        if a.where == "own":
            addr = f"[%aown+{a.counter}]"
            space = "global"
            vals = [reg(cls, r) for r in a.regs[1:]]
            if a.red:
                self.emit(f"red{sem}.{space}.{a.op}{noftz}.{t} {addr}, {', '.join(vals)};")
            else:
                self.emit(f"atom{sem}.{space}.{a.op}{noftz}.{t} {reg(cls, a.regs[0])}, {addr}, {', '.join(vals)};")
            return
        shared = a.where == "sctr"
        if shared:
            self.uses_shared = True
        op, t = (SHARED_COUNTER_OPS if shared else GLOBAL_COUNTER_OPS)[a.counter]
        cls = reg_class(t)
        space = "shared" if shared else "global"
        base = "%sctr" if shared else "%gctr"
        addr = f"[{base}+{a.counter * 8}]"
        if t in ("f32", "f64"):
            # Small integers: every order of the additions gives the same exact sum.
            self.emit(f"and.b32 %t32, {reg('r', a.regs[0])}, 15;")
            val = "%t32" if t == "f32" else "%t64"
            self.emit(f"cvt.rn.{t}.u32 {val}, %t32;")
        elif op in ("inc", "dec"):
            val = str(INC_LIMIT)
        else:
            val = reg(cls, a.regs[0])
        if a.red:
            self.emit(f"red{sem}.{space}.{op}.{t} {addr}, {val};")
        else:
            self.emit(f"atom{sem}.{space}.{op}.{t} {SINK[cls]}, {addr}, {val};")

    # ------------------------------------------------------------ warp, barriers, specials
    def c_partialwarp(self, pw) -> None:
        nt = self.layout.nt
        k = min(pw.lanes, nt - 32 * ((nt - 1) // 32))        # the last warp may be short
        end = self.label("PART")
        self.emit("mov.u32 %t32, %laneid;")
        self.emit(f"setp.ge.u32 %tp, %t32, {k};")
        self.emit(f"@%tp bra {end};")
        self.emit(f"mov.b32 %tm, {(1 << k) - 1};")
        w = pw.warp
        if w.op == "shfl":                                     # a source lane inside the mask
            w = replace(w, imm=(min(w.imm[0], k - 1), w.imm[1]))
        self.c_warp(w, "%tm")
        self.place(end)

    def c_warp(self, w, mask: str = FULL) -> None:
        if mask == FULL and w.imm and w.op in ("vote", "match", "redux") and w.imm[-1]:
            # Tiles of 16 lanes: each lane names its own half-warp, as cooperative groups do.
            self.emit("mov.u32 %t32, %laneid;")
            self.emit("and.b32 %t32, %t32, 16;")
            self.emit("mov.b32 %tm, 65535;")
            self.emit("shl.b32 %tm, %tm, %t32;")
            mask = "%tm"
        r = lambda k: reg(reg_class(w.type), w.regs[k])
        neg = lambda k: "!" if w.negs and w.negs[k] else ""
        if w.op == "shfl":
            lane = str(w.imm[0]) if w.imm[0] >= 0 else reg("r", w.regs[2])
            d = r(0) + (f"|{reg('p', w.regs[3])}" if len(w.regs) > 3 else "")
            self.emit(f"shfl.sync.{w.mode}.b32 {d}, {r(1)}, {lane}, {w.imm[1]}, {mask};")
        elif w.op == "vote":
            if w.mode == "ballot":
                self.emit(f"vote.sync.ballot.b32 {reg('r', w.regs[0])}, {neg(1)}{reg('p', w.regs[1])}, {mask};")
            else:
                self.emit(f"vote.sync.{w.mode}.pred {reg('p', w.regs[0])}, {neg(1)}{reg('p', w.regs[1])}, {mask};")
        elif w.op == "match":
            d = reg("r", w.regs[0]) + (f"|{reg('p', w.regs[2])}" if len(w.regs) > 2 else "")
            self.emit(f"match.{w.mode}.sync.{w.type} {d}, {r(1)}, {mask};")
        elif w.op == "redux":
            self.emit(f"redux.sync.{w.mode}.{w.type} {reg('r', w.regs[0])}, {reg('r', w.regs[1])}, {mask};")
        elif w.op == "activemask":
            self.emit(f"activemask.b32 {reg('r', w.regs[0])};")
        elif w.op == "barwarp":
            self.emit(f"bar.warp.sync {FULL};")
        else:
            raise ValueError(w.op)

    def c_barrier(self, b) -> None:
        neg = "!" if b.neg else ""
        if b.op == "bar.red.popc":
            self.emit(f"bar.red.popc.u32 {reg('r', b.regs[0])}, 0, {neg}{reg('p', b.regs[1])};")
        elif b.op in ("bar.red.and", "bar.red.or"):
            self.emit(f"{b.op}.pred {reg('p', b.regs[0])}, 0, {neg}{reg('p', b.regs[1])};")
        else:
            self.emit(self._barrier_text(b.op))

    def c_special(self, s) -> None:
        if s.op.startswith("%"):
            self.emit(f"mov.u32 {reg('r', s.dst)}, {s.op};")
        elif s.op == "nanosleep":
            self.emit("nanosleep.u32 20;")
        elif s.op.startswith("prefetch"):
            self.emit(f"{s.op} [%aown];")
        else:
            self.emit(f"{s.op};")


def _qual(cop: str, space: str) -> str:
    """Memory qualifiers in the ISA's order: ld{.weak|.volatile|.relaxed.scope|...}.space{.cop}."""
    if not cop:
        return f".{space}"
    if cop in ("volatile", "relaxed.gpu", "acquire.gpu", "release.gpu", "relaxed.cta", "acquire.cta",
               "release.cta", "relaxed.sys", "weak"):
        return f".{cop}.{space}"
    return f".{space}.{cop}"
