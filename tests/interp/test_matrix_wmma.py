"""wmma.load / wmma.mma / wmma.store (PTX ISA 9.0 §9.7.14.4) on every executor of EXECUTORS:
every shape x type, row/col layouts of A, B, C and D, a leading dimension larger than the
matrix (and the default one), global, generic and shared addresses. The ISA leaves which lane
holds which element unspecified, so these check what it does specify: the register counts
(tests/models/fragments.py's WMMA_AB, from §9.7.14.4.1), and that D = A @ B + C lands in memory
exactly where the layout and stride put it (nothing else written)."""

from __future__ import annotations

import numpy as np
import pytest

from models import fragments as M
from models.matrix_harness import EXECUTORS, HEADER, exact_values, module, vec

SENTINEL = 0x5A


def _acc_choices(shape, elem):
    if elem == "f16":
        both = [("f32", "f32"), ("f16", "f16")]
        return both + ([("f16", "f32"), ("f32", "f16")] if shape == "m16n16k16" else [])
    return [{"bf16": ("f32", "f32"), "tf32": ("f32", "f32"), "f64": ("f64", "f64")}.get(elem, ("s32", "s32"))]


CASES = [(shape, elem, d, c) for (shape, elem) in M.WMMA_AB for d, c in _acc_choices(shape, elem)]
SUBBYTE = ("s4", "u4", "b1")


def _image(mat: np.ndarray, elem: str, layout: str, ld: int, rng) -> tuple[np.ndarray, int]:
    """The bytes of a rows x cols matrix stored with ``layout`` and leading dimension ``ld``
    (elements), padding random; (bytes, element count of the image)."""
    rows, cols = mat.shape
    count = (rows if layout == "row" else cols) * ld
    bits = M.BITS[elem]
    img = M.encode(exact_values(rng, elem, (count,)), elem)
    idx = (np.arange(rows)[:, None] * ld + np.arange(cols)[None, :]) if layout == "row" else \
        (np.arange(cols)[None, :] * ld + np.arange(rows)[:, None])
    img[idx] = M.encode(mat, elem)
    if bits >= 8:
        raw = img.astype(np.dtype(f"u{bits // 8}")).view(np.uint8)
    else:
        per = 8 // bits
        pad = (-img.size) % per
        e = np.concatenate([img, np.zeros(pad, np.uint64)]).reshape(-1, per)
        raw = np.bitwise_or.reduce(e << (np.arange(per, dtype=np.uint64) * np.uint64(bits)), axis=1).astype(np.uint8)
    raw = np.concatenate([raw, np.full((-raw.size) % 16, SENTINEL, np.uint8)])
    return raw, count


def _kernel(shape, elem, dt, ct, lay, space, strides, sizes, mma_op):
    sp = {"global": ".global", "generic": "", "shared": ".shared"}[space]
    na, nb = M.WMMA_AB[(shape, elem)]
    nc, nd = M.wmma_c_regs(shape, ct), M.wmma_c_regs(shape, dt)
    rt = lambda e: "f64" if e == "f64" else "b32"
    et = lambda e: f".{e}"
    st = lambda r: f", {strides[r]}" if strides[r] is not None else ""
    lines = [HEADER, ".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)", "{",
             f"  .reg .{rt(elem)} %a<{na}>, %b<{nb}>; .reg .{rt(ct)} %c<{nc}>; .reg .{rt(dt)} %d<{nd}>;",
             "  .reg .b64 %pa, %pb, %pc, %pd, %g, %s; .reg .b32 %t, %i, %w; .reg .pred %p;"]
    for r in "abcd":
        lines.append(f"  ld.param.u64 %p{r}, [p{r}];")
    if space == "shared":
        lines[3:3] = [f".shared .align 16 .b8 s{r}[{sizes[r]}];" for r in "abcd"]
        lines += ["  mov.u32 %t, %tid.x;"]
        for r in "abcd":        # d too: the bytes around the stored matrix must stay as they were
            lines += _copy(f"%p{r}", f"s{r}", sizes[r], r, to_shared=True)
        lines += ["  bar.sync 0;"] + [f"  mov.u64 %p{r}, s{r};" for r in "abcd"]
    lines += [
        f"  wmma.load.a.sync.aligned.{lay['a']}.{shape}{sp}{et(elem)} {vec('a', na)}, [%pa]{st('a')};",
        f"  wmma.load.b.sync.aligned.{lay['b']}.{shape}{sp}{et(elem)} {vec('b', nb)}, [%pb]{st('b')};",
        f"  wmma.load.c.sync.aligned.{lay['c']}.{shape}{sp}.{ct} {vec('c', nc)}, [%pc]{st('c')};",
        f"  {mma_op} {vec('d', nd)}, {vec('a', na)}, {vec('b', nb)}, {vec('c', nc)};",
        f"  wmma.store.d.sync.aligned.{lay['d']}.{shape}{sp}.{dt} [%pd], {vec('d', nd)}{st('d')};"]
    if space == "shared":
        lines += ["  bar.sync 0;", "  ld.param.u64 %pd, [pd];"] + _copy("%pd", "sd", sizes["d"], "e", to_shared=False)
    return "\n".join(lines + ["  ret;", "}"]) + "\n"


def _copy(gptr, sym, nbytes, tag, to_shared):
    """Words t, t + 32, ... of a buffer between global memory and a .shared array (one warp)."""
    return [f"  mov.u32 %i, %t;", f"CP{tag}:", f"  setp.ge.u32 %p, %i, {nbytes // 4};", f"  @%p bra CD{tag};",
            "  mul.wide.u32 %g, %i, 4;", f"  mov.u64 %s, {sym};", "  add.s64 %s, %s, %g;", f"  add.s64 %g, {gptr}, %g;",
            *(["  ld.global.b32 %w, [%g];", "  st.shared.b32 [%s], %w;"] if to_shared else
              ["  ld.shared.b32 %w, [%s];", "  st.global.b32 [%g], %w;"]),
            "  add.u32 %i, %i, 32;", f"  bra CP{tag};", f"CD{tag}:"]


def _mma_op(shape, elem, dt, ct, lay):
    if elem == "f16":
        types = f".{dt}.{ct}"
    elif elem in SUBBYTE:
        types = f".s32.{elem}.{elem}.s32"
    else:
        types = f".{dt}.{elem}.{elem}.{ct}"
    pop = ".xor.popc" if elem == "b1" else ""
    return f"wmma.mma{pop}.sync.aligned.{lay['a']}.{lay['b']}.{shape}{types}"


def _layouts(elem):
    if elem in SUBBYTE:          # §9.7.14.4.1: sub-byte A is row-major and B column-major only
        return [{"a": "row", "b": "col", "c": "row", "d": "col"}, {"a": "row", "b": "col", "c": "col", "d": "row"}]
    return [{"a": a, "b": b, "c": a, "d": b} for a in ("row", "col") for b in ("row", "col")]


def _run_case(executor, shape, elem, dt, ct, lay, space, padded):
    rng = np.random.default_rng(abs(hash((shape, elem, dt, ct, tuple(lay.values()), space))) % 2**32)
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    dims = {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}
    pad = 32 if elem == "b1" else (8 if elem in ("s4", "u4") else 4)
    strides = {r: ((dims[r][1] if lay[r] == "row" else dims[r][0]) + pad if padded else None) for r in "abcd"}
    ld = {r: strides[r] or (dims[r][1] if lay[r] == "row" else dims[r][0]) for r in "abcd"}
    a, b = exact_values(rng, elem, dims["a"]), exact_values(rng, elem, dims["b"])
    c = exact_values(rng, ct, dims["c"])
    if elem == "b1":
        d = c + (a[:, :, None].astype(np.int64) ^ b[None, :, :].astype(np.int64)).sum(axis=1)
    else:
        d = a @ b + c
    imgs = {"a": _image(a, elem, lay["a"], ld["a"], rng)[0], "b": _image(b, elem, lay["b"], ld["b"], rng)[0],
            "c": _image(c, ct, lay["c"], ld["c"], rng)[0]}
    expect_d, _ = _image(d, dt, lay["d"], ld["d"], rng)
    out = np.full(expect_d.size, SENTINEL, np.uint8)
    sizes = {r: v.size for r, v in imgs.items()} | {"d": out.size}
    text = _kernel(shape, elem, dt, ct, lay, space, strides, sizes, _mma_op(shape, elem, dt, ct, lay))
    module(text)["k"](1, 32, (imgs["a"], imgs["b"], imgs["c"], out), device=executor)
    written = _written_mask(dims["d"], dt, lay["d"], ld["d"], out.size)
    np.testing.assert_array_equal(out[written], expect_d[written])
    assert (out[~written] == SENTINEL).all(), "wmma.store wrote outside the matrix"


def _written_mask(dims, elem, layout, ld, size):
    rows, cols = dims
    nbytes = M.BITS[elem] // 8
    idx = (np.arange(rows)[:, None] * ld + np.arange(cols)[None, :]) if layout == "row" else \
        (np.arange(cols)[None, :] * ld + np.arange(rows)[:, None])
    mask = np.zeros(size, bool)
    for j in range(nbytes):
        mask[idx.reshape(-1) * nbytes + j] = True
    return mask


LAYOUT_CASES = [(*case, li) for case in CASES for li in range(len(_layouts(case[1])))]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("shape,elem,dt,ct,li", LAYOUT_CASES, ids=str)
def test_wmma_every_shape_type_and_layout(executor, shape, elem, dt, ct, li):
    _run_case(executor, shape, elem, dt, ct, _layouts(elem)[li], "global", padded=li % 2 == 0)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("space", ["generic", "shared"])
@pytest.mark.parametrize("shape,elem,dt,ct", [("m16n16k16", "f16", "f32", "f32"), ("m32n8k16", "bf16", "f32", "f32"),
                                             ("m8n32k16", "s8", "s32", "s32"), ("m16n16k8", "tf32", "f32", "f32"),
                                             ("m8n8k4", "f64", "f64", "f64"), ("m8n8k32", "u4", "s32", "s32"),
                                             ("m8n8k128", "b1", "s32", "s32")], ids=str)
def test_wmma_generic_and_shared_addresses(executor, space, shape, elem, dt, ct):
    _run_case(executor, shape, elem, dt, ct, _layouts(elem)[0], space, padded=True)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("shape,elem,role", [(s, e, r) for (s, e) in sorted(M.WMMA_AB) if e not in SUBBYTE
                                             for r in "ab"] + [("m16n16k16", "f32", "c"), ("m32n8k16", "f16", "c"),
                                                               ("m8n8k4", "f64", "c"), ("m8n32k16", "s32", "c")],
                         ids=str)
def test_wmma_load_puts_elements_where_ptxvms_layout_says(executor, shape, elem, role):
    """The layout is ptxvm's choice (the ISA leaves it open): pinned here so every executor (and
    code that reads fragment registers) sees the same one (tests/models/fragments.wmma_layout)."""
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    rows, cols = {"a": (m, k), "b": (k, n), "c": (m, n)}[role]
    regs = M.WMMA_AB[(shape, elem)]["ab".index(role)] if role != "c" else M.wmma_c_regs(shape, elem)
    per = M.per_reg(elem)
    mod = {"s8": 64, "u8": 64, "bf16": 256}.get(elem, 1000)       # distinct where the type allows
    values = np.arange(rows * cols) % mod - (20 if elem == "s8" else 0)
    mat = values.reshape(rows, cols).astype(np.float64)
    img, _ = _image(mat, elem, "row", cols, np.random.default_rng(0))
    rt = "f64" if elem == "f64" else "b32"
    size = 8 if rt == "f64" else 4
    text = "\n".join([HEADER, ".visible .entry k(.param .u64 pm, .param .u64 pr)", "{",
                      f"  .reg .{rt} %f<{regs}>; .reg .b64 %m, %r, %o; .reg .b32 %t;",
                      "  ld.param.u64 %m, [pm];", "  ld.param.u64 %r, [pr];", "  mov.u32 %t, %tid.x;",
                      f"  mul.wide.u32 %o, %t, {regs * size};", "  add.s64 %r, %r, %o;",
                      f"  wmma.load.{role}.sync.aligned.row.{shape}.global.{elem} {vec('f', regs)}, [%m];",
                      *[f"  st.global.{rt} [%r+{i * size}], %f{i};" for i in range(regs)], "  ret;", "}"]) + "\n"
    out = np.zeros((32, regs), np.uint64 if rt == "f64" else np.uint32)
    module(text)["k"](1, 32, (img, out), device=executor)
    coords = M.wmma_layout(rows, cols, regs * per)
    expect = M.pack(M.encode(mat[coords[..., 0], coords[..., 1]], elem), elem)
    np.testing.assert_array_equal(out.astype(np.uint64), expect)
