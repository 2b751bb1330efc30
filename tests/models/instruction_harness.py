"""Harness of the interpreter's instruction tests: one PTX instruction body in a kernel of NT threads, launched on numpy arrays (run)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import ptxvm

from models.intops import type_bits

NT = 64                         # threads per block


UDT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


@functools.lru_cache(maxsize=None)
def cached_module(text: str) -> "ptxvm.Module":
    return ptxvm.Module(text)


def kernel_text(body: str, srcs, dsts, decls: str = "") -> str:
    """A kernel `k(pa0.., pd0..)`: sources ``srcs`` and destinations ``dsts`` are
    ``(register, register type, memory type)``; each is loaded from element ``gid``
    of its array (destinations too: their initial values), ``body`` runs, the
    destinations are stored back.  8-bit memory types live in 16-bit registers
    (as nvcc does); predicates travel as u8 0/1."""
    params = [f".param .u64 pa{i}" for i in range(len(srcs))] + [f".param .u64 pd{i}" for i in range(len(dsts))]
    lines = [HEADER, f".visible .entry k({', '.join(params)})", "{",
             "  .reg .b32 %gid, %gx; .reg .b64 %adr, %off, %base; .reg .u16 %h8; .reg .pred %ptmp;"]
    for name, rt, _ in list(srcs) + list(dsts):
        lines.append(f"  .reg .{rt} {name};")
    if decls:
        lines.append(decls)
    lines += ["  mov.u32 %gid, %tid.x;", "  mov.u32 %gx, %ctaid.x;", "  mad.lo.u32 %gid, %gx, %ntid.x, %gid;"]

    def addr(pname, mt):
        size = max(type_bits(mt), 8) // 8
        return [f"  ld.param.u64 %base, [{pname}];", f"  mul.wide.u32 %off, %gid, {size};",
                "  add.s64 %adr, %base, %off;"]

    def load(pname, name, rt, mt):
        out = addr(pname, mt)
        if rt == "pred":
            out += ["  ld.global.u8 %h8, [%adr];", f"  setp.ne.u16 {name}, %h8, 0;"]
        else:
            out.append(f"  ld.global.{mt} {name}, [%adr];")
        return out

    for i, (name, rt, mt) in enumerate(srcs):
        lines += load(f"pa{i}", name, rt, mt)
    for i, (name, rt, mt) in enumerate(dsts):
        lines += load(f"pd{i}", name, rt, mt)
    lines += ["  " + ln.strip() for ln in body.strip().splitlines()]
    for i, (name, rt, mt) in enumerate(dsts):
        lines += addr(f"pd{i}", mt)
        if rt == "pred":
            lines += [f"  selp.u16 %h8, 1, 0, {name};", "  st.global.u8 [%adr], %h8;"]
        else:
            lines.append(f"  st.global.{mt} [%adr], {name};")
    lines += ["  ret;", "}", ""]
    return "\n".join(lines)


def _norm(spec):
    """(name, regtype[, memtype]) -> (name, regtype, memtype)."""
    name, rt = spec[0], spec[1]
    mt = spec[2] if len(spec) > 2 else ("u8" if rt == "pred" else rt)
    return name, rt, mt


def run(body, srcs, dsts, values, init=None, decls="", n=None, block=NT, skip_unsupported=True):
    """Launch and return the destinations' final raw bits (lists of Python ints).

    ``values``: one list of raw ints per source (cycled to ``n`` lanes);
    ``init``: one list per destination (default: a recognisable pattern)."""
    srcs = [_norm(s) for s in srcs]
    dsts = [_norm(d) for d in dsts]
    n = n or max([block] + [len(v) for v in values])
    n = -(-n // block) * block
    arrays = []
    for (_, _, mt), vals in zip(srcs, values):
        w = max(type_bits(mt), 8)
        arrays.append(np.array([vals[i % len(vals)] & ((1 << w) - 1) for i in range(n)], dtype=UDT[w]))
    if init is None:
        init = [[(0x5A5A5A5A5A5A5A5A + i) & 1 if rt == "pred" else 0x5A5A5A5A5A5A5A5A + i for i in range(n)]
                for _, rt, _ in dsts]
    outs = []
    for (_, _, mt), vals in zip(dsts, init):
        w = max(type_bits(mt), 8)
        outs.append(np.array([vals[i % len(vals)] & ((1 << w) - 1) for i in range(n)], dtype=UDT[w]))
    text = kernel_text(body, srcs, dsts, decls)
    try:
        cached_module(text)["k"](n // block, block, tuple(arrays + outs))
    except ptxvm.UnsupportedError as e:
        if not skip_unsupported:
            raise
        pytest.skip(f"unsupported: {e}")
    return [[int(x) for x in o] for o in outs], arrays
