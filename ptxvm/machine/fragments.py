"""Tensor-core fragment layouts (PTX ISA 9.0 §9.7.14), shared by every executor.

A *fragment* is the part of a matrix one lane of a warp holds in the registers of a brace vector
operand. ``fragment(op, shape, role, elem)`` says, for every (lane, element) of a warp's
fragments, which (row, col) of the matrix it is: element ``e`` of a lane lies in register
``e // per_reg``, bits ``[(e % per_reg) * elem_bits, ...)`` (the low element first).

* ``mma`` (§9.7.14.5.x "Matrix Fragments for mma.m*n*k*"): the ISA's figures all follow one
  rule, which ``_mma_coords`` states: A (M x K) is cut into 8-row "core" blocks of one 32-bit
  register per lane, ordered row block fastest; in a core block lane ``l`` holds row
  ``l >> 2`` (groupID), columns ``(l % 4) * per_reg + j`` (threadID_in_group). B (K x N) is the
  same with rows and columns exchanged; C/D (M x 8) holds pairs: row ``8 * block + groupID``,
  columns ``(l % 4) * 2 + {0, 1}``.
* ``wmma`` (§9.7.14.4.1): the ISA fixes the register count and types but says the distribution
  of the matrix over the lanes is unspecified and target dependent. ptxvm's choice
  (``specified`` is False): lane-major, row-major: lane ``l`` holds elements
  ``l * E .. l * E + E - 1`` of the row-major matrix, E = rows * cols / 32; fragments with
  more registers than that (f16 A/B) repeat the matrix (``copies``), and an mma reads copy 0.
* ``mma.m8n8k4`` with ``.f16`` (§9.7.14.5.1, sm_70): the warp computes four independent 8x8x4
  products, one per quad pair (lanes 4q..4q+3 with 16+4q..16+4q+3), with layouts of their own
  that depend on .row/.col (``layout``). ``_quad_pair_coords`` embeds the four block-diagonally:
  A is 32 x 4 (quad pair q's rows at 8q..8q+7), B 4 x 32 (its columns at 8q..), C/D 32 x 32 of
  which the warp holds the four diagonal 8x8 blocks (``blocks`` = 4). D = A @ B + C of the
  embedding is exactly the four products, so every executor runs the form as any other mma.
* ``mma.sp`` (§9.7.14.6.2): op ``"mma.sp"``. A is the compressed M x K/2 matrix of the stored
  (non-zero) elements, laid out as the dense mma A of shape m<M>n<N>k<K/2> (the ISA's sparse A
  figures are exactly that layout, read through the 2:4 / 1:2 mapping); B, C, D as the dense
  rule gives them for the full shape. Metadata: ``sparse_meta``.
* ``ldmatrix``/``stmatrix``/``movmatrix`` (§9.7.14.5.15-17): ``ldmatrix_coords``.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..resources import data_dir

WARP = 32
ROLES = ("a", "b", "c", "d")


class FragmentError(ValueError):
    """A shape/role/type combination the PTX ISA does not define."""


@dataclass(frozen=True)
class Fragment:
    op: str                  # "wmma" | "mma"
    shape: str               # "m16n8k16"
    role: str                # "a" | "b" | "c" (d is laid out as c)
    elem: str                # element type: f16 bf16 tf32 f32 f64 s32 s8 u8 s4 u4 b1 e4m3 e5m2
    rows: int
    cols: int
    regs: int                # registers of the brace vector
    reg_bits: int            # 64 for .f64 fragments, else 32
    elem_bits: int
    per_reg: int             # elements packed per register
    copies: int              # times a warp's fragments cover the matrix (wmma f16 A/B: > 1)
    specified: bool          # the ISA fixes the layout (mma); False: ptxvm's choice (wmma)
    coords: np.ndarray       # int32 [32, regs * per_reg, 2]: (row, col) of each lane's element
    blocks: int = 1          # independent products of the warp on the diagonal (m8n8k4 .f16: 4)

    @property
    def elements(self) -> int:
        """Elements per lane."""
        return self.regs * self.per_reg


def shape_mnk(shape: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape)
    if m is None:
        raise FragmentError(f"`{shape}` is not a matrix shape (m<M>n<N>k<K>)")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


@cache
def _table() -> dict:
    return tomllib.loads((data_dir("isa") / "matrix.toml").read_text(encoding="utf-8"))


def element_bits(elem: str) -> int:
    bits = _table()["elements"].get(elem)
    if bits is None:
        raise FragmentError(f"`.{elem}` is not a tensor-core element type")
    return bits


def operand_types(types: list[str], sub: str | None, wmma: bool) -> tuple[str, str, str, str] | None:
    """(dtype, atype, btype, ctype) of an mma/wmma.mma as written: d.a.b.c, d.c with the sub-byte
    .atype.btype modifiers (``sub``), or (wmma .f16) d.c with .f16 inputs implied; None if the
    instruction's types are none of these."""
    if sub is not None and len(types) == 2:
        parts = sub.split(".")
        return types[0], parts[0], parts[-1], types[1]
    if len(types) == 4:
        return types[0], types[1], types[2], types[3]
    if wmma and len(types) == 2:
        return types[0], "f16", "f16", types[1]
    return None


def _dims(shape: str, role: str) -> tuple[int, int]:
    m, n, k = shape_mnk(shape)
    return {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[role]


def mma_combinations() -> tuple[dict, ...]:
    """The `[[mma]]` entries of isa/matrix.toml (shape, ab, acc, mixed, sm, layouts, dc)."""
    return tuple(_table()["mma"])


def sparse_combinations() -> tuple[dict, ...]:
    """The `[[mma_sp]]` entries of isa/matrix.toml (mma.sp, §9.7.14.6.3)."""
    return tuple(_table().get("mma_sp", ()))


def mma_sm(shape: str, atype: str, btype: str, ctype: str, dtype: str,
           layouts: tuple[str, str] = ("row", "col"), sparse: bool = False) -> int:
    """Minimum sm of an mma.sync (``sparse``: mma.sp) combination with the A and B layouts
    ``layouts``; FragmentError naming what is wrong if the ISA does not define it."""
    table, name = (sparse_combinations(), "mma.sp") if sparse else (mma_combinations(), "mma")
    shapes = [c for c in table if c["shape"] == shape]
    if not shapes:
        raise FragmentError(f"{name} shape `.{shape}` is not executable (known: "
                            f"{', '.join(sorted({c['shape'] for c in table}))})")
    for c in shapes:
        ab = c["ab"]
        if atype in ab and btype in ab and (c.get("mixed") or atype == btype) \
                and ctype in c["acc"] and dtype in c["acc"]:
            if "dc" in c and [dtype, ctype] not in c["dc"]:
                raise FragmentError(f"{name} `.{shape}` does not take a .{dtype} D with a .{ctype} C "
                                    "(d.c: " + ", ".join(".".join(p) for p in c["dc"]) + ")")
            written = ".".join(layouts)
            if written not in c.get("layouts", ["row.col"]):
                raise FragmentError(f"with `.{shape}` takes the layouts .row.col only, not .{written} "
                                    "(PTX ISA §9.7.14.5.14)")
            return int(c["sm"])
    raise FragmentError(f"{name} `.{shape}` does not take `.{dtype}.{atype}.{btype}.{ctype}` "
                        f"(d.a.b.c); it takes: " + "; ".join(
                            f"a/b {'/'.join(c['ab'])} with c/d {'/'.join(c['acc'])}" for c in shapes))


DEFAULT_LAYOUT = {"a": "row", "b": "col"}      # what every mma form but m8n8k4 .f16 takes


def _quad_pair(op: str, shape: str, elem: str) -> bool:
    """The sm_70 form: m8n8k4 with .f16 A/B and .f16/.f32 accumulators (f64 is the other m8n8k4)."""
    return op == "mma" and shape == "m8n8k4" and elem in ("f16", "f32")


@cache
def fragment(op: str, shape: str, role: str, elem: str, layout: str | None = None) -> Fragment:
    """The layout of one fragment (see the module docstring); FragmentError if undefined.
    ``layout`` is the .row/.col of an A or B operand (None: A .row, B .col); only the m8n8k4
    .f16 form takes others."""
    if role not in ROLES:
        raise FragmentError(f"fragment role must be one of {ROLES}, not {role!r}")
    role = "c" if role == "d" else role
    bits = element_bits(elem)
    reg_bits = 64 if elem == "f64" else 32
    per_reg = reg_bits // bits if elem != "f64" else 1
    layout = layout or DEFAULT_LAYOUT.get(role)
    blocks, specified = 1, True
    if op == "wmma":
        rows, cols = _dims(shape, role)
        regs = _wmma_regs(shape, role, elem)
        coords = _wmma_coords(rows, cols, regs * per_reg)
        specified = False
    elif _quad_pair(op, shape, elem):
        rows, cols, coords = _quad_pair_coords(role, elem, layout)
        regs, blocks = coords.shape[1] // per_reg, 4
    elif op in ("mma", "mma.sp"):
        if layout != DEFAULT_LAYOUT.get(role):
            raise FragmentError(f"{op} `.{shape}` takes a .{DEFAULT_LAYOUT[role]} {role.upper()}, not .{layout}")
        table = mma_combinations() if op == "mma" else sparse_combinations()
        dense = shape
        if op == "mma.sp" and role == "a":          # the stored half of A: M x K/2
            m, n, k = shape_mnk(shape)
            dense = f"m{m}n{n}k{k // 2}"
        rows, cols = _dims(dense, role)
        regs = rows * cols // (WARP * per_reg)
        if shape not in {c["shape"] for c in table} or regs < 1:
            raise FragmentError(f"{op} has no `.{shape}` fragment of `.{elem}`")
        coords = _mma_coords(dense, role, per_reg, regs)
    else:
        raise FragmentError(f"no fragment layout for `{op}`")
    held = rows * cols // (blocks if role == "c" else 1)     # elements the warp's fragments cover
    copies = WARP * regs * per_reg // held
    coords.setflags(write=False)
    return Fragment(op, shape, role, elem, rows, cols, regs, reg_bits, bits, per_reg, copies,
                    specified, coords, blocks)


def _quad_pair_coords(role: str, elem: str, layout: str) -> tuple[int, int, np.ndarray]:
    """(rows, cols, coords) of the m8n8k4 .f16 form's block-diagonal embedding (module
    docstring), from §9.7.14.5.1's formulas: quad pair q = (lane >> 2) & 3; the low group
    (lanes < 16) holds rows (A, C) or columns (B) 0-3 of its product, the high group 4-7."""
    if role != "c" and layout not in ("row", "col"):
        raise FragmentError(f"mma `.m8n8k4` takes .row or .col, not .{layout}")
    lane = np.arange(WARP)[:, None]
    q, t, hi = (lane >> 2) & 3, lane & 3, (lane >> 4) * 4
    if role == "a":                                  # a0..a3
        i = np.arange(4)[None, :]
        r, c = (t + hi, i) if layout == "row" else (i + hi, t)
        rows, cols, row, col = 32, 4, 8 * q + r, c
    elif role == "b":                                # b0..b3
        i = np.arange(4)[None, :]
        k, c = (t, i + hi) if layout == "row" else (i, t + hi)
        rows, cols, row, col = 4, 32, k, 8 * q + c
    else:                                            # c0..c7
        i = np.arange(8)[None, :]
        if elem == "f16":
            r, c = t + hi, i
        else:
            r, c = (lane & 1) + (i & 2) + hi, (i & 4) + (lane & 2) + (i & 1)
        rows, cols, row, col = 32, 32, 8 * q + r, 8 * q + c
    out = np.stack(np.broadcast_arrays(row, col), axis=-1).astype(np.int32)
    return rows, cols, out


def _wmma_regs(shape: str, role: str, elem: str) -> int:
    entry = _table()["wmma"].get(shape)
    if entry is None:
        raise FragmentError(f"wmma shape `.{shape}` does not exist (known: "
                            f"{', '.join(_table()['wmma'])})")
    regs = entry[role].get(elem)
    if regs is None:
        raise FragmentError(f"wmma `.{shape}` has no `{role}` fragment of `.{elem}` (it takes "
                            f"{', '.join('.' + t for t in entry[role])})")
    return int(regs)


def _wmma_coords(rows: int, cols: int, per_lane: int) -> np.ndarray:
    once = rows * cols // WARP            # elements of one copy per lane
    lane = np.arange(WARP)[:, None]
    e = np.arange(per_lane)[None, :]
    q = lane * once + e % once
    return np.stack([q // cols, q % cols], axis=-1).astype(np.int32)


def _mma_coords(shape: str, role: str, per_reg: int, regs: int) -> np.ndarray:
    lane = np.arange(WARP)[:, None, None]
    group, tig = lane >> 2, lane & 3
    r = np.arange(regs)[None, :, None]
    j = np.arange(per_reg)[None, None, :]
    m, n, k = shape_mnk(shape)
    if role == "a":
        blocks = m // 8                           # row blocks of 8
        row = (r % blocks) * 8 + group
        col = (r // blocks) * 4 * per_reg + tig * per_reg + j
    elif role == "b":
        row = r * 4 * per_reg + tig * per_reg + j
        col = group + 0 * j
    else:
        # Accumulators: element pairs (c0, c1), (c2, c3), ... one pair per 8-row block.
        e = r * per_reg + j
        row = (e // 2) * 8 + group
        col = tig * 2 + (e % 2)
    out = np.stack(np.broadcast_arrays(row, col), axis=-1)
    return out.reshape(WARP, regs * per_reg, 2).astype(np.int32)


# ------------------------------------------------------------ mma.sp metadata (§9.7.14.6.1-2)

@dataclass(frozen=True)
class SparseMeta:
    """Where the metadata of each stored A element of an mma.sp lies, for one selector.

    ``table[r, j]`` for stored element j of row r (column j of the M x K/2 A fragment matrix):
    (lane whose metadata register holds its index, bit offset of that 4-bit chunk field, slot:
    which of the chunk's stored elements it is, first column of its chunk in the full A). The
    element's column in the full A is that first column plus its position: 2:4 (``chunk`` 4),
    the 2-bit index at bits [2 slot, 2 slot + 2) of the field; tf32's 1:2 (``chunk`` 2), the
    field is 0b0100 (position 0) or 0b1110 (position 1), i.e. low index / 2. A field with equal
    indices (2:4), indices not increasing (``::ordered_metadata``) or not one of the two (tf32)
    is undefined in the ISA."""

    shape: str
    atype: str
    selector: int
    chunk: int
    table: np.ndarray          # int32 [M, K/2, 4]


def _sparse_entry(shape: str, atype: str) -> dict:
    for c in sparse_combinations():
        if c["shape"] == shape and atype in c["ab"]:
            return c
    raise FragmentError(f"mma.sp has no `.{shape}` form with `.{atype}` A")


@cache
def sparse_meta(shape: str, atype: str, selector: int) -> SparseMeta:
    """The metadata layout of an mma.sp form (isa/matrix.toml `[[mma_sp]]`: ``threads`` of each
    group of four give metadata, the ``selector`` picks them; FragmentError for a selector the
    ISA leaves undefined)."""
    c = _sparse_entry(shape, atype)
    threads, chunk = int(c["threads"]), int(c["chunk"])
    allowed = {1: (0, 1, 2, 3), 2: (0, 1), 4: (0,)}[threads]
    if selector not in allowed:
        raise FragmentError(f"`.{shape}` with `.{atype}` takes a sparsity selector in "
                            f"{{{', '.join(map(str, allowed))}}}, not {selector} (PTX ISA §9.7.14.6.1: "
                            "any other value is undefined)")
    m, _n, k = shape_mnk(shape)
    stored = chunk // 2                           # stored elements per chunk
    table = np.zeros((m, k // 2, 4), dtype=np.int32)
    for r in range(m):
        for j in range(k // 2):
            ch, slot = divmod(j, stored)
            if c["meta"] == "halves":             # 16 bits a row: rows g and g + 8, 4 chunks a thread
                q, field = ch // 4, ch % 4 + 4 * (r >= 8)
            else:                                 # "rows": 32 bits a row, 8 chunks
                q, field = (r >= 8) + 2 * (ch // 8), ch % 8
            table[r, j] = (4 * (r % 8) + selector * threads + q, 4 * field, slot, ch * chunk)
    table.setflags(write=False)
    return SparseMeta(shape, atype, selector, chunk, table)


# ------------------------------------------------------------ ldmatrix / stmatrix / movmatrix

LDMATRIX_COUNT = {"x1": 1, "x2": 2, "x4": 4}


def ldmatrix_row_lanes(num: str) -> np.ndarray:
    """For ``.x1/.x2/.x4``: [matrices, 8] the lane whose address operand is each row of each
    8x8 matrix (threads 0-7 the rows of matrix 0, 8-15 of matrix 1, ...; §9.7.14.5.15)."""
    count = LDMATRIX_COUNT[num]
    return np.arange(count * 8, dtype=np.int32).reshape(count, 8)


@cache
def ldmatrix_coords(trans: bool) -> np.ndarray:
    """[32, 2] (row, col) in an 8x8 matrix of 16-bit elements of each lane's two elements of the
    register that holds that matrix: row ``lane >> 2``, columns ``(lane % 4) * 2 + {0, 1}``;
    with ``.trans`` the matrix is read transposed (row and column exchanged)."""
    lane = np.arange(WARP)[:, None]
    j = np.arange(2)[None, :]
    row, col = np.broadcast_arrays(lane >> 2, (lane & 3) * 2 + j)
    out = np.stack([col, row] if trans else [row, col], axis=-1).astype(np.int32)
    out.setflags(write=False)
    return out


def gather(frag: Fragment, matrix: np.ndarray) -> np.ndarray:
    """[..., rows, cols] element values -> [..., 32, elements]: what each lane holds."""
    return matrix[..., frag.coords[..., 0], frag.coords[..., 1]]


def scatter(frag: Fragment, values: np.ndarray, copy: int = 0) -> np.ndarray:
    """[..., 32, elements] -> [..., rows, cols]: the matrix the warp's fragments hold (for
    duplicated wmma fragments, copy ``copy``)."""
    once = frag.rows * frag.cols // WARP
    sel = slice(copy * once, (copy + 1) * once) if frag.copies > 1 else slice(None)
    c = frag.coords[:, sel]
    out = np.zeros(values.shape[:-2] + (frag.rows, frag.cols), dtype=values.dtype)
    out[..., c[..., 0], c[..., 1]] = values[..., :, sel]
    return out


__all__ = ["Fragment", "FragmentError", "fragment", "operand_types", "shape_mnk", "element_bits", "mma_sm",
           "mma_combinations", "sparse_combinations", "DEFAULT_LAYOUT", "SparseMeta", "sparse_meta", "ldmatrix_row_lanes", "ldmatrix_coords", "gather", "scatter",
           "LDMATRIX_COUNT", "WARP"]
