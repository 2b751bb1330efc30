"""tex on the executors against the independent model in tests/models/texture.py: every addressing
mode x filter mode x normalised/unnormalised x read mode x dimensionality, at texel edges,
negative and far out of range coordinates."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import ptxvm
from tests.models import texture as model

EXECUTORS = ["interp", "cpu"]

_HEAD = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 tex, .param .u64 cx, .param .u64 cy, .param .u64 cz, .param .u64 cl,
                  .param .u64 out, .param .u32 n)
{
    .reg .b32 %r<24>;
    .reg .b64 %rd<24>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    ld.param.u32 %r5, [n];
    setp.ge.s32 %p1, %r4, %r5;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [tex];
    mul.wide.s32 %rd2, %r4, 4;
"""
_LOAD = """    ld.param.u64 %rd{a}, [{name}];
    cvta.to.global.u64 %rd{a}, %rd{a};
    add.s64 %rd{a}, %rd{a}, %rd2;
    ld.global.b32 %r{r}, [%rd{a}];
"""
_TAIL = """    {op} {{%r10, %r11, %r12, %r13}}, [%rd1, {{{coords}}}]{extra};
    mul.wide.s32 %rd9, %r4, 16;
    ld.param.u64 %rd10, [out];
    cvta.to.global.u64 %rd10, %rd10;
    add.s64 %rd10, %rd10, %rd9;
    st.global.v4.b32 [%rd10], {{%r10, %r11, %r12, %r13}};
DONE:
    ret;
}}
"""

# geometry -> coordinate vector (registers %r6 x, %r7 y, %r8 z, %r9 layer), padded per the ISA
_COORDS = {"1d": "%r6", "2d": "%r6, %r7", "3d": "%r6, %r7, %r8, %r8", "a1d": "%r9, %r6",
           "a2d": "%r9, %r6, %r7, %r7", "cube": "%r6, %r7, %r8, %r8", "acube": "%r9, %r6, %r7, %r8"}


def kernel_text(geom: str, dtype: str, ctype: str, op: str = "tex", extra: str = "") -> str:
    body = _HEAD + "".join(_LOAD.format(a=3 + i, name=nm, r=6 + i) for i, nm in enumerate(("cx", "cy", "cz", "cl")))
    return body + _TAIL.format(op=f"{op}.{geom}.v4.{dtype}.{ctype}", coords=_COORDS[geom], extra=extra)


def run_tex(executor, tex, geom, dtype, ctype, coords, layers=None, op="tex", extra=""):
    n = len(coords[0])
    cols = [np.ascontiguousarray(c, dtype=np.float32 if ctype == "f32" else np.int32) for c in coords]
    while len(cols) < 3:
        cols.append(np.zeros(n, dtype=cols[0].dtype))
    lay = np.zeros(n, np.uint32) if layers is None else np.asarray(layers, np.uint32)
    out = np.zeros((n, 4), dtype=np.float32 if dtype == "f32" else np.int32)
    k = ptxvm.Module(kernel_text(geom, dtype, ctype, op, extra), f"{op}_{geom}.ptx")["k"]
    k(((n + 63) // 64,), (64,), [tex, cols[0], cols[1], cols[2], lay, out, n], device=executor)
    return out


def edge_coords(n: int, normalized: bool, rng, count: int = 24) -> list[float]:
    """Texel edges and centres, negatives, far out of range, and random points."""
    scale = 1.0 / n if normalized else 1.0
    fixed = [0.0, 0.5 * scale, 1.0 * scale, (n - 0.5) * scale, n * scale, -0.5 * scale, -scale,
             (n + 0.25) * scale, -3.75 * scale, 1e6, -1e6, 2.5, -1.25, 0.999999, 1.0000001, 7.0 * scale]
    rand = rng.uniform(-2 * n * scale, 3 * n * scale, count).tolist()
    return fixed + rand


_FORMATS = [  # (element dtype, read mode, result type)
    (np.float32, "element", "f32"), (np.float16, "element", "f32"), (np.uint8, "normalized", "f32"),
    (np.int16, "normalized", "f32"), (np.int32, "element", "s32"), (np.uint16, "element", "u32")]
_MODES = ["wrap", "clamp", "mirror", "border"]


def _texels(rng, dt, shape, ch):
    dt = np.dtype(dt)
    if dt.kind == "f":
        return rng.uniform(-4, 4, shape + (ch,)).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -2 ** 20), min(info.max, 2 ** 20), shape + (ch,), endpoint=True).astype(dt)


def _expected(texels, coords, **kw):
    return np.array([model.fetch(texels, c, **kw) for c in zip(*coords)])


CASES = [(dims, mode, flt, norm, fmt) for dims in (1, 2, 3) for mode in _MODES for flt in ("point", "linear")
         for norm in (False, True) for fmt in range(len(_FORMATS))
         if not (flt == "linear" and _FORMATS[fmt][2] != "f32")]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dims,mode,flt,norm,fmt", CASES)
def test_tex_against_model(executor, dims, mode, flt, norm, fmt):
    dt, read, rtype = _FORMATS[fmt]
    rng = np.random.default_rng(hash((dims, mode, flt, norm, fmt)) & 0xFFFF)
    shape = {1: (7,), 2: (5, 6), 3: (3, 4, 5)}[dims]
    ch = (1, 2, 4)[fmt % 3]
    data = _texels(rng, dt, shape, ch)
    arr = ptxvm.CudaArray.from_numpy(data, channels=ch) if ch > 1 else ptxvm.CudaArray.from_numpy(data[..., 0])
    border = (0.25, -1.5, 3.0, 0.5) if rtype == "f32" else (7, -3, 11, 2)
    tex = ptxvm.TextureObject(arr, address_mode=mode, filter_mode=flt, normalized_coords=norm,
                              read_mode="normalized_float" if read == "normalized" else "element_type",
                              border_color=border)
    ext = tuple(reversed(shape))
    axes = [edge_coords(ext[k], norm, rng) for k in range(dims)]
    # Mix the axes' values (different strides per axis) so corners, edges and far points meet.
    coords = [[a[(i * (2 * k + 1)) % len(a)] for i in range(60)] for k, a in enumerate(axes)]
    geom = f"{dims}d"
    got = run_tex(executor, tex, geom, rtype, "f32", coords)
    texels = data.reshape((1,) * (3 - dims) + shape + (ch,))
    want = _expected(texels, coords, modes=(mode,) * 3, filter_mode=flt, normalized=norm, read=read,
                     border=border)
    if rtype == "f32":
        np.testing.assert_array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))
    else:
        np.testing.assert_array_equal(got.astype(np.int64) & 0xFFFFFFFF, want.astype(np.int64) & 0xFFFFFFFF)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("mode", _MODES)
def test_integer_coordinates_are_texel_indices(executor, mode):
    rng = np.random.default_rng(5)
    data = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(data), address_mode=mode, border_color=(9, 9, 9, 9))
    xs = [-7, -1, 0, 1, 5, 6, 9, 2 ** 31 - 1, -(2 ** 31)]
    ys = [0, -1, 3, 4, 2, 1, 100, 0, 3]
    got = run_tex(executor, tex, "2d", "f32", "s32", [xs, ys])
    want = _expected(data.reshape(1, 4, 6, 1), [xs, ys], modes=(mode,) * 3, border=(9, 9, 9, 9), integer=True)
    np.testing.assert_array_equal(got, want.astype(np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_linear_memory_fetch_out_of_range_is_zero(executor):
    lin = np.arange(10, dtype=np.float32) * 1.5 + 1
    tex = ptxvm.TextureObject(lin)
    xs = [-1, 0, 3, 9, 10, 1000, -(2 ** 31)]
    got = run_tex(executor, tex, "1d", "f32", "s32", [xs])
    want = [[lin[x] if 0 <= x < 10 else 0, 0, 0, 0] for x in xs]
    np.testing.assert_array_equal(got, np.array(want, np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("geom", ["a1d", "a2d"])
@pytest.mark.parametrize("flt", ["point", "linear"])
def test_layered(executor, geom, flt):
    rng = np.random.default_rng(9)
    shape = (3, 5) if geom == "a1d" else (3, 4, 5)
    data = rng.uniform(-2, 2, shape).astype(np.float32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(data, layered=True), filter_mode=flt,
                              address_mode="border", border_color=(0.75, 0, 0, 0))
    n = 40
    xs = rng.uniform(-1, 6, n).tolist()
    ys = rng.uniform(-1, 5, n).tolist()
    layers = (np.arange(n) % 3).tolist()
    coords = [xs] if geom == "a1d" else [xs, ys]
    got = run_tex(executor, tex, geom, "f32", "f32", coords, layers=layers)
    want = []
    for i in range(n):
        layer = data[layers[i]].reshape((1, 1, 5, 1) if geom == "a1d" else (1, 4, 5, 1))
        want.append(model.fetch(layer, [c[i] for c in coords], modes=("border",) * 3, filter_mode=flt,
                                border=(0.75, 0, 0, 0)))
    np.testing.assert_array_equal(got, np.array(want, np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("flt", ["point", "linear"])
def test_cubemap(executor, flt):
    rng = np.random.default_rng(3)
    faces = rng.uniform(0, 1, (6, 4, 4)).astype(np.float32)
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(faces, cubemap=True), filter_mode=flt)
    dirs = rng.normal(size=(48, 3)).astype(np.float32)
    dirs[:6] = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]
    dirs[6:9] = [[1, 1, 0.5], [0.5, -1, -1], [-1, 0.25, 1]]
    got = run_tex(executor, tex, "cube", "f32", "f32", [dirs[:, 0], dirs[:, 1], dirs[:, 2]])
    want = []
    for x, y, z in dirs:
        face, s, t = model.cube_direction(x, y, z)
        want.append(model.fetch(faces[face].reshape(1, 4, 4, 1), [s, t], modes=("clamp",) * 3,
                                filter_mode=flt, normalized=True))
    np.testing.assert_array_equal(got, np.array(want, np.float32))


def test_model_matches_the_guide_by_hand():
    """The model itself against values worked out by hand from the guide's formulas."""
    t = np.array([10.0, 20.0, 40.0, 80.0], np.float32).reshape(1, 1, 4, 1)
    # x = 1.5 is texel 1's centre: alpha 0 -> T[1]
    assert model.fetch(t, [1.5], modes=("clamp",) * 3, filter_mode="linear")[0] == 20.0
    # x = 1.75: xb = 1.25, i = 1, alpha = 0.25 -> 0.75*20 + 0.25*40 = 25
    assert model.fetch(t, [1.75], modes=("clamp",) * 3, filter_mode="linear")[0] == 25.0
    # alpha = 0.3 is held as 77/256 (8 fraction bits, nearest)
    v = model.fetch(t, [1.8], modes=("clamp",) * 3, filter_mode="linear")[0]
    assert abs(v - (20 + 20 * 77 / 256)) < 1e-5
    # normalised wrap: u = 1.125 -> 0.125 -> x = 0.5 -> T[0]; mirror: u = 1.125 -> 0.875 -> T[3]
    assert model.fetch(t, [1.125], modes=("wrap",) * 3, normalized=True)[0] == 10.0
    assert model.fetch(t, [1.125], modes=("mirror",) * 3, normalized=True)[0] == 80.0
    assert model.fetch(t, [-0.5], modes=("border",) * 3, border=(5, 0, 0, 0))[0] == 5.0


@pytest.mark.parametrize("executor", EXECUTORS)
def test_pitched_numpy_memory_is_read_in_place(executor):
    """A 2D numpy array is pitched linear memory: sampled like an array, its own bytes read at
    the launch (a write after TextureObject() is seen)."""
    rng = np.random.default_rng(21)
    img = rng.uniform(-1, 1, (5, 7)).astype(np.float32)
    tex = ptxvm.TextureObject(img, filter_mode="linear", address_mode="border", border_color=(2, 0, 0, 0))
    img[2, 3] = 40.0
    xs = rng.uniform(-1, 8, 50).tolist()
    ys = rng.uniform(-1, 6, 50).tolist()
    got = run_tex(executor, tex, "2d", "f32", "f32", [xs, ys])
    want = _expected(img.reshape(1, 5, 7, 1), [xs, ys], modes=("border",) * 3, filter_mode="linear",
                     border=(2, 0, 0, 0))
    np.testing.assert_array_equal(got, want.astype(np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_srgb_decode_of_uint8_rgba(executor):
    """sRGB (IEC 61966-2-1 decode) on r, g, b of normalised uint8 texels, alpha untouched: each
    8-bit code's correctly rounded float32 decode."""
    rng = np.random.default_rng(31)
    img = rng.integers(0, 256, (3, 4, 4)).astype(np.uint8)
    img[0, 0] = (0, 10, 11, 255)                    # both sides of the 0.04045 knee
    tex = ptxvm.TextureObject(ptxvm.CudaArray.from_numpy(img, channels=4), read_mode="normalized_float",
                              srgb=True)
    xs = [x + 0.5 for y in range(3) for x in range(4)]
    ys = [y + 0.5 for y in range(3) for x in range(4)]
    got = run_tex(executor, tex, "2d", "f32", "f32", [xs, ys])
    c = img.reshape(-1, 4).astype(np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    lin[:, 3] = c[:, 3]
    lin[:, 3] = (img.reshape(-1, 4)[:, 3].astype(np.float32) / np.float32(255)).astype(np.float32)
    np.testing.assert_array_equal(got, lin.astype(np.float32))
