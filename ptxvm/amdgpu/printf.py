"""CUDA's device printf (`vprintf(fmt, args)`) on AMD GPUs, through the code object v5 printf
buffer that ROCm's runtime allocates, reads and prints after the kernel (OpenCL's buffered
printf, which LLVM's AMDGPUPrintfRuntimeBinding pass also emits):

* the buffer is ``hidden_printf_buffer`` (implicit argument at offset 72): a header ``u32 used``
  (bytes of records so far), ``u32 size`` (the whole buffer's bytes), then records from byte 8.
  Space is reserved with a compare-and-swap on ``used`` that never lets ``8 + used`` pass
  ``size`` (ROCm-Device-Libs' ``__printf_alloc``); a full buffer drops the record and vprintf
  returns -1 (0 otherwise);
* a record is the format's printf id (u32) and then each argument in turn, in as many bytes as
  the metadata says, with no padding: 4 for ``int``-sized conversions, 8 for ``l``/``ll``/``z``/
  ``j``/``t`` integers, floating point (CUDA passes doubles) and ``%p``, and ``STRING_BYTES``
  for ``%s``: the string's bytes, cut at ``STRING_BYTES - 1``, NUL-padded;
* ``amdhsa.printf`` (from the module's ``llvm.printf.fmts``) lists one string per format:
  ``"<id>:<argument count>:<size 1>:...:<size n>:<format>"``, the format with ``\\n \\a \\b \\f
  \\r \\v`` escaped and ``:`` written ``\\72``.

The format must be a module constant (nvcc's ``$str`` arrays): the call compares the format
address with the module's initialised byte strings (those the function names, else all) and
writes the matching format's record; any other address traps (the dispatch aborts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llvmlite import ir

from ..ir import nodes as ptx
from ..ir.types import StateSpace
from ..lift.function import FunctionLowering
from .llvm_ext import FLAT, GLOBAL, I8, I32, I64, ScopedCmpXchg, ScopedLoadAtomic, ptr

PRINTF_BUFFER_ARG = 72        # code object v5 implicit argument offset of hidden_printf_buffer
HEADER_BYTES = 8
STRING_BYTES = 128
_SPEC = re.compile(r"%[-+ #0]*(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfFgGaAcspn%])")
_ESCAPES = {"\n": "\\n", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\r": "\\r", "\v": "\\v", ":": "\\72"}


@dataclass(frozen=True)
class Arg:
    conv: str                 # the conversion character
    cuda_size: int            # bytes (and alignment) in CUDA's vprintf argument buffer
    size: int                 # bytes in the AMD record


@dataclass(frozen=True)
class Format:
    name: str                 # the module variable holding it
    text: str
    args: tuple[Arg, ...]

    @property
    def record_bytes(self) -> int:
        return 4 + sum(a.size for a in self.args)


def parse_format(name: str, text: str) -> Format | str:
    """The arguments a format takes, or why it cannot be translated."""
    args = []
    for m in _SPEC.finditer(text):
        width, prec, length, conv = m.groups()
        if conv == "%":
            continue
        if "*" in (width, prec) or conv == "n":
            return f"uses `{m.group(0)}`, which AMD's buffered printf cannot take"
        cuda = 8 if conv in "eEfFgGaAsp" or length in ("ll", "l", "z", "j", "t") else 4
        args.append(Arg(conv, cuda, STRING_BYTES if conv == "s" else cuda))
    return Format(name, text, tuple(args))


def metadata_string(ident: int, f: Format) -> str:
    sizes = "".join(f"{a.size}:" for a in f.args)
    return f"{ident}:{len(f.args)}:{sizes}" + "".join(_ESCAPES.get(c, c) for c in f.text)


def _candidates(h, fl: FunctionLowering) -> list[tuple[str, str]]:
    """(variable, text) of the module's initialised byte strings, those this function names
    first (nvcc's `$str`: the format is almost always taken here)."""
    out = []
    for name, d in h.layout.variables.items():
        if d.init is None or d.type.bits != 8 or d.space not in (StateSpace.GLOBAL, StateSpace.CONST):
            continue
        size = d.size_bytes()
        raw = h._initial_bytes(d, size) if size else b""
        if not raw or raw[-1] != 0:
            continue
        out.append((name, raw[:raw.index(0)].decode("utf-8", "replace")))
    named = {n for ins in fl.fn.body.instructions() for op in ins.operands for n in _names(op)}
    near = [c for c in out if c[0] in named]
    return near or out


def _names(op):
    name = getattr(op, "name", None)
    if isinstance(name, str):
        yield name
    for attr in ("base", "operand"):
        inner = getattr(op, attr, None)
        if inner is not None:
            yield from _names(inner)


def _format_id(h, name: str, text: str, fl, ins) -> tuple[int, Format]:
    known = h.printf_ids.get(name)
    if known is not None:
        return known
    f = parse_format(name, text)
    if isinstance(f, str):
        raise fl.unsupported(ins, f"prints the format `{name}`, which {f}")
    h.printf_formats.append(metadata_string(len(h.printf_formats) + 1, f))
    h.printf_ids[name] = (len(h.printf_formats), f)
    return h.printf_ids[name]


def _param_value(fl: FunctionLowering, ins, op) -> ir.Value:
    buf = fl.param_buffer(op.name) if isinstance(op, ptx.Symbol) else None
    if buf is None:
        raise fl.unsupported(ins, f"passes `{op}`, which is not a `.param` variable")
    return fl.b.load(fl.b.bitcast(buf, ptr(buf.type.addrspace, I64)))


def lower_vprintf(h, fl: FunctionLowering, ins: ptx.Instruction, rets, args) -> None:
    if len(args) != 2:
        raise fl.unsupported(ins, "calls `vprintf` with other than its two arguments (format, argument buffer)")
    b = fl.b
    fmt, argbuf = (_param_value(fl, ins, a) for a in args)
    candidates = _candidates(h, fl)
    if not candidates:
        raise fl.unsupported(ins, "calls `vprintf`, and the module holds no constant format string: AMD's "
                                  "buffered printf needs the format at translation time")
    done = fl.new_block("printf_done")
    status = []
    for name, text in candidates:
        ident, f = _format_id(h, name, text, fl, ins)
        hit, miss = fl.new_block(f"printf_{ident}"), fl.new_block("printf_next")
        b.cbranch(b.icmp_unsigned("==", fmt, h.symbol_address(fl, name, None, ins)), hit, miss)
        b.position_at_end(hit)
        status.append((_write_record(h, fl, ident, f, argbuf), b.block))
        b.branch(done)
        b.position_at_end(miss)
    h._trap(fl)                      # a format that is no module constant
    b.position_at_end(done)
    result = b.phi(I32)
    for v, blk in status:
        result.add_incoming(v, blk)
    if rets:
        buf = fl.param_buffer(rets[0].name)
        b.store(result, b.bitcast(buf, ptr(buf.type.addrspace, I32)))


def _write_record(h, fl: FunctionLowering, ident: int, f: Format, argbuf: ir.Value) -> ir.Value:
    """Reserve ``f``'s record and fill it; i32 0, or -1 when the buffer is absent or full."""
    b = fl.b
    base = b.inttoptr(h._implicit(fl, PRINTF_BUFFER_ARG, I64), ptr(GLOBAL, I8))
    used = b.bitcast(base, ptr(GLOBAL, I32))
    start = b.block
    have = fl.new_block("printf_have_buffer")
    out = fl.new_block("printf_out")
    b.cbranch(b.icmp_unsigned("!=", b.ptrtoint(base, I64), I64(0)), have, out)
    b.position_at_end(have)
    size = b.load(b.gep(used, [I32(1)]))
    first = ScopedLoadAtomic(b.block, used, "monotonic", 4, "")
    first.scope = "agent"
    b._insert(first)
    loop, room, write = fl.new_block("printf_reserve"), fl.new_block("printf_room"), fl.new_block("printf_write")
    b.branch(loop)
    b.position_at_end(loop)
    off = b.phi(I32)
    off.add_incoming(first, have)
    end = b.add(off, I32(f.record_bytes))
    fits = b.icmp_unsigned("<=", b.add(end, I32(HEADER_BYTES)), size)
    full_block = b.block
    b.cbranch(fits, room, out)
    b.position_at_end(room)
    cas = ScopedCmpXchg(b.block, used, off, end, "monotonic", "monotonic", "")
    cas.scope = "agent"
    b._insert(cas)
    off.add_incoming(b.extract_value(cas, 0), room)
    b.cbranch(b.extract_value(cas, 1), write, loop)
    b.position_at_end(write)
    rec = b.gep(base, [b.zext(b.add(off, I32(HEADER_BYTES)), I64)])
    _store(b, rec, 0, I32(ident))
    at, cuda_at = 4, 0
    src = b.inttoptr(argbuf, ptr(FLAT, I8))
    for a in f.args:
        cuda_at = (cuda_at + a.cuda_size - 1) // a.cuda_size * a.cuda_size
        v = b.load(b.bitcast(b.gep(src, [I64(cuda_at)]), ptr(FLAT, ir.IntType(8 * a.cuda_size))))
        v.align = a.cuda_size
        if a.conv == "s":
            _copy_string(fl, b.gep(rec, [I64(at)]), v)
        else:
            _store(b, rec, at, v)
        at, cuda_at = at + a.size, cuda_at + a.cuda_size
    wrote = b.block
    b.branch(out)
    b.position_at_end(out)
    r = b.phi(I32)
    r.add_incoming(I32(-1), start)
    r.add_incoming(I32(-1), full_block)
    r.add_incoming(I32(0), wrote)
    return r


def _store(b: ir.IRBuilder, rec: ir.Value, at: int, v: ir.Value) -> None:
    p = b.bitcast(b.gep(rec, [I64(at)]) if at else rec, ptr(GLOBAL, v.type))
    s = b.store(v, p)
    s.align = 4                  # records pack arguments at 4-byte steps


def _copy_string(fl: FunctionLowering, dst: ir.Value, addr: ir.Value) -> None:
    """The NUL-terminated string at generic ``addr`` into ``STRING_BYTES`` bytes at ``dst``: cut
    one byte short of them, NUL-padded (a null pointer prints as the empty string)."""
    b = fl.b
    src = b.inttoptr(addr, ptr(FLAT, I8))
    non_null = b.icmp_unsigned("!=", addr, I64(0))
    entry = b.block
    loop, body, done = fl.new_block("printf_str"), fl.new_block("printf_str_byte"), fl.new_block("printf_str_done")
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    live = b.phi(ir.IntType(1))            # no NUL read yet
    i.add_incoming(I64(0), entry)
    live.add_incoming(non_null, entry)
    b.cbranch(b.icmp_unsigned("<", i, I64(STRING_BYTES)), body, done)
    b.position_at_end(body)
    last = b.icmp_unsigned("==", i, I64(STRING_BYTES - 1))
    read = fl.new_block("printf_str_read")
    put = fl.new_block("printf_str_put")
    pre = b.block
    b.cbranch(b.and_(live, b.not_(last)), read, put)
    b.position_at_end(read)
    c_read = b.load(b.gep(src, [i]))
    read_end = b.block
    b.branch(put)
    b.position_at_end(put)
    c = b.phi(I8)
    c.add_incoming(I8(0), pre)
    c.add_incoming(c_read, read_end)
    b.store(c, b.gep(dst, [i]))
    i.add_incoming(b.add(i, I64(1)), put)
    live.add_incoming(b.icmp_unsigned("!=", c, I8(0)), put)
    b.branch(loop)
    b.position_at_end(done)
