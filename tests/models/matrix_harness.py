"""PTX kernels of the tensor-core instruction tests (tests/interp/test_matrix_*.py): each lane
loads its fragment registers from global memory, runs one instruction, stores its results.
Executors the tests run on: EXECUTORS (the host JIT joins when its tensor-core lowering lands)."""

from __future__ import annotations

import functools

import numpy as np

import ptxvm

from models import fragments as M

EXECUTORS = ("interp", "cpu")

HEADER = ".version 8.7\n.target sm_90\n.address_size 64\n"


@functools.lru_cache(maxsize=None)
def module(text: str) -> ptxvm.Module:
    return ptxvm.Module(text)


def reg_type(elem: str, role: str) -> str:
    if elem == "f64":
        return "f64"
    return "f32" if elem == "f32" and role in ("c", "d") else "b32"


def vec(name: str, n: int) -> str:
    return "{" + ", ".join(f"%{name}{i}" for i in range(n)) + "}"


def lane_loads(name: str, n: int, rt: str, param: str) -> list[str]:
    """Registers %name0.. of this thread from param + (gid * n + i) * size."""
    size = 8 if rt == "f64" else 4
    out = [f"  ld.param.u64 %base, [{param}];", f"  mul.wide.u32 %off, %gid, {n * size};",
           "  add.s64 %adr, %base, %off;"]
    out += [f"  ld.global.{rt} %{name}{i}, [%adr+{i * size}];" for i in range(n)]
    return out


def lane_stores(name: str, n: int, rt: str, param: str) -> list[str]:
    size = 8 if rt == "f64" else 4
    out = [f"  ld.param.u64 %base, [{param}];", f"  mul.wide.u32 %off, %gid, {n * size};",
           "  add.s64 %adr, %base, %off;"]
    out += [f"  st.global.{rt} [%adr+{i * size}], %{name}{i};" for i in range(n)]
    return out


def register_kernel(body: str, ins: list[tuple[str, int, str]], outs: list[tuple[str, int, str]],
                    decls: str = "") -> str:
    """A kernel k(p_<in>..., p_<out>...): every thread loads the registers of ``ins`` ((name,
    count, register type)) from its slice of its array, runs ``body``, stores ``outs``."""
    params = [f".param .u64 p_{n}" for n, _, _ in ins + outs]
    lines = [HEADER, f".visible .entry k({', '.join(params)})", "{",
             "  .reg .b32 %gid, %gx; .reg .b64 %adr, %off, %base;"]
    lines += [f"  .reg .{rt} %{n}<{c}>;" for n, c, rt in ins + outs] + ([decls] if decls else [])
    lines += ["  mov.u32 %gid, %tid.x;", "  mov.u32 %gx, %ctaid.x;", "  mad.lo.u32 %gid, %gx, %ntid.x, %gid;"]
    for n, c, rt in ins:
        lines += lane_loads(n, c, rt, f"p_{n}")
    lines += ["  " + ln.strip() for ln in body.strip().splitlines()]
    for n, c, rt in outs:
        lines += lane_stores(n, c, rt, f"p_{n}")
    lines += ["  ret;", "}"]
    return "\n".join(lines) + "\n"


def np_regs(regs: np.ndarray, rt: str) -> np.ndarray:
    """[..., 32, n] register values as the array a kernel reads (uint32 or uint64)."""
    return np.ascontiguousarray(regs.astype(np.uint64 if rt == "f64" else np.uint32))


def run(text: str, arrays: list[np.ndarray], threads: int, executor: str, blocks: int = 1) -> None:
    module(text)["k"](blocks, threads, tuple(arrays), device=executor)


def exact_values(rng: np.random.Generator, elem: str, shape: tuple[int, ...]) -> np.ndarray:
    """Random values of ``elem`` small enough that every product and sum of the tests is exact."""
    lo, hi = {"s8": (-128, 127), "u8": (0, 255), "s4": (-8, 7), "u4": (0, 15), "b1": (0, 1),
              "s32": (-1000000, 1000000)}.get(elem, (-3, 3))
    if elem in ("f16", "bf16", "tf32", "f32", "f64", "e4m3", "e5m2") and len(shape) and elem != "f32":
        return rng.integers(lo, hi + 1, shape).astype(np.float64)
    if elem == "f32":
        return rng.integers(-8, 9, shape).astype(np.float64)
    return rng.integers(lo, hi + 1, shape).astype(np.int64)


def lanes_of(matrix: np.ndarray, coords: np.ndarray) -> np.ndarray:
    """[W, rows, cols] -> [W, 32, n] each lane's elements at ``coords`` [32, n, 2]."""
    return matrix[:, coords[..., 0], coords[..., 1]]


__all__ = ["EXECUTORS", "HEADER", "module", "reg_type", "vec", "register_kernel", "np_regs", "run",
           "exact_values", "lanes_of", "M"]
