"""What the AMDGPU translator refuses, and how: an UnsupportedError naming the instruction
and its line, or a CodegenError for a code object that does not match its module."""

from __future__ import annotations

import struct

import pytest

import ptxvm
from ptxvm.amdgpu import load_target
from ptxvm.amdgpu.check import check_code_object
from ptxvm.amdgpu.layout import place_params
from ptxvm.amdgpu.lowering import lift_module
from ptxvm.amdgpu.msgpack import unpackb
from ptxvm.amdgpu.targets import UnknownTargetError

# Links code objects: needs ld.lld from the ziglang wheel (the `amdgpu` extra).
pytestmark = pytest.mark.lld

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
KERNEL = """
.visible .entry k(.param .u64 p)
{{
	.reg .pred %q;
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [p];
	mov.u32 %r1, %tid.x;
	{body}
	ret;
}}
"""


def lift(body: str, target: str = "gfx90a", extra: str = "") -> str:
    src = HEADER + extra + KERNEL.format(body=body)
    return lift_module(ptxvm.parse(src, filename="bad.ptx"), load_target(target))


@pytest.mark.parametrize("body, line, fragment", [
    ("brkpt;", 12, "debugger breakpoint"),
    ("isspacep.const %q, %rd1;", 12, "tests for the `.const` space"),
    ("mov.u32 %r2, %envreg3;", 12, "special register `%envreg3`"),
    ("barrier.cluster.arrive;", 12, ""),
    ("{ .reg .b128 %x<3>; atom.global.cas.b128 %x0, [%rd1], %x1, %x2; }", 12, "128-bit atomic"),
])
def test_unsupported_instructions_are_named_with_their_line(body, line, fragment):
    with pytest.raises(ptxvm.UnsupportedError) as info:
        lift(body)
    err = info.value
    assert (err.filename, err.line) == ("bad.ptx", line)
    opcode = body.split("; ")[1].split()[0] if body.startswith("{") else body.split()[0].rstrip(";")
    assert opcode in str(err) and "(target gfx90a)" in str(err)
    assert fragment in str(err)


def test_printf_is_unsupported():
    extra = ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 f, .param .b64 a);\n"
    body = """{
	.param .b64 param0;
	.param .b64 param1;
	.param .b32 retval0;
	st.param.b64 [param0], %rd1;
	st.param.b64 [param1], %rd1;
	call.uni (retval0), vprintf, (param0, param1);
	}"""
    with pytest.raises(ptxvm.UnsupportedError, match="calls `vprintf`"):
        lift(body, extra=extra)


def test_assert_traps():
    extra = (".extern .func __assertfail(.param .b64 m, .param .b64 f, .param .b32 l, .param .b64 fn, "
             ".param .b64 s);\n")
    body = """{
	.param .b64 param0;
	.param .b64 param1;
	.param .b32 param2;
	.param .b64 param3;
	.param .b64 param4;
	st.param.b64 [param0], %rd1;
	st.param.b64 [param1], %rd1;
	st.param.b32 [param2], %r1;
	st.param.b64 [param3], %rd1;
	st.param.b64 [param4], %rd1;
	call.uni __assertfail, (param0, param1, param2, param3, param4);
	}"""
    ir = lift(body, extra=extra)
    assert "call void @\"llvm.trap\"()" in ir


def test_relocations_only_for_64_bit_addresses():
    extra = ".global .align 4 .u32 narrow[1] = {k};\n"
    with pytest.raises(ptxvm.UnsupportedError, match="32-bit elements"):
        lift("mov.u64 %rd2, narrow;", extra=extra)


def test_module_without_kernels():
    src = HEADER + ".func f()\n{\n\tret;\n}\n"
    with pytest.raises(ptxvm.CodegenError, match="no kernels"):
        ptxvm.compile(src, target="gfx90a", filename="nokernel.ptx")


def test_unknown_target():
    with pytest.raises(UnknownTargetError, match="gfx1030"):
        ptxvm.compile(HEADER + KERNEL.format(body=""), target="gfx9000")


# ---------------------------------------------------------------------- verification

@pytest.fixture(scope="module")
def good():
    src = HEADER + KERNEL.format(body="st.global.u32 [%rd1], %r1;")
    module = ptxvm.parse(src, filename="good.ptx")
    obj = ptxvm.compile(module, target="gfx90a")
    return obj, {"k": place_params(module.kernels["k"])}


def test_check_accepts_the_real_object(good):
    obj, params = good
    note = check_code_object(obj.hsaco, load_target("gfx90a"), params)
    assert [k[".name"] for k in note["amdhsa.kernels"]] == ["k"]


def _patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


@pytest.mark.parametrize("what, patch, message", [
    ("machine", lambda d: _patched(d, 18, "<H", 62), "ELF machine"),
    ("abi version", lambda d: _patched(d, 8, "<B", 4), "ABI version"),
    ("e_flags", lambda d: _patched(d, 48, "<I", (struct.unpack_from("<I", d, 48)[0] & ~0xFF) | 0x36),
     "e_flags machine"),
    ("not elf", lambda d: b"\x7fELG" + d[4:], "not valid ELF"),
    ("truncated", lambda d: d[:200], "not valid ELF"),
])
def test_check_rejects_damaged_objects(good, what, patch, message):
    obj, params = good
    with pytest.raises(ptxvm.CodegenError, match=message):
        check_code_object(patch(obj.hsaco), load_target("gfx90a"), params)


def test_check_rejects_the_wrong_target(good):
    obj, params = good
    with pytest.raises(ptxvm.CodegenError) as info:
        check_code_object(obj.hsaco, load_target("gfx1030"), params)
    text = str(info.value)
    assert "e_flags machine is 0x3f, expected 0x36" in text and "amdhsa.target" in text
    assert "wavefront size 64, expected 32" in text


def test_check_rejects_a_layout_or_kernel_mismatch(good):
    obj, _ = good
    other = ptxvm.parse(HEADER + """
.visible .entry k(.param .u32 a, .param .u64 p)
{
	ret;
}
.visible .entry gone()
{
	ret;
}
""", filename="other.ptx")
    params = {name: place_params(k) for name, k in other.kernels.items()}
    with pytest.raises(ptxvm.CodegenError) as info:
        check_code_object(obj.hsaco, load_target("gfx90a"), params)
    text = str(info.value)
    assert "kernels missing from the metadata: gone" in text
    assert "1 explicit kernel arguments, PTX declares 2" in text
    assert "argument `a` at offset 0 size 8, PTX has offset 0 size 4" in text


def test_metadata_note_decodes_with_the_own_reader(good):
    obj, _ = good
    note = obj.note
    k = note["amdhsa.kernels"][0]
    assert k[".kernarg_segment_align"] == 8 and k[".max_flat_workgroup_size"] == 1024
    assert unpackb(b"\x81\xa1k\x93\x01\xc3\xc0") == {"k": [1, True, None]}
