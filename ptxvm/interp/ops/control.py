"""Control flow (PTX ISA §9.7.10) and the miscellaneous §9.7.13 instructions: bra, brx.idx, call,
ret, exit, trap, brkpt, nanosleep."""

from __future__ import annotations

import numpy as np

from ... import limits
from ...ir import nodes as ir
from ...ir.call_args import immediate_argument_bits
from ...ir.types import ScalarType, StateSpace
from ...machine import heap, reports
from ...machine.cdp import REFUSED
from ...machine.printf import cstring, format_printf
from ..program import VECTOR_COMPONENTS, CompileContext, Control, reader, writer
from ..state import BadCall, StackFault, storage_dtype
from . import impl


@impl("call")
def _call(ctx: CompileContext, ins: ir.Instruction):
    ops = ins.operands
    ret = ops[0] if ops and isinstance(ops[0], ir.ParenList) else None
    i = 1 if ret is not None else 0
    callee = ops[i]
    args = ops[i + 1] if len(ops) > i + 1 and isinstance(ops[i + 1], ir.ParenList) else ir.ParenList(())
    if isinstance(callee, ir.Symbol):
        f = ctx.module.functions.get(callee.name)
        if f is not None and f.body is None:
            builtin = BUILTINS.get(callee.name)
            if callee.name in REFUSED:
                raise ctx.unsupported(ins, REFUSED[callee.name])
            if builtin is None:
                raise ctx.unsupported(ins, f"calls the external function `{callee.name}`, which the "
                                           "interpreter does not provide")
            return builtin(ctx, ins, ret, args), Control.NEXT, -1
        if f is None:
            raise ctx.unsupported(ins, f"calls `{callee.name}`, which is not a function of this module")
        targets = {f.name: f}
        select = None
    else:
        # Indirect call: any function of the module whose address the register may hold.
        targets = {f.name: f for f in ctx.module.functions.values() if f.body is not None and not f.is_kernel}
        addr = reader(ctx, callee, ScalarType.U64, ins)
        by_address = {ctx.symbols.functions[n]: n for n in targets}

        def select(b, lanes):
            a = addr(b, lanes)
            names = np.array([by_address.get(int(x)) for x in a], dtype=object)
            bad = [i for i, n in enumerate(names) if n is None]
            if bad:
                raise BadCall(int(lanes[bad[0]]), int(a[bad[0]]))
            return names
    bindings = {}
    for name, f in targets.items():
        if select is None:
            bindings[name] = _bind(ctx, ins, f, ret, args)
        elif _fits(f, ret, args):
            bindings[name] = _bind(ctx, ins, f, ret, args)   # indirect: only signature-compatible targets
    entries = ctx.entries
    ins_pc = [0]
    costs = {name: frame_cost(ctx, targets[name]) for name in bindings}

    def run(b, lanes):
        names = select(b, lanes) if select is not None else None
        new_pc = np.empty(lanes.shape, dtype=np.int64)
        groups = [(next(iter(targets)), np.arange(lanes.size))] if names is None else \
            [(n, np.nonzero(names == n)[0]) for n in set(names.tolist())]
        for name, sel in groups:
            if name is None or name not in bindings:
                # A function whose signature does not fit the call: the ISA leaves it undefined.
                from .control import _Trap
                raise _Trap(int(lanes[sel[0]]), f"indirect call to `{name}`, whose parameters do not "
                                                "match the call's prototype")
            sub = lanes[sel]
            _enter(b, sub, ins_pc[0], name, bindings[name], costs[name])
            new_pc[sel] = entries[name]
        return new_pc

    run.set_pc = lambda p: ins_pc.__setitem__(0, p)
    run.bindings = bindings
    return run, Control.JUMP, -1


def _fits(f: ir.Function, ret, args) -> bool:
    return len(args.elements) == len(f.params) and len(ret.elements if ret is not None else ()) == len(f.returns)


def _bind(ctx: CompileContext, ins, f: ir.Function, ret, args):
    """Pairs (caller side, callee side) for arguments, and for the results.

    Arguments are passed by value (PTX ISA §9.7.12.5): each pair copies the bytes of one side to
    the other, so a `.param` argument for a `.reg` formal, a register for a `.param` formal and
    an immediate (the bits of ``ir.call_args``) all work; the call check has made the sizes
    equal and the kinds compatible, as ptxas requires."""
    if len(args.elements) != len(f.params):
        raise ctx.unsupported(ins, f"passes {len(args.elements)} arguments to `{f.name}`, which takes {len(f.params)}")
    arg_pairs = [(_caller_side(ctx, ins, a, p), _callee_side(f, p)) for a, p in zip(args.elements, f.params)]
    ret_pairs = []
    if ret is not None:
        if len(ret.elements) != len(f.returns):
            raise ctx.unsupported(ins, f"expects {len(ret.elements)} results from `{f.name}`, which returns "
                                       f"{len(f.returns)}")
        ret_pairs = [(_caller_side(ctx, ins, r, p), _callee_side(f, p)) for r, p in zip(ret.elements, f.returns)]
    return arg_pairs, ret_pairs


def _caller_side(ctx: CompileContext, ins, op, formal: ir.VarDecl) -> tuple:
    if formal.vector and isinstance(op, ir.Immediate):
        raise ctx.unsupported(ins, f"passes `{op}` for `{formal.name}`, a .v{formal.vector} vector register "
                                   "parameter, which takes a register or a `.param` variable")
    if isinstance(op, ir.Symbol):
        pv = ctx.pvar(op.name)
        if pv is not None:
            return ("pvar", pv[0], pv[1])
    if isinstance(op, ir.Register):
        hit = ctx.register(op)
        if hit is not None:
            return ("reg", hit[0], hit[1])
        elements = ctx.vector_elements(op)
        if elements is not None:          # a whole vector register: its elements' bytes in order
            hits = [ctx.register(e) for e in elements]
            return ("vreg", tuple(h[0] for h in hits), hits[0][1])
    if isinstance(op, ir.Immediate):
        try:
            bits = immediate_argument_bits(op, formal.type)
        except ValueError as e:
            raise ctx.unsupported(ins, f"passes `{op}` for `{formal.name}`: {e}") from None
        return ("imm", bits, _side_bytes(_callee_side_of(formal)))
    if isinstance(op, ir.Sink):
        return ("sink", None, 0)
    raise ctx.unsupported(ins, f"passes `{op}`, which is not a .param variable, register or immediate")


def _callee_side_of(d: ir.VarDecl) -> tuple:
    if d.space is StateSpace.PARAM:
        return ("pvar", "", d.size_bytes() or 0)
    if d.vector:                       # a `.reg .v2`/`.v4` formal: its element registers
        return ("vreg", ("",) * d.vector, d.type)
    return ("reg", "", d.type)


def _callee_side(f: ir.Function, d: ir.VarDecl) -> tuple:
    kind, _, info = _callee_side_of(d)
    key = f"{f.name}|{d.name}"
    if kind == "vreg":
        return (kind, tuple(f"{key}.{c}" for c in VECTOR_COMPONENTS[:d.vector]), info)
    return (kind, key, info)


def _side_bytes(side) -> int:
    kind, key, info = side
    if kind == "reg":
        return 0 if info is ScalarType.PRED else max(info.bits, 8) // 8
    if kind == "vreg":
        return len(key) * (max(info.bits, 8) // 8)
    return info


def _fetch(b, lanes, side, n: int) -> np.ndarray:
    """The side's first ``n`` bytes per lane, (lanes, n) uint8 (a predicate: its bools)."""
    kind, key, info = side
    if kind == "pvar":
        return b.pbuf(key, info)[lanes, :n].copy()
    if kind == "imm":
        return np.tile(np.frombuffer(key.to_bytes(info, "little"), np.uint8)[:n], (lanes.size, 1))
    if kind == "vreg":
        w = max(info.bits, 8) // 8
        return np.concatenate([_fetch(b, lanes, ("reg", k, info), w) for k in key], axis=1)[:, :n]
    v = np.ascontiguousarray(b.take(b.read_reg(key, info), lanes))
    if info is ScalarType.PRED:
        return v.copy()
    return v.view(np.uint8).reshape(lanes.size, -1)[:, :n].copy()


def _put(b, lanes, side, data: np.ndarray) -> None:
    kind, key, info = side
    if kind == "sink":
        return
    if kind == "pvar":
        b.pbuf(key, info)[lanes, :data.shape[1]] = data
        return
    if kind == "vreg":
        w = max(info.bits, 8) // 8
        for i, k in enumerate(key):
            _put(b, lanes, ("reg", k, info), data[:, i * w:(i + 1) * w])
        return
    if info is ScalarType.PRED:
        b.assign(key, info, lanes, data)
        return
    width = max(info.bits, 8) // 8
    raw = np.zeros((lanes.size, width), dtype=np.uint8)
    raw[:, :min(width, data.shape[1])] = data[:, :width]
    b.assign(key, info, lanes, raw.view(storage_dtype(info)).reshape(-1))


def _copy(b, lanes, src, dst):
    n = min(_side_bytes(src), _side_bytes(dst)) if dst[0] != "sink" else 0
    if dst[0] != "sink":
        _put(b, lanes, dst, _fetch(b, lanes, src, n))


def frame_cost(ctx: CompileContext, f: ir.Function) -> int:
    """Stack bytes one activation of ``f`` accounts for (limits.stack_per_thread), as the host
    JIT counts them: a call's overhead (64), the `.local` frame, the `.param` buffers, and 8
    bytes per declared register."""
    size = 64 + ctx.symbols.frame_bytes.get(f.name, 0)
    for d in (*f.params, *f.returns):
        size += (d.size_bytes() or 0) if d.space is StateSpace.PARAM else 8
    for st in f.body.walk():
        if isinstance(st, ir.VarDecl):
            if st.space is StateSpace.REG:
                size += 8 * (st.count if st.count is not None else 1)
            elif st.space is StateSpace.PARAM:
                size += st.size_bytes() or 0
    return size


def _check_stack(b, lanes: np.ndarray, cost: int) -> np.ndarray:
    """Each lane's stack use with the callee's frame; faults (lowest lane first) past the call
    depth or the stack budget, before the call changes anything."""
    lim = limits.current()
    depth = b.depth[lanes] + 1
    deep = depth > lim.call_depth
    if deep.any():
        i = int(np.argmax(deep))
        raise StackFault(int(lanes[i]), reports.call_depth_exceeded(int(depth[i])))
    used = b.stack_used[lanes] + cost
    big = used > lim.stack_per_thread
    if big.any():
        i = int(np.argmax(big))
        raise StackFault(int(lanes[i]), reports.stack_exceeded(int(used[i])))
    return used


def _enter(b, lanes, site: int, name: str, binding, cost: int) -> None:
    arg_pairs, _ = binding
    prog = b.program
    used = _check_stack(b, lanes, cost)
    for d in np.unique(b.depth[lanes]):
        sub = lanes[b.depth[lanes] == d]
        while len(b.frames) <= d:
            b.frames.append({"site": np.zeros(b.n, dtype=np.int64), "fp": np.zeros(b.n, dtype=np.int64),
                             "sp": np.zeros(b.n, dtype=np.int64), "stack": np.zeros(b.n, dtype=np.int64),
                             "callee": {}, "saved": {}})
        level = b.frames[int(d)]
        level["site"][sub] = site
        level["fp"][sub] = b.fp[sub]          # the caller's frame and stack pointers, back at `ret`
        level["sp"][sub] = b.sp[sub]
        level["stack"][sub] = b.stack_used[sub]
        # Save what the callee may overwrite, for a recursive outer activation.
        for key, kind in prog.function_keys.get(name, ()):
            cur = b.pbufs.get(key) if kind == "pvar" else b.reg_if_any(key)
            if cur is None:
                continue
            saved = level["saved"].get(key)
            if saved is None or saved.shape != cur.shape:
                saved = level["saved"][key] = np.zeros_like(cur)
            saved[sub] = cur[sub]
    for src, dst in arg_pairs:
        _copy(b, lanes, src, dst)
    b.depth[lanes] += 1
    b.stack_used[lanes] = used
    # Push the callee's call frame (its `.local` variables) on each lane's local stack.
    size = prog.symbols.frame_bytes.get(name, 0)
    if size:
        align = prog.symbols.frame_align.get(name, 16)
        base = (b.sp[lanes] + align - 1) // align * align
        b.fp[lanes] = base
        b.sp[lanes] = base + size
        top = int(np.argmax(b.sp[lanes]))
        b.grow_local(int(b.sp[lanes][top]), int(lanes[top]))
    else:
        b.fp[lanes] = b.sp[lanes]


@impl("ret")
def _ret(ctx: CompileContext, ins: ir.Instruction):
    if ctx.function is ctx.kernel:
        return None, Control.EXIT, -1
    name = ctx.function.name

    def run(b, lanes):
        prog = b.program
        new_pc = np.empty(lanes.shape, dtype=np.int64)
        depth = b.depth[lanes] - 1
        for d in np.unique(depth):
            sel_d = np.nonzero(depth == d)[0]
            level = b.frames[int(d)]
            sites = level["site"][lanes[sel_d]]
            results = []
            for site in np.unique(sites):
                sel = sel_d[sites == site]
                sub = lanes[sel]
                call = prog.ops[int(site)]
                _, ret_pairs = call.run.bindings[name]
                # Taken before the restore below: in a recursive call the caller's result
                # variable and the callee's return slot belong to the same function.
                results.extend((sub, caller, _fetch(b, sub, callee, min(_side_bytes(caller), _side_bytes(callee))))
                               for caller, callee in ret_pairs if caller[0] != "sink")
                new_pc[sel] = site + 1
            sub_all = lanes[sel_d]
            # Pop the callee's frame: the caller's frame and stack pointers are current again.
            b.sp[sub_all] = level["sp"][sub_all]
            b.fp[sub_all] = level["fp"][sub_all]
            b.stack_used[sub_all] = level["stack"][sub_all]
            for key, kind in prog.function_keys.get(name, ()):
                saved = level["saved"].get(key)
                if saved is not None:
                    cur = b.pbufs.get(key) if kind == "pvar" else b.reg_if_any(key)
                    if cur is not None and cur.shape == saved.shape:
                        cur[sub_all] = saved[sub_all]
            for sub, caller, value in results:
                _put(b, sub, caller, value)
        b.depth[lanes] -= 1
        return new_pc
    return run, Control.JUMP, -1


def _vprintf(ctx: CompileContext, ins, ret, args):
    """`vprintf(const char *fmt, void *args)`: CUDA's device printf, printed in thread order."""
    fmt_src = _arg_reader(ctx, ins, args, 0)
    buf_src = _arg_reader(ctx, ins, args, 1)
    ret_side = _ret_side(ctx, ins, ret)

    def run(b, lanes):
        fmts = fmt_src(b, lanes)
        bufs = buf_src(b, lanes)
        for k, lane in enumerate(lanes):
            text = format_printf(b, int(fmts[k]), int(bufs[k]), int(lane))
            b.printed.append((int(lane), text))
        if ret_side is not None:
            out = b.pbuf(ret_side[0], ret_side[1])
            out[lanes, :4] = np.zeros((lanes.size, 1), dtype=np.uint32).view(np.uint8)
    return run


def _assertfail(ctx: CompileContext, ins, ret, args):
    """`__assertfail(message, file, line, function, charSize)`: a failed device assert."""
    msg, fil, line, fn = (_arg_reader(ctx, ins, args, i, ScalarType.U64 if i != 2 else ScalarType.U32)
                          for i in range(4))

    def run(b, lanes):
        from .control import _Trap
        lane = lanes[:1]
        text = cstring(b, int(msg(b, lane)[0]), int(lane[0]))
        where = cstring(b, int(fil(b, lane)[0]), int(lane[0]))
        func = cstring(b, int(fn(b, lane)[0]), int(lane[0]))
        raise _Trap(int(lane[0]), reports.assert_failed(text, func, where, int(line(b, lane)[0])))
    return run


def _arg_reader(ctx, ins, args, i, t=ScalarType.U64):
    op = args.elements[i]
    pv = ctx.pvar(op.name) if isinstance(op, ir.Symbol) else None
    if pv is None:
        return reader(ctx, op, t, ins)
    key, size = pv
    n = t.bits // 8

    def read(b, lanes):
        return np.ascontiguousarray(b.pbuf(key, size)[lanes, :n]).view(np.uint64 if n == 8 else np.uint32).reshape(-1)
    return read


def _ret_side(ctx, ins, ret):
    if ret is None or not ret.elements:
        return None
    op = ret.elements[0]
    return ctx.pvar(op.name) if isinstance(op, ir.Symbol) else None


def _ret_writer(ctx: CompileContext, ins, ret):
    """Write a builtin's 64-bit result to the call's result (a `.param` variable or register)."""
    if ret is None or not ret.elements:
        return None
    op = ret.elements[0]
    pv = ctx.pvar(op.name) if isinstance(op, ir.Symbol) else None
    if pv is not None:
        key, size = pv

        def write_param(b, lanes, value):
            b.pbuf(key, size)[lanes, :8] = value.astype(np.uint64).reshape(-1, 1).view(np.uint8)
        return write_param
    w = writer(ctx, op, ScalarType.U64, ins)
    return lambda b, lanes, value: w(b, lanes, value.astype(np.uint64))


def _malloc(ctx: CompileContext, ins, ret, args):
    """`malloc(size_t)` (CUDA's device heap, see ..heap): a fresh global block per calling lane."""
    size = _arg_reader(ctx, ins, args, 0)
    out = _ret_writer(ctx, ins, ret)

    def run(b, lanes):
        ptrs = heap.malloc(b.memory, size(b, lanes))
        if out is not None:
            out(b, lanes, ptrs)
    return run


def _free(ctx: CompileContext, ins, ret, args):
    """`free(void *)`: release blocks from `malloc`; bad pointers fault (see ..heap)."""
    ptr = _arg_reader(ctx, ins, args, 0)

    def run(b, lanes):
        heap.free(b.memory, ptr(b, lanes), lanes)
    return run


def _cdp_builtins() -> dict:
    # The device runtime's entry points (CDP2) live in ..devrt, which does not import this module.
    from ..devrt import BUILTINS as DEVRT
    return DEVRT


BUILTINS = {"vprintf": _vprintf, "__assertfail": _assertfail, "malloc": _malloc, "free": _free,
            **_cdp_builtins()}


@impl("bra")
def _bra(ctx: CompileContext, ins: ir.Instruction):
    target = ins.operands[0]
    if not isinstance(target, ir.Symbol) or target.name not in ctx.labels:
        raise ctx.unsupported(ins, f"branches to `{target}`, which is not a label of this kernel")
    return None, Control.BRANCH, ctx.labels[target.name]


@impl("exit")
def _exit(ctx: CompileContext, ins: ir.Instruction):
    return None, Control.EXIT, -1


@impl("trap", "brkpt")
def _trap(ctx: CompileContext, ins: ir.Instruction):

    def run(b, lanes):
        raise _Trap(int(lanes[0]), f"`{ins.opcode}` executed")
    return run, Control.NEXT, -1


class _Trap(Exception):
    def __init__(self, lane: int, message: str) -> None:
        super().__init__(message)
        self.lane, self.message = lane, message


@impl("brx.idx")
def _brx_idx(ctx: CompileContext, ins: ir.Instruction):
    """`brx.idx{.uni} index, tlist;` (§9.7.12.2): jump to the index-th label of a `.branchtargets`
    list.  An index past the list is undefined in the ISA; here it is a fault."""
    index, tlist = ins.operands[0], ins.operands[1]
    targets = ctx.branch_targets.get(tlist.name) if isinstance(tlist, ir.Symbol) else None
    if targets is None or any(t not in ctx.labels for t in targets):
        raise ctx.unsupported(ins, f"branches through `{tlist}`, which is not a `.branchtargets` list of labels")
    pcs = np.array([ctx.labels[t] for t in targets], dtype=np.int64)
    idx = reader(ctx, index, ScalarType.U32, ins)

    def run(b, lanes):
        i = idx(b, lanes).astype(np.int64)
        bad = i >= pcs.size
        if bad.any():
            k = int(np.argmax(bad))
            raise _Trap(int(lanes[k]), f"`brx.idx` index {int(i[k])} is past the {pcs.size} targets of `{tlist}`")
        return pcs[i]
    return run, Control.JUMP, -1


@impl("nanosleep")
def _nanosleep(ctx, ins):
    # Sleeping is a scheduling hint; the sequential executor has no one to yield to.
    return (lambda b, lanes: None), 0, -1
