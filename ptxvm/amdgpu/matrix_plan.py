"""Which AMD matrix instruction computes a PTX warp's mma, and where every operand element comes
from: the lane maps of isa/matrix_units.toml against the PTX fragment layouts
(ptxvm.machine.fragments). Pure data (numpy), no LLVM: ``ptxvm.amdgpu.matrix`` emits the code.

A warp's M x N x K product is tiled into the unit's m x n output tiles (zero padded up to a
multiple), ``blocks`` tiles per instruction ("a group"), and K into steps of k. For every
group, step, lane (0..31 of the PTX warp) and element of the instruction's A, B and C operands
the plan names its source in the PTX fragments: (lane, register, element in the register),
or nothing (a padding zero); for every element of the PTX D fragment, the (lane, group,
element) of the instruction result that holds it.
"""

from __future__ import annotations

import ast
import operator
import tomllib
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..machine import fragments as F
from ..resources import data_dir

WARP = 32
NONE = -1                         # source lane of a padding zero


@dataclass(frozen=True)
class Unit:
    """One matrix instruction (an entry of isa/matrix_units.toml)."""

    name: str
    intrinsic: str
    asm: str
    call: str                     # "mfma" | "wmma" | "wmma_iu8"
    ptx: tuple[str, ...]          # PTX A/B element types it computes exactly
    operand: str                  # its A/B element type: f16 bf16 f32 s8 i8
    acc: str                      # f32 | s32
    m: int
    n: int
    k: int
    blocks: int                   # independent output tiles per PTX warp
    maps: dict                    # role -> int32 [32, count, 3]: (block, x, y) per lane, element

    def count(self, role: str) -> int:
        return int(self.maps[role].shape[1])


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}


def _eval(expr: str, lane: int, e: int) -> int:
    """A lane-map expression: integers, `lane`, `e`, + - * // % (nothing else is evaluated)."""
    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id in ("lane", "e"):
            return lane if node.id == "lane" else e
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](walk(node.left), walk(node.right))
        raise ValueError(f"isa/matrix_units.toml: `{expr}` is not a lane-map expression")
    return walk(ast.parse(expr, mode="eval"))


_AXES = {"a": ("row", "k"), "b": ("k", "col"), "d": ("row", "col")}


def _lane_map(spec: dict, role: str) -> np.ndarray:
    x, y = _AXES[role]
    out = np.zeros((WARP, int(spec["count"]), 3), np.int32)
    for lane in range(WARP):
        for e in range(int(spec["count"])):
            out[lane, e] = [_eval(spec[key], lane, e) for key in ("block", x, y)]
    return out


@cache
def units() -> dict[str, Unit]:
    raw = tomllib.loads((data_dir("isa") / "matrix_units.toml").read_text(encoding="utf-8"))["units"]
    return {name: Unit(name, u["intrinsic"], u["asm"], u["call"], tuple(u["ptx"]), u["operand"], u["acc"],
                       int(u["m"]), int(u["n"]), int(u["k"]), int(u["blocks"]),
                       {r: _lane_map(u[r], r) for r in ("a", "b", "d")})
            for name, u in raw.items()}


def choose(names: tuple[str, ...], types: tuple[str, str, str, str]) -> Unit | None:
    """The first of ``names`` (a target's ``matrix_units``) that computes (dtype, atype,
    btype, ctype) exactly, or None."""
    dtype, atype, btype, ctype = types
    for name in names:
        u = units().get(name)
        if u is None:
            raise ValueError(f"a target names the matrix unit {name!r}, which isa/matrix_units.toml lacks")
        if atype not in u.ptx or btype not in u.ptx:
            continue
        if u.acc == "f32" and ctype in ("f32", "f16") and dtype in ("f32", "f16"):
            return u
        if u.acc == "s32" and ctype == dtype == "s32":
            return u
    return None


@dataclass(frozen=True)
class Plan:
    """Sources of every operand element of every instruction of one lowered mma.

    ``a``/``b``: int32 [groups, steps, 32, count, 3] (lane, register, element) in the PTX A/B
    fragment, lane NONE for a zero; ``c``: [groups, 32, count, 3] from the PTX C fragment;
    ``d``: [32, elements of the PTX D fragment, 3] (lane, group, element) in the results."""

    unit: Unit
    groups: int
    steps: int
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray


def _owners(frag: F.Fragment) -> dict[tuple[int, int], tuple[int, int]]:
    """(row, col) -> (lane, element) of the first holder (copy 0 of repeated wmma fragments)."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(WARP):
        for e in range(frag.elements):
            out.setdefault((int(frag.coords[lane, e, 0]), int(frag.coords[lane, e, 1])), (lane, e))
    return out


def _source(owners: dict, frag: F.Fragment, row: int, col: int) -> tuple[int, int, int]:
    hit = owners.get((row, col))
    if hit is None:
        return (NONE, 0, 0)
    lane, e = hit
    return (lane, e // frag.per_reg, e % frag.per_reg)


@cache
def plan(unit_name: str, op: str, shape: str, types: tuple[str, str, str, str]) -> Plan:
    u = units()[unit_name]
    dtype, atype, btype, ctype = types
    fa, fb = F.fragment(op, shape, "a", atype), F.fragment(op, shape, "b", btype)
    fc, fd = F.fragment(op, shape, "c", ctype), F.fragment(op, shape, "d", dtype)
    M, N, K = F.shape_mnk(shape)
    tiles_n = -(-N // u.n)
    tiles = -(-M // u.m) * tiles_n
    groups, steps = -(-tiles // u.blocks), -(-K // u.k)
    oa, ob, oc = _owners(fa), _owners(fb), _owners(fc)

    def tile_origin(g: int, block: int) -> tuple[int, int] | None:
        t = g * u.blocks + block
        return None if t >= tiles else ((t // tiles_n) * u.m, (t % tiles_n) * u.n)

    a = np.full((groups, steps, WARP, u.count("a"), 3), NONE, np.int32)
    b = np.full((groups, steps, WARP, u.count("b"), 3), NONE, np.int32)
    c = np.full((groups, WARP, u.count("d"), 3), NONE, np.int32)
    for g in range(groups):
        for lane in range(WARP):
            for e, (block, i, j) in enumerate(u.maps["d"][lane]):
                at = tile_origin(g, int(block))
                if at is not None:
                    c[g, lane, e] = _source(oc, fc, at[0] + i, at[1] + j)
            for s in range(steps):
                for e, (block, i, kk) in enumerate(u.maps["a"][lane]):
                    at = tile_origin(g, int(block))
                    if at is not None:
                        a[g, s, lane, e] = _source(oa, fa, at[0] + i, s * u.k + kk)
                for e, (block, kk, j) in enumerate(u.maps["b"][lane]):
                    at = tile_origin(g, int(block))
                    if at is not None:
                        b[g, s, lane, e] = _source(ob, fb, s * u.k + kk, at[1] + j)
    # Where each (group, block, row, col) of the results lies, then the PTX D lanes' elements.
    result: dict[tuple[int, int], tuple[int, int, int]] = {}
    for g in range(groups):
        for lane in range(WARP):
            for e, (block, i, j) in enumerate(u.maps["d"][lane]):
                at = tile_origin(g, int(block))
                if at is not None:
                    result.setdefault((at[0] + i, at[1] + j), (lane, g, e))
    d = np.zeros((WARP, fd.elements, 3), np.int32)
    for lane in range(WARP):
        for e in range(fd.elements):
            d[lane, e] = result[int(fd.coords[lane, e, 0]), int(fd.coords[lane, e, 1])]
    return Plan(u, groups, steps, a, b, c, d)
