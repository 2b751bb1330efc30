"""Test harness for lifter emitters: JIT an emitter into an elementwise loop over numpy arrays.

    f = elementwise(lambda b, x, y: fp.fadd(b, x, y, rnd="rz"), ["f32", "f32"], "f32")
    out = f(a_bits, b_bits)       # numpy arrays of raw bits (uint32 for f32) -> raw bits

Inputs and outputs are raw bit patterns (``uint8..uint64`` arrays) so NaN payloads and
signed zeros survive the round trip.  Compiled in-process with MCJIT: tests only.
"""

from __future__ import annotations

import ctypes
from typing import Callable, Sequence

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

llvm.initialize_native_target()
llvm.initialize_native_asmprinter()

_ENGINES: list = []   # keep engines alive while their functions may be called


def ll_type(t: str) -> ir.Type:
    """PTX type name -> the emitter convention's LLVM type."""
    if t == "f32":
        return ir.FloatType()
    if t == "f64":
        return ir.DoubleType()
    if t in ("f16", "bf16"):
        return ir.IntType(16)
    if t in ("f16x2", "bf16x2"):
        return ir.IntType(32)
    if t == "pred":
        return ir.IntType(1)
    return ir.IntType(int("".join(c for c in t if c.isdigit())))


def storage_bits(t: str) -> int:
    ty = ll_type(t)
    if isinstance(ty, ir.FloatType):
        return 32
    if isinstance(ty, ir.DoubleType):
        return 64
    return max(8, 1 << (ty.width - 1).bit_length()) if ty.width > 1 else 8


_NP = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def elementwise(emit: Callable[..., ir.Value], in_types: Sequence[str], out_type: str,
                opt: int = 2) -> Callable[..., np.ndarray]:
    """Compile ``emit`` (builder, *llvm values) -> llvm value into ``f(*bit_arrays) -> bit_array``."""
    mod = ir.Module(name="emitter_test")
    i64 = ir.IntType(64)
    ptr = ir.PointerType(ir.IntType(8))
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i64] + [ptr] * (len(in_types) + 1)), "f")
    entry, loop, done = fn.append_basic_block("entry"), fn.append_basic_block("loop"), fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    n = fn.args[0]
    b.cbranch(b.icmp_signed(">", n, i64(0)), loop, done)
    b.position_at_end(loop)
    i = b.phi(i64)
    i.add_incoming(i64(0), entry)
    args = []
    for k, t in enumerate(in_types):
        sb = storage_bits(t)
        p = b.gep(b.bitcast(fn.args[1 + k], ir.PointerType(ir.IntType(sb))), [i])
        raw = b.load(p)
        ty = ll_type(t)
        if isinstance(ty, (ir.FloatType, ir.DoubleType)):
            v = b.bitcast(raw, ty)
        elif ty.width < sb:
            v = b.trunc(raw, ty)
        else:
            v = raw
        args.append(v)
    res = emit(b, *args)
    sb = storage_bits(out_type)
    oty = ll_type(out_type)
    if isinstance(oty, (ir.FloatType, ir.DoubleType)):
        res = b.bitcast(res, ir.IntType(sb))
    elif oty.width < sb:
        res = b.zext(res, ir.IntType(sb))
    b.store(res, b.gep(b.bitcast(fn.args[-1], ir.PointerType(ir.IntType(sb))), [i]))
    nxt = b.add(i, i64(1))
    i.add_incoming(nxt, b.block)
    b.cbranch(b.icmp_signed("<", nxt, n), loop, done)
    b.position_at_end(done)
    b.ret_void()

    tm = llvm.Target.from_default_triple().create_target_machine(opt=opt)
    m = llvm.parse_assembly(str(mod))
    m.verify()
    if opt:
        pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=opt))
        pb.getModulePassManager().run(m, pb)
    ee = llvm.create_mcjit_compiler(m, tm)
    ee.finalize_object()
    _ENGINES.append(ee)
    cf = ctypes.CFUNCTYPE(None, ctypes.c_int64, *[ctypes.c_void_p] * (len(in_types) + 1))(
        ee.get_function_address("f"))
    in_np = [_NP[storage_bits(t)] for t in in_types]
    out_np = _NP[storage_bits(out_type)]

    def call(*arrays) -> np.ndarray:
        arrs = [np.ascontiguousarray(np.asarray(a).astype(dt, copy=False)) for a, dt in zip(arrays, in_np)]
        n = max(a.size for a in arrs) if arrs else 1
        arrs = [np.ascontiguousarray(np.broadcast_to(a, (n,))) for a in arrs]
        out = np.zeros(n, out_np)
        cf(n, *[a.ctypes.data for a in arrs], out.ctypes.data)
        return out

    call.llvm_ir = str(mod)   # type: ignore[attr-defined]
    return call


def multi(variants, in_types, opt: int = 0):
    """JIT ``f(which, *xs)`` = ``variants[which](b, *xs)`` zero-extended to u64 (switch dispatch)."""
    def emit(b: ir.IRBuilder, which, *xs):
        fn = b.function
        merge, dflt = fn.append_basic_block("merge"), fn.append_basic_block("dflt")
        sw = b.switch(which, dflt)
        res = []
        for k, v in enumerate(variants):
            blk = fn.append_basic_block(f"v{k}")
            sw.add_case(ir.Constant(which.type, k), blk)
            b.position_at_end(blk)
            r = v(b, *xs)
            if isinstance(r.type, (ir.FloatType, ir.DoubleType)):
                r = b.bitcast(r, ir.IntType(32 if isinstance(r.type, ir.FloatType) else 64))
            if r.type.width < 64:
                r = b.zext(r, ir.IntType(64))
            res.append((r, b.block))
            b.branch(merge)
        b.position_at_end(dflt)
        b.branch(merge)
        b.position_at_end(merge)
        phi = b.phi(ir.IntType(64))
        for r, blk in res:
            phi.add_incoming(r, blk)
        phi.add_incoming(ir.Constant(ir.IntType(64), 0), dflt)
        return phi
    f = elementwise(emit, ["u32"] + list(in_types), "u64", opt=opt)

    def run(k: int, *arrays) -> list[int]:
        return [int(v) for v in f(np.full(len(arrays[0]), k, np.uint32), *arrays)]
    return run
