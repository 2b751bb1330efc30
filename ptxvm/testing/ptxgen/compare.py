"""Compare the outputs of generated kernels across executors, and explain differences.

Every output word must be bit-identical, except the results in the ``apx``
records, which only have to lie within the error bound the PTX ISA states
for their instruction (:data:`ptxvm.interp.numerics.approx.APPROX_BOUNDS`).
"""

from __future__ import annotations

import math

import numpy as np

from ...interp.numerics.approx import APPROX_BOUNDS
from .program import GLOBAL_COUNTER_OPS, OWN_WORDS, SHARED_COUNTER_OPS, SMEM_WORDS, Layout, pool_order

# Approximations APPROX_BOUNDS has no entry for.  The f64 seeds' accuracy is not
# stated there; we hold them to f32-class accuracy (relative 2**-22), which is
# an assumption of this fuzzer, not a quotation of the ISA.
LOCAL_BOUNDS = {
    "rsqrt.f64": {"metric": "rel", "bounds": [((0.0, math.inf), 2.0**-22)]},
    "rsqrt.approx.ftz.f64": {"metric": "rel", "bounds": [((0.0, math.inf), 2.0**-22)]},
    "rcp.approx.ftz.f64": {"metric": "rel", "bounds": [((-math.inf, math.inf), 2.0**-22)]},
}
F64_KEYS = ("rsqrt.f64", "rsqrt.approx.ftz.f64", "rcp.approx.ftz.f64")
ARG_NAMES = ("in", "out", "mem", "apx")


def listing(ptx: str) -> str:
    lines = ptx.rstrip("\n").split("\n")
    width = len(str(len(lines)))
    return "\n".join(f"{i + 1:>{width}}  {s}" for i, s in enumerate(lines))


def describe(layout: Layout, arg: int, index: int) -> str:
    """What an output word is: which register/slot/counter of which thread."""
    T = layout.threads

    def thread(g: int) -> str:
        return f"thread {g % layout.nt} of CTA {g // layout.nt}"
    if arg == 1:
        regs = pool_order()
        if index < len(regs) * T:
            cls, i = regs[index // T]
            return f"register %{cls}{i} of {thread(index % T)}"
        index -= len(regs) * T
        if index < SMEM_WORDS * T:
            return f"shared slot word {index // T} of {thread(index % T)}"
        index -= SMEM_WORDS * T
        op, t = SHARED_COUNTER_OPS[index % len(SHARED_COUNTER_OPS)]
        return f"shared counter {index % len(SHARED_COUNTER_OPS)} ({op}.{t}) of CTA {index // len(SHARED_COUNTER_OPS)}"
    if arg == 2:
        if index < OWN_WORDS * T:
            return f"global slot word {index % OWN_WORDS} of {thread(index // OWN_WORDS)}"
        k = index - OWN_WORDS * T
        op, t = GLOBAL_COUNTER_OPS[k]
        return f"global counter {k} ({op}.{t})"
    if arg == 3:
        slot, rest = divmod(index, 3 * T)
        part, g = divmod(rest, T)
        return f".approx record {slot} {('source a', 'source b', 'result')[part]} of {thread(g)}"
    return f"word {index}"


def compare_runs(gk, runs: dict[str, tuple]) -> list[str]:
    """Problems found comparing every executor with the first one (empty: agreement)."""
    if len(runs) < 2:
        return []
    names = list(runs)
    ref_name, ref = names[0], runs[names[0]]
    layout = Layout(gk.grid, gk.block)
    problems = []
    for name in names[1:]:
        other = runs[name]
        for i in gk.outputs:
            if i == gk.approx_arg:
                problems += _compare_approx(gk, layout, ref[i], other[i], ref_name, name)
                continue
            a, b = ref[i].view(np.uint64), other[i].view(np.uint64)
            diff = np.flatnonzero(a != b)
            if diff.size:
                k = int(diff[0])
                problems.append(f"{ARG_NAMES[i]}[{k}] ({describe(layout, i, k)}): {ref_name} 0x{int(a[k]):016x}, "
                                f"{name} 0x{int(b[k]):016x} ({diff.size} words differ)")
    return problems


def _bound(key: str):
    spec = APPROX_BOUNDS.get(key) or LOCAL_BOUNDS.get(key)
    if spec is None:
        raise KeyError(f"no error bound for `{key}`: add the PTX ISA's bound to LOCAL_BOUNDS before "
                       "generating this approximation")
    return spec


def _floats(words: np.ndarray, f64: bool) -> np.ndarray:
    if f64:
        return words.view(np.float64)
    with np.errstate(invalid="ignore"):      # NaN payloads survive the widening; nobody reads them
        return (words & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32).astype(np.float64)


def _ulps(x: np.ndarray, y: np.ndarray, f64: bool) -> np.ndarray:
    """Distance in units in the last place between floats of the result format
    (on Python ints: the ordered bit patterns of f64 overflow int64 arithmetic)."""
    xb = x.view(np.uint64).tolist() if f64 else x.astype(np.float32).view(np.uint32).tolist()
    yb = y.view(np.uint64).tolist() if f64 else y.astype(np.float32).view(np.uint32).tolist()
    sign = 1 << (63 if f64 else 31)

    def ordered(b: int) -> int:
        return -(b & (sign - 1)) if b & sign else b
    return np.array([abs(ordered(a) - ordered(b)) for a, b in zip(xb, yb)], dtype=np.float64)


def _compare_approx(gk, layout: Layout, ref: np.ndarray, other: np.ndarray, ref_name: str, name: str) -> list[str]:
    """The sources must match bit for bit; results within the ISA's bound for that source."""
    T = layout.threads
    problems = []
    for slot, key in enumerate(gk.approx_ops):
        rec = slice(slot * 3 * T, (slot + 1) * 3 * T)
        ra, oa = ref[rec].reshape(3, T), other[rec].reshape(3, T)
        bad = np.flatnonzero((ra[:2] != oa[:2]).any(axis=0))
        if bad.size:
            g = int(bad[0])
            problems.append(f"apx record {slot} ({key}) sources differ for thread {g}: "
                            f"{ref_name} {[hex(int(v)) for v in ra[:2, g]]}, {name} {[hex(int(v)) for v in oa[:2, g]]}")
            continue
        f64 = key in F64_KEYS
        x, y = _floats(ra[2], f64), _floats(oa[2], f64)
        src = _floats(ra[1] if key == "div.approx" else ra[0], f64)
        spec = _bound(key)
        ok = (ra[2] == oa[2]) | (np.isnan(x) & np.isnan(y))
        checked = np.zeros(T, dtype=bool)
        mag = np.abs(src) if key == "div.approx" else src
        # The ranges in order (the first holding the source applies), then those of the ISA's
        # bound in another metric for the inputs outside them (lg2: relative outside (0.5, 2)).
        parts = [(spec["metric"], r) for r in spec["bounds"]]
        parts += [(spec["else"]["metric"], r) for r in spec.get("else", {}).get("bounds", [])]
        for metric, ((lo, hi), bound) in parts:
            inside = ~checked & (mag >= lo) & (mag <= hi)
            checked |= inside
            with np.errstate(all="ignore"):
                if metric == "ulp":
                    good = _ulps(x, y, f64) <= bound
                elif metric == "abs":
                    good = np.abs(x - y) <= bound
                else:
                    good = np.abs(x - y) <= bound * np.abs(x)
            good &= np.isfinite(x) == np.isfinite(y)
            ok |= inside & good
        # Outside every stated range the ISA bounds nothing: only NaN-ness must agree.
        ok |= ~checked & (np.isnan(x) == np.isnan(y))
        wrong = np.flatnonzero(~ok)
        if wrong.size:
            g = int(wrong[0])
            problems.append(f"apx record {slot} ({key}, {spec['metric']} bound) thread {g}: source "
                            f"0x{int(ra[0, g]):x}, {ref_name} {x[g]!r} (0x{int(ra[2, g]):x}), {name} {y[g]!r} "
                            f"(0x{int(oa[2, g]):x}) ({wrong.size} results out of bound)")
    return problems
