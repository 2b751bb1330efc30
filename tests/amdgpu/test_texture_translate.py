"""Textures and surfaces translate for every AMD target (issue 17 item 4): the imaging and
texture/surface fixtures (nvcc 13's PTX of tests/cuda/imaging.cu, texture_surface.cu) and the
`.texref`/`.surfref` module (tests/ptx/textures/texref.ptx) give image instructions on HIP's
descriptors; the forms each generation lacks (isa/targets/*.toml [texture]) are refused with
the instruction's location. Running them on the AMD ISA emulator is skipped: it executes no
image (MIMG) instructions."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.amdgpu import available
from ptxvm.amdgpu.texture import texture_unit

pytest.importorskip("llvmlite")

ROOT = Path(__file__).resolve().parents[1]
TEXREF = ROOT / "ptx" / "textures" / "texref.ptx"
NVCC = ROOT / "fixtures" / "nvcc"
TARGETS = available()


def _asm(path: Path, target: str) -> str:
    return ptxvm.compile(path.read_text(), target=target, filename=str(path)).asm


def _body(asm: str, kernel: str) -> str:
    start = asm.index(f"\n{kernel}:\n")
    return asm[start:asm.index(".Lfunc_end", start)]


def test_every_target_has_a_texture_section():
    for t in TARGETS:
        unit = texture_unit(t)
        assert unit.descriptor in ("gfx9", "gfx10") and unit.sampler_offset == 48, t
    assert not texture_unit("gfx90a").gather4 and not texture_unit("gfx942").sample_lz
    assert texture_unit("gfx1100").descriptor == "gfx10" and texture_unit("gfx906").descriptor == "gfx9"


@pytest.mark.parametrize("target", TARGETS)
def test_texref_module(target):
    asm = _asm(TEXREF, target)
    blur, copy = _body(asm, "blur_ref"), _body(asm, "copy_surf")
    assert len(re.findall(r"image_sample(_lz)? ", blur)) == 2
    assert "image_load" in copy and "image_store" in copy and "image_get_resinfo" in copy
    assert "s_trap" in asm                                   # sust/suld .trap out of range
    # The references are module globals a host writes a handle into (hipModuleGetGlobal).
    for name in ("tref", "sref"):
        assert re.search(rf"\.globl\s+{name}\b", asm) and f"{name}@" in asm


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fixture", ["imaging", "texture_surface"])
def test_nvcc_fixtures(target, fixture):
    for build in sorted(p.parent.name for p in NVCC.glob(f"*/{fixture}.ptx"))[:2]:
        asm = _asm(NVCC / build / f"{fixture}.ptx", target)
        assert re.search(r"image_sample(_lz)? ", asm), (build, target)
        assert "image_load" in asm and "image_store" in asm, (build, target)
        if fixture == "imaging":
            assert "buffer_load_format" in asm                 # tex1Dfetch on linear memory
            assert "v_cubeid_f32" in asm and "v_cubema_f32" in asm      # cube_lookup


_FORMS = """.version 8.0
.target sm_80
.address_size 64
.visible .entry forms(.param .u64 t, .param .u64 s, .param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .f32 %f<16>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [t];
    ld.param.u64 %rd2, [s];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    cvt.rn.f32.u32 %f1, %r1;
    txq.width.b32 %r2, [%rd1];
    txq.array_size.b32 %r3, [%rd1];
    tex.a2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%r1, %f1, %f1, %f1}];
    tex.3d.v4.s32.s32 {%r4, %r5, %r6, %r7}, [%rd1, {%r1, %r2, %r3, %r3}];
    sured.b.add.1d.u32.clamp [%rd2, {%r1}], %r2;
    sured.b.max.2d.s32.zero [%rd2, {%r1, %r1}], %r3;
    sust.b.2d.v4.b8.zero [%rd2, {%r1, %r2}], {%r1, %r2, %r3, %r4};
    suq.height.b32 %r8, [%rd2];
    add.f32 %f6, %f2, %f5;
    add.s32 %r9, %r4, %r8;
    st.global.f32 [%rd3], %f6;
    st.global.u32 [%rd3+4], %r9;
    ret;
}
"""

_TLD4 = """.version 8.0
.target sm_80
.address_size 64
.visible .entry gather(.param .u64 t, .param .u64 out)
{
    .reg .f32 %f<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [t];
    ld.param.u64 %rd2, [out];
    mov.f32 %f1, 0f3F000000;
    tld4.g.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%f1, %f1}];
    st.global.v4.f32 [%rd2], {%f2, %f3, %f4, %f5};
    ret;
}
"""


@pytest.mark.parametrize("target", ["gfx906", "gfx90a", "gfx1030", "gfx1100"])
def test_instruction_forms(target):
    asm = ptxvm.compile(_FORMS, target=target).asm
    assert re.search(r"image_sample(_lz)? .* da|image_sample(_lz)?\s.*SQ_RSRC_IMG_2D_ARRAY", asm)
    assert "image_load" in asm and "image_get_resinfo" in asm
    assert "image_atomic_add" in asm and "image_atomic_smax" in asm and "image_store" in asm


@pytest.mark.parametrize("target", TARGETS)
def test_tld4_is_image_gather4_or_refused_where_the_target_has_none(target):
    if texture_unit(target).gather4:
        asm = ptxvm.compile(_TLD4, target=target).asm
        assert re.search(r"image_gather4(_lz)? .*dmask:0x2", asm)
    else:
        with pytest.raises(ptxvm.UnsupportedError, match=rf"<string>:11:5: .*`tld4\.g\.2d\.v4\.f32\.f32.*"
                                                         rf"{target} has no image_gather4"):
            ptxvm.compile(_TLD4, target=target)


def test_emulator_runs_no_image_instructions():
    pytest.skip("the AMD ISA emulator (tinygrad's mock GPU in ../shared/tools/amdgpu-emu) has no handler for "
                "MIMG image instructions (its CDNA tables have none, its RDNA3 MIMG class is decoded only), "
                "so translated texture kernels cannot be run on it; they are checked by their assembly")


def test_amd_launchers_refuse_host_texture_objects():
    """A TextureObject's handle indexes the host executors' table; an AMD launch would read it
    as the address of HIP's descriptor record, so it is refused before anything runs."""
    from ptxvm.driver import kernarg
    m = ptxvm.Module(_TLD4)
    obj = ptxvm.compile(_TLD4, target="gfx1100")
    tex = ptxvm.TextureObject(ptxvm.CudaArray((2, 2), np.float32))
    with pytest.raises(ptxvm.LaunchError, match=r"argument `t`: a ptxvm.TextureObject .*HIP's image descriptors"):
        kernarg.pack(obj.metadata["gather"], m["gather"].params, [tex, np.zeros(4, np.float32)], (1, 1, 1),
                     (1, 1, 1), device="emu:gfx1100")
