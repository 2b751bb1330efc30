"""tex.level/tex.grad, sust.p, tld4 on cubemaps and the txq attributes on every AMD target:
image_sample_l / image_sample_d, image_store with the element x, image_gather4 with cube
coordinates, image_get_resinfo; what the AMD lowering refuses names the instruction. Running
them on the AMD ISA emulator is skipped: it executes no MIMG instructions."""

from __future__ import annotations

import re

import pytest

import ptxvm
from ptxvm.amdgpu import available
from ptxvm.amdgpu.texture import texture_unit

pytest.importorskip("llvmlite")

TARGETS = available()

_MIP = """.version 8.0
.target sm_80
.address_size 64
.visible .entry mip(.param .u64 t, .param .u64 s, .param .u64 out)
{
    .reg .b32 %r<16>;
    .reg .f32 %f<24>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [t];
    ld.param.u64 %rd2, [s];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    cvt.rn.f32.u32 %f1, %r1;
    mul.f32 %f2, %f1, 0f3C800000;
    tex.level.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd1, {%f2, %f2}], %f1;
    tex.grad.2d.v4.f32.f32 {%f7, %f8, %f9, %f10}, [%rd1, {%f2, %f2}], {%f2, %f1}, {%f1, %f2};
    tex.grad.3d.v4.f32.f32 {%f11, %f12, %f13, %f14}, [%rd1, {%f2, %f2, %f2, %f2}], {%f2, %f1, %f1, %f1}, {%f1, %f2, %f1, %f1};
    txq.num_mipmap_levels.b32 %r2, [%rd1];
    txq.level.width.b32 %r3, [%rd1], %r1;
    sust.p.2d.v4.b32.trap [%rd2, {%r1, %r2}], {%f3, %f7, %f11, %f1};
    add.f32 %f15, %f3, %f7;
    add.f32 %f15, %f15, %f11;
    add.s32 %r4, %r2, %r3;
    st.global.f32 [%rd3], %f15;
    st.global.u32 [%rd3+4], %r4;
    ret;
}
"""

_CUBE_GATHER = """.version 8.0
.target sm_80
.address_size 64
.visible .entry cube_gather(.param .u64 t, .param .u64 out)
{
    .reg .f32 %f<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [t];
    ld.param.u64 %rd2, [out];
    .reg .b32 %r<2>;
    mov.u32 %r1, %tid.x;
    cvt.rn.f32.u32 %f1, %r1;
    mov.f32 %f6, 0fBF800000;
    tld4.r.cube.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd1, {%f1, %f6, %f1, %f1}];
    st.global.v4.f32 [%rd2], {%f2, %f3, %f4, %f5};
    ret;
}
"""

_TXQ_FORMAT = """.version 8.0
.target sm_80
.address_size 64
.visible .entry q(.param .u64 t, .param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [t];
    ld.param.u64 %rd2, [out];
    txq.channel_order.b32 %r1, [%rd1];
    st.global.u32 [%rd2], %r1;
    ret;
}
"""


@pytest.mark.parametrize("target", TARGETS)
def test_mip_forms(target):
    if not texture_unit(target).sample_lod:
        # CDNA2/3: LLVM 19 answers "requested image instruction is not supported on this GPU"
        with pytest.raises(ptxvm.UnsupportedError, match=rf"<string>:15:5: .*`tex\.level\.2d.*{target} has no "
                                                         "image_sample_l/image_sample_d"):
            ptxvm.compile(_MIP, target=target)
        return
    asm = ptxvm.compile(_MIP, target=target).asm
    assert re.search(r"image_sample_l ", asm), target
    assert len(re.findall(r"image_sample_d ", asm)) == 2, target
    assert "image_get_resinfo" in asm and "image_store" in asm, target


@pytest.mark.parametrize("target", TARGETS)
def test_tld4_on_a_cubemap(target):
    if not texture_unit(target).gather4:
        with pytest.raises(ptxvm.UnsupportedError, match=rf"`tld4\.r\.cube.*{target} has no image_gather4"):
            ptxvm.compile(_CUBE_GATHER, target=target)
        return
    asm = ptxvm.compile(_CUBE_GATHER, target=target).asm
    assert re.search(r"image_gather4(_lz)? ", asm) and "v_cubeid_f32" in asm


def test_format_attributes_are_refused_with_the_location():
    with pytest.raises(ptxvm.UnsupportedError, match=r"<string>:10:5: .*`txq\.channel_order\.b32 .*` queries "
                                                     r"\.channel_order, which ptxvm's AMD lowering does not decode"):
        ptxvm.compile(_TXQ_FORMAT, target="gfx1100")


def test_emulator_runs_no_image_instructions():
    pytest.skip("the AMD ISA emulator (../shared/tools/amdgpu-emu) has no handler for MIMG image "
                "instructions (image_sample_l/_d, image_store, image_gather4): checked by their assembly")


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_nvcc_mipmap_fixture(target):
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80" / "mipmap.ptx"
    if not texture_unit(target).sample_lod:
        with pytest.raises(ptxvm.UnsupportedError, match=r"mipmap.ptx:\d+:\d+: .*`tex\.level\.2d"):
            ptxvm.compile(path.read_text(), target=target, filename=str(path))
        return
    asm = ptxvm.compile(path.read_text(), target=target, filename=str(path)).asm
    assert "image_sample_l " in asm and "image_sample_d " in asm and "image_store" in asm
