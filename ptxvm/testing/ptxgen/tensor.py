"""Fuzzing the warp-level matrix instructions (PTX ISA 9.0 §9.7.14): kernels of one mma.sync
form (every shape x type combination of isa/matrix.toml, .satfinite, .xor/.and.popc), of one
mma.sp form (every [[mma_sp]] entry, selector and variant, with random defined metadata), an
ldmatrix (.x1/.x2/.x4, .trans, random row addresses) or a movmatrix, with random fragments.

Every lane loads its fragment registers from ``in`` (one 64-bit word of values.words per
register: float specials, NaN payloads, subnormals, integer boundaries, random bits), runs the
instruction with all 32 lanes of every warp, and stores its results to ``out``; the kernel is a
GeneratedKernel, so ``check_agreement`` compares executors on it. Off the default draws of
``kernels()``: tensor-core forms are not in every executor yet (the JIT refuses them, which
check_agreement allows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from ...machine import fragments as F
from . import GeneratedKernel
from .kernel import KERNEL, PTX_VERSION
from .values import words


@dataclass(frozen=True)
class MmaForm:
    shape: str
    atype: str
    btype: str
    ctype: str
    dtype: str
    extra: str = ""                      # ".satfinite", ".xor.popc", ".and.popc" or ""
    layout: str = "row.col"              # .alayout.blayout (m8n8k4 .f16 takes all four)

    def opcode(self) -> str:
        if self.atype == "b1":
            return f"mma.sync.aligned.{self.shape}.row.col.s32.b1.b1.s32{self.extra}"
        types = f".{self.dtype}.{self.atype}.{self.btype}.{self.ctype}"
        return f"mma.sync.aligned.{self.shape}.{self.layout}{self.extra}{types}"

    def fragments(self) -> tuple[F.Fragment, ...]:
        al, bl = self.layout.split(".")
        return (F.fragment("mma", self.shape, "a", self.atype, al), F.fragment("mma", self.shape, "b", self.btype, bl),
                F.fragment("mma", self.shape, "c", self.ctype), F.fragment("mma", self.shape, "d", self.dtype))


@dataclass(frozen=True)
class SparseForm:
    """One mma.sp form (§9.7.14.6): shape, types (C = D), selector, variant, .satfinite."""

    shape: str
    atype: str
    btype: str
    ctype: str
    selector: int
    ordered: bool
    sat: bool = False

    def opcode(self) -> str:
        var = "sp::ordered_metadata" if self.ordered else "sp"
        sat = ".satfinite" if self.sat else ""
        return f"mma.{var}.sync.aligned.{self.shape}.row.col{sat}.{self.ctype}.{self.atype}.{self.btype}.{self.ctype}"

    def fragments(self) -> tuple[F.Fragment, ...]:
        return tuple(F.fragment("mma.sp", self.shape, r, t) for r, t in
                     (("a", self.atype), ("b", self.btype), ("c", self.ctype), ("d", self.ctype)))


def sparse_forms() -> list[SparseForm]:
    """Every mma.sp form of isa/matrix.toml, every selector the ISA defines, both variants."""
    out = []
    for c in F.sparse_combinations():
        pairs = [(a, b) for a in c["ab"] for b in c["ab"] if c.get("mixed") or a == b]
        sels = {1: (0, 1, 2, 3), 2: (0, 1), 4: (0,)}[int(c["threads"])]
        for (a, b) in pairs:
            for ct in c["acc"]:
                sats = (False, True) if a in ("s8", "u8") else (False,)
                out += [SparseForm(c["shape"], a, b, ct, s, o, x) for s in sels for o in (False, True) for x in sats]
    return out


def sparse_metadata(rng: np.random.Generator, form: SparseForm, n: int) -> np.ndarray:
    """``n`` metadata words whose eight fields are all defined for the form (random pairs of
    distinct indices, increasing for ::ordered_metadata; tf32: 0b0100 or 0b1110)."""
    chunk = next(int(c["chunk"]) for c in F.sparse_combinations()
                 if c["shape"] == form.shape and form.atype in c["ab"])
    if chunk == 2:
        fields = [0b0100, 0b1110]
    else:
        fields = [lo | hi << 2 for lo in range(4) for hi in range(4) if (lo < hi if form.ordered else lo != hi)]
    picks = np.array(fields, dtype=np.uint64)[rng.integers(0, len(fields), (n, 8))]
    return np.bitwise_or.reduce(picks << (np.arange(8, dtype=np.uint64) * np.uint64(4)), axis=1)


@dataclass(frozen=True)
class LdmatrixForm:
    num: str                             # x1 x2 x4
    trans: bool


def mma_forms() -> list[MmaForm]:
    """Every combination isa/matrix.toml lists (mixed A/B types where allowed, the D/C pairs
    and A/B layouts it takes)."""
    out = []
    for c in F.mma_combinations():
        pairs = [(a, b) for a in c["ab"] for b in c["ab"] if c.get("mixed") or a == b]
        for (a, b) in pairs:
            for ct in c["acc"]:
                for dt in c["acc"]:
                    if "dc" in c and [dt, ct] not in c["dc"]:
                        continue
                    extras = {"b1": (".xor.popc", ".and.popc")}.get(a) or \
                        (("", ".satfinite") if a in ("s8", "u8", "s4", "u4") else ("",))
                    out += [MmaForm(c["shape"], a, b, ct, dt, x, lay) for x in extras
                            for lay in c.get("layouts", ["row.col"])]
    return out


def _regs(name: str, n: int) -> str:
    return "{" + ", ".join(f"%{name}{i}" for i in range(n)) + "}"


def _header(decls: list[str]) -> list[str]:
    return [f".version {PTX_VERSION}", ".target sm_90", ".address_size 64", "",
            f".visible .entry {KERNEL}(.param .u64 p_in, .param .u64 p_out, .param .u64 p_mem, "
            ".param .u64 p_apx, .param .u32 p_k)", "{",
            "    .reg .b32 %gid, %t; .reg .b64 %ain, %aout, %off, %adr;", *decls,
            "    mov.u32 %gid, %tid.x;", "    ld.param.u64 %ain, [p_in];", "    ld.param.u64 %aout, [p_out];"]


def _lane_words(base: str, n: int) -> list[str]:
    """%adr = base + gid * n * 8: this lane's first word."""
    return [f"    mul.wide.u32 %off, %gid, {n * 8};", f"    add.s64 %adr, {base}, %off;"]


def mma_ptx(form: MmaForm) -> tuple[str, int, int]:
    """(PTX, input words per lane, output words per lane)."""
    fa, fb, fc, fd = form.fragments()
    wide = lambda f: "f64" if f.reg_bits == 64 else "b32"      # noqa: E731
    decls = [f"    .reg .{wide(f)} %{r}<{f.regs}>;" for r, f in zip("abcd", (fa, fb, fc, fd))]
    lines = _header(decls)
    n_in = fa.regs + fb.regs + fc.regs
    lines += _lane_words("%ain", n_in)
    k = 0
    for r, f in zip("abc", (fa, fb, fc)):
        for i in range(f.regs):
            lines.append(f"    ld.global.{wide(f)} %{r}{i}, [%adr+{8 * k}];")
            k += 1
    lines.append(f"    {form.opcode()} {_regs('d', fd.regs)}, {_regs('a', fa.regs)}, {_regs('b', fb.regs)}, "
                 f"{_regs('c', fc.regs)};")
    lines += _lane_words("%aout", fd.regs)
    lines += [f"    st.global.{wide(fd)} [%adr+{8 * i}], %d{i};" for i in range(fd.regs)]
    return "\n".join(lines + ["    ret;", "}", ""]), n_in, fd.regs


def sparse_ptx(form: SparseForm) -> tuple[str, int, int]:
    """(PTX, input words per lane, output words per lane) of an mma.sp kernel: the fragment
    registers as mma_ptx loads them, then the metadata word (the last of the lane's slice)."""
    fa, fb, fc, fd = form.fragments()
    decls = [f"    .reg .b32 %{r}<{f.regs}>;" for r, f in zip("abcd", (fa, fb, fc, fd))] + ["    .reg .b32 %e;"]
    lines = _header(decls)
    n_in = fa.regs + fb.regs + fc.regs + 1
    lines += _lane_words("%ain", n_in)
    k = 0
    for r, f in zip("abc", (fa, fb, fc)):
        for i in range(f.regs):
            lines.append(f"    ld.global.b32 %{r}{i}, [%adr+{8 * k}];")
            k += 1
    lines.append(f"    ld.global.b32 %e, [%adr+{8 * k}];")
    lines.append(f"    {form.opcode()} {_regs('d', fd.regs)}, {_regs('a', fa.regs)}, {_regs('b', fb.regs)}, "
                 f"{_regs('c', fc.regs)}, %e, {form.selector};")
    lines += _lane_words("%aout", fd.regs)
    lines += [f"    st.global.b32 [%adr+{8 * i}], %d{i};" for i in range(fd.regs)]
    return "\n".join(lines + ["    ret;", "}", ""]), n_in, fd.regs


def sparse_kernel(form: SparseForm, threads: int, seed: int) -> GeneratedKernel:
    """A kernel of ``form`` on random fragments (float specials, random bits) and random
    defined metadata."""
    ptx, n_in, n_out = sparse_ptx(form)
    rng = np.random.default_rng(seed)
    a_in = words(rng, n_in * threads).reshape(threads, n_in)
    a_in[:, -1] = sparse_metadata(rng, form, threads)
    out = np.zeros(n_out * threads, dtype=np.uint64)
    return GeneratedKernel(ptx, KERNEL, (1, 1, 1), (threads, 1, 1),
                           (a_in.reshape(-1), out, np.zeros(1, np.uint64), np.zeros(1, np.uint64), 0), (1,), False,
                           (), None, seed)


def ldmatrix_ptx(form: LdmatrixForm | None) -> tuple[str, int, int]:
    """ldmatrix (or movmatrix, ``form`` None) on a 512-byte shared tile filled from ``in``; each
    lane's row is word 0 of its ``in`` slice & 31."""
    n = F.LDMATRIX_COUNT[form.num] if form else 1
    decls = [".shared .align 16 .b8 tile[512];", f"    .reg .b32 %r<{n}>, %w, %row; .reg .b64 %s, %g;",
             "    .reg .pred %p;"]
    lines = _header(decls) + _lane_words("%ain", 2)
    lines += ["    ld.global.b32 %row, [%adr];", "    and.b32 %row, %row, 31;", "    shl.b32 %row, %row, 4;",
              "    ld.global.b32 %w, [%adr+8];",
              # the tile: lane t writes its words t, t + 32, t + 64, t + 96 (the words of in[...])
              "    mov.u32 %t, %gid;", "    and.b32 %t, %t, 31;", "$fill:", "    setp.ge.u32 %p, %t, 128;",
              "    @%p bra $filled;", "    mul.wide.u32 %off, %t, 8;", "    add.s64 %g, %ain, %off;",
              "    ld.global.b32 %w, [%g];", "    mul.wide.u32 %off, %t, 4;", "    mov.u64 %s, tile;",
              "    add.s64 %s, %s, %off;", "    st.shared.b32 [%s], %w;", "    add.u32 %t, %t, 32;", "    bra $fill;",
              "$filled:", "    bar.sync 0;", "    mov.u64 %s, tile;", "    cvt.u64.u32 %off, %row;",
              "    add.s64 %s, %s, %off;"]
    if form is None:
        lines.append("    ld.global.b32 %w, [%adr+8];")
        lines.append("    movmatrix.sync.aligned.m8n8.trans.b16 %r0, %w;")
    else:
        tr = ".trans" if form.trans else ""
        lines.append(f"    ldmatrix.sync.aligned.m8n8.{form.num}{tr}.shared.b16 {_regs('r', n)}, [%s];")
    lines += _lane_words("%aout", n)
    lines += [f"    st.global.b32 [%adr+{8 * i}], %r{i};" for i in range(n)]
    return "\n".join(lines + ["    ret;", "}", ""]), 2, n


@st.composite
def tensor_kernels(draw, warps=(1, 2)) -> GeneratedKernel:
    """A hypothesis strategy of kernels of one random tensor-core form on random fragments."""
    kind = draw(st.sampled_from(("mma", "mma", "mma.sp", "ldmatrix", "movmatrix")))
    if kind == "mma.sp":
        return sparse_kernel(draw(st.sampled_from(sparse_forms())), 32 * draw(st.sampled_from(warps)),
                             draw(st.integers(0, 2**32 - 1)))
    if kind == "mma":
        ptx, n_in, n_out = mma_ptx(draw(st.sampled_from(mma_forms())))
    elif kind == "ldmatrix":
        ptx, n_in, n_out = ldmatrix_ptx(LdmatrixForm(draw(st.sampled_from(("x1", "x2", "x4"))), draw(st.booleans())))
    else:
        ptx, n_in, n_out = ldmatrix_ptx(None)
    threads = 32 * draw(st.sampled_from(warps))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    a_in = words(rng, max(n_in * threads, 128))
    out = np.zeros(n_out * threads, dtype=np.uint64)
    return GeneratedKernel(ptx, KERNEL, (1, 1, 1), (threads, 1, 1),
                           (a_in, out, np.zeros(1, np.uint64), np.zeros(1, np.uint64), 0), (1,), False, (), None, seed)


__all__ = ["MmaForm", "SparseForm", "LdmatrixForm", "mma_forms", "sparse_forms", "sparse_metadata", "mma_ptx",
           "sparse_ptx", "sparse_kernel", "ldmatrix_ptx", "tensor_kernels"]
