"""Mipmapped textures: tex.level and tex.grad (PTX ISA 9.0 §9.7.10.3 tex; CUDA's tex*DLod,
tex*DGrad) on interp and cpu against the independent model in tests/models/texture.py, with
every mipmap sampler field (mipmapFilterMode, mipmapLevelBias, min/maxMipmapLevelClamp)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ptxvm
from tests.models import texture as model

EXECUTORS = ["interp", "cpu"]

# One thread per lane: coordinates x, y, z, the layer and six LOD/gradient values, each from
# an f32 (or u32) column; four results out.
_SRC = """.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 tex, .param .u64 cols, .param .u64 out, .param .u32 n)
{{
    .reg .b32 %r<40>;
    .reg .b64 %rd<12>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    ld.param.u32 %r2, [n];
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [tex];
    ld.param.u64 %rd2, [cols];
    cvta.to.global.u64 %rd2, %rd2;
    mul.wide.s32 %rd3, %r1, 48;
    add.s64 %rd2, %rd2, %rd3;
    ld.global.v4.b32 {{%r6, %r7, %r8, %r9}}, [%rd2];
    ld.global.v4.b32 {{%r20, %r21, %r22, %r23}}, [%rd2+16];
    ld.global.v2.b32 {{%r24, %r25}}, [%rd2+32];
    {op} {{%r10, %r11, %r12, %r13}}, [%rd1, {{{coords}}}]{extra};
    ld.param.u64 %rd4, [out];
    cvta.to.global.u64 %rd4, %rd4;
    mul.wide.s32 %rd5, %r1, 16;
    add.s64 %rd4, %rd4, %rd5;
    st.global.v4.b32 [%rd4], {{%r10, %r11, %r12, %r13}};
DONE:
    ret;
}}
"""
_COORDS = {"1d": "%r6", "2d": "%r6, %r7", "3d": "%r6, %r7, %r8, %r8", "a1d": "%r9, %r6",
           "a2d": "%r9, %r6, %r7, %r7", "cube": "%r6, %r7, %r8, %r8"}
_GRADS = {1: ", {%r20}, {%r21}", 2: ", {%r20, %r21}, {%r22, %r23}",
          3: ", {%r20, %r21, %r22, %r22}, {%r23, %r24, %r25, %r25}"}


def run(executor, tex, geom, form, rows, rtype="f32"):
    """rows: per lane (x, y, z, layer, v0..v5); form: "level", "grad" or "" (plain tex)."""
    n = len(rows)
    cols = np.zeros((n, 12), np.uint32)
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            cols[i, j] = np.uint32(v) if j == 3 else np.float32(v).view(np.uint32)
    axes = {"1d": 1, "2d": 2, "3d": 3, "a1d": 1, "a2d": 2, "cube": 3}[geom]
    extra = {"level": ", %r20", "grad": _GRADS.get(axes, ""), "": ""}[form]
    op = f"tex{'.' + form if form else ''}.{geom}.v4.{rtype}.f32"
    src = _SRC.format(op=op, coords=_COORDS[geom], extra=extra)
    out = np.zeros((n, 4), np.float32 if rtype == "f32" else np.int32)
    ptxvm.Module(src, f"mip_{geom}.ptx")["k"]((1,), (max(n, 1),), [tex, cols, out, n], device=executor)
    return out


def _chain(rng, shape, levels, ch=1, dtype=np.float32, **kw):
    mip = ptxvm.MipmappedArray(shape, dtype, ch, levels=levels, **kw)
    for lv in mip.levels:
        lv.copy_from_host(rng.uniform(-3, 3, lv.data.shape).astype(dtype))
    return mip


def _level_texels(mip, layer=None):
    """Each level as the model's (d, h, w, channels) (one layer for layered arrays)."""
    out = []
    for lv in mip.levels:
        d = lv.data if layer is None else lv.data[layer]
        out.append(d.reshape((1,) * (4 - d.ndim) + d.shape))
    return out


_LODS = [-2.0, -0.0, 0.0, 0.25, 0.5, 0.5000001, 0.75, 1.0, 1.5, 1.999, 2.5, 3.0, 3.49, 7.0, 100.0,
         math.inf, -math.inf, math.nan]
SAMPLERS = [dict(), dict(mipmap_filter_mode="linear"), dict(mipmap_level_bias=0.75),
            dict(mipmap_filter_mode="linear", mipmap_level_bias=-0.5, min_mipmap_level_clamp=0.5,
                 max_mipmap_level_clamp=2.25)]


def _model_kw(s):
    return dict(mip_filter=s.get("mipmap_filter_mode", "point"), bias=s.get("mipmap_level_bias", 0.0),
                lo=s.get("min_mipmap_level_clamp", 0.0), hi=s.get("max_mipmap_level_clamp"))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("geom,shape", [("1d", (16,)), ("2d", (12, 16)), ("3d", (8, 6, 8))])
@pytest.mark.parametrize("flt", ["point", "linear"])
@pytest.mark.parametrize("si", range(len(SAMPLERS)))
def test_tex_level_against_model(executor, geom, shape, flt, si):
    rng = np.random.default_rng(17 + si)
    mip = _chain(rng, shape, 0, ch=2)
    s = SAMPLERS[si]
    tex = ptxvm.TextureObject(mip, normalized_coords=True, filter_mode=flt, address_mode="wrap", **s)
    rows = []
    for i, lod in enumerate(_LODS * 2):
        xyz = rng.uniform(-0.5, 1.5, 3).tolist()
        rows.append(xyz + [0, lod, 0, 0, 0, 0, 0])
    got = run(executor, tex, geom, "level", rows)
    dims = len(shape)
    want = [model.fetch_mip(_level_texels(mip), r[:dims], r[4], modes=("wrap",) * 3, filter_mode=flt,
                            **_model_kw(s)) for r in rows]
    np.testing.assert_array_equal(got.view(np.uint32), np.array(want, np.float32).view(np.uint32))


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("geom,shape", [("1d", (32,)), ("2d", (16, 32)), ("3d", (8, 16, 4))])
@pytest.mark.parametrize("mf", ["point", "linear"])
def test_tex_grad_against_model(executor, geom, shape, mf):
    rng = np.random.default_rng(23)
    mip = _chain(rng, shape, 0)
    tex = ptxvm.TextureObject(mip, normalized_coords=True, filter_mode="linear", address_mode="clamp",
                              mipmap_filter_mode=mf)
    dims = len(shape)
    sizes = tuple(reversed(shape))
    rows = [[0.3, 0.6, 0.2, 0, 0, 0, 0, 0, 0, 0]]                # zero gradients: -inf, level 0
    for _ in range(40):
        g = (rng.uniform(-1, 1, 6) * 2.0 ** rng.uniform(-8, 1, 6)).tolist()
        rows.append(rng.uniform(-0.2, 1.2, 3).tolist() + [0] + g)
    got = run(executor, tex, geom, "grad", rows)
    want = []
    for r in rows:
        dx, dy = r[4:4 + dims], r[4 + dims:4 + 2 * dims]
        lod = model.lod_from_gradients(dx, dy, sizes)
        want.append(model.fetch_mip(_level_texels(mip), r[:dims], lod, modes=("clamp",) * 3,
                                    filter_mode="linear", mip_filter=mf))
    np.testing.assert_array_equal(got.view(np.uint32), np.array(want, np.float32).view(np.uint32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_layered_and_cube_levels(executor):
    rng = np.random.default_rng(31)
    mip = _chain(rng, (3, 8, 8), 3, layered=True)
    tex = ptxvm.TextureObject(mip, normalized_coords=True, filter_mode="linear", mipmap_filter_mode="linear")
    rows = [rng.uniform(0, 1, 2).tolist() + [0, i % 3, rng.uniform(-0.5, 2.5)] + [0] * 5 for i in range(24)]
    got = run(executor, tex, "a2d", "level", rows)
    want = [model.fetch_mip(_level_texels(mip, r[3]), r[:2], r[4], modes=("clamp",) * 3, filter_mode="linear",
                            mip_filter="linear") for r in rows]
    np.testing.assert_array_equal(got, np.array(want, np.float32))
    cube = _chain(rng, (6, 8, 8), 4, cubemap=True)
    tex = ptxvm.TextureObject(cube, normalized_coords=True, filter_mode="linear")
    rows = [rng.normal(size=3).tolist() + [0, rng.uniform(-0.5, 3.5)] + [0] * 5 for _ in range(24)]
    got = run(executor, tex, "cube", "level", rows)
    want = []
    for r in rows:
        face, s, t = model.cube_direction(*[np.float32(v) for v in r[:3]])
        faces = [lv.data[face].reshape((1,) + lv.data.shape[1:]) for lv in cube.levels]
        want.append(model.fetch_mip(faces, [s, t], r[4], modes=("clamp",) * 3, filter_mode="linear"))
    np.testing.assert_array_equal(got, np.array(want, np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_plain_tex_reads_level_zero_plus_bias_and_single_level_ignores_lod(executor):
    rng = np.random.default_rng(5)
    mip = _chain(rng, (8, 8), 4)
    rows = [[0.4, 0.7, 0, 0, 3.0] + [0] * 5]
    biased = ptxvm.TextureObject(mip, normalized_coords=True, mipmap_level_bias=2.0)
    got = run(executor, biased, "2d", "", rows)
    assert got[0, 0] == model.fetch(_level_texels(mip)[2], [0.4, 0.7], modes=("clamp",) * 3, normalized=True)[0]
    flat = ptxvm.TextureObject(mip.level(0), normalized_coords=True)      # a plain array: one level
    got = run(executor, flat, "2d", "level", rows)
    assert got[0, 0] == model.fetch(_level_texels(mip)[0], [0.4, 0.7], modes=("clamp",) * 3, normalized=True)[0]


def test_lod_model_by_hand():
    # 16 texels, gradient 1/4 of the texture: 4 texels a pixel -> lambda 2.
    assert model.lod_from_gradients([0.25], [0.0], (16,)) == 2.0
    assert model.lod_from_gradients([3 / 64, 0.0], [0.0, 1 / 32], (64, 64)) == np.float32(math.log2(3))
    assert model.mip_levels_used(1.5, 4, "point") == [(1, None)]           # .5 rounds down
    assert model.mip_levels_used(1.50001, 4, "point") == [(2, None)]
    assert model.mip_levels_used(9.0, 4, "linear") == [(3, 1.0), (3, 0.0)]
    assert model.mip_levels_used(0.25, 4, "linear", bias=1.0, hi=1.0) == [(1, 1.0), (2, 0.0)]


def test_mipmap_api():
    m = ptxvm.MipmappedArray((12, 40), np.float32, 4)
    assert [lv.shape for lv in m.levels] == [(12, 40), (6, 20), (3, 10), (1, 5), (1, 2), (1, 1)]
    c = ptxvm.MipmappedArray((12, 4, 4), np.float32, cubemap=True, levels=2)
    assert [lv.shape for lv in c.levels] == [(12, 4, 4), (12, 2, 2)]
    with pytest.raises(ptxvm.LaunchError, match=r"7 levels for extent \[40, 12\]; it has at most 6"):
        ptxvm.MipmappedArray((12, 40), levels=7)
    with pytest.raises(ptxvm.LaunchError, match=r"level\(6\): the array has levels 0..5"):
        m.level(6)
    with pytest.raises(ptxvm.LaunchError, match="normalized_coords=True"):
        ptxvm.TextureObject(m)
    with pytest.raises(ptxvm.LaunchError, match="max_anisotropy=8; ptxvm filters isotropically"):
        ptxvm.TextureObject(m, normalized_coords=True, max_anisotropy=8)
    with pytest.raises(ptxvm.LaunchError, match="mipmap_filter_mode=linear needs"):
        ptxvm.TextureObject(ptxvm.MipmappedArray((8,), np.int32), normalized_coords=True,
                            mipmap_filter_mode="linear")


def test_grad_on_a_cubemap_is_refused_at_the_instruction():
    src = _SRC.format(op="tex.grad.cube.v4.f32.f32", coords=_COORDS["cube"],
                      extra=", {%r20, %r21, %r22, %r22}, {%r23, %r24, %r25, %r25}")
    with pytest.raises(ptxvm.PtxError, match=r"tex.grad.cube.v4.f32.f32` derives a cubemap's LOD from gradients"):
        ptxvm.Module(src, "g.ptx")["k"]((1,), (1,), [0, np.zeros(10, np.uint32), np.zeros(4, np.float32), 1],
                                         device="interp")
