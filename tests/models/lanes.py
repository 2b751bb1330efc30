"""One instruction body run by many threads, each on its own inputs, on a chosen executor: every
thread loads its source registers from element `gid` of one array per source and stores its
destinations to one array per destination (tests of single instruction forms over many inputs)."""

from __future__ import annotations

import functools

import numpy as np

import ptxvm

from models.instruction_harness import UDT, kernel_text
from models.intops import type_bits

BLOCK = 128


@functools.lru_cache(maxsize=None)
def _module(text: str) -> "ptxvm.Module":
    return ptxvm.Module(text)


def run_lanes(body: str, srcs, dsts, values, device: str, decls: str = "", target: str = "sm_100a") -> list[np.ndarray]:
    """``srcs``/``dsts``: (register, register type[, memory type]); ``values``: one sequence of
    raw ints per source, all of one length n.  Returns the destinations' raw bits (n each)."""
    srcs = [(s[0], s[1], s[2] if len(s) > 2 else s[1]) for s in srcs]
    dsts = [(d[0], d[1], d[2] if len(d) > 2 else d[1]) for d in dsts]
    n = len(values[0])
    total = -(-n // BLOCK) * BLOCK
    arrays = []
    for (_, _, mt), vals in zip(srcs, values):
        w = max(type_bits(mt), 8)
        a = np.zeros(total, dtype=UDT[w])
        a[:n] = np.asarray(vals, dtype=np.uint64).astype(UDT[w])
        arrays.append(a)
    outs = [np.zeros(total, dtype=UDT[max(type_bits(mt), 8)]) for _, _, mt in dsts]
    text = kernel_text(body, srcs, dsts, decls).replace(".version 8.0\n.target sm_80", f".version 8.7\n.target {target}")
    _module(text)["k"](total // BLOCK, BLOCK, tuple(arrays + outs), device=device)
    return [o[:n] for o in outs]
