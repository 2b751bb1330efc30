"""Inputs that `translate` and the host JIT must refuse clearly or handle at scale (issue 12):
calls that do not match their callee, very long names, many kernels, `-o` as a file, a
missing ziglang.

What is legal comes from ptxas (``ptxas -arch=sm_80 f.ptx -o /dev/null``, CUDA 13), quoted
per case; the messages are ours and pinned exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.cli import main
from ptxvm.errors import PtxSemanticError

HEAD = ".version 7.0\n.target sm_80\n.address_size 64\n"


def _call_module(fdecl: str, fbody: str, caller_decls: str, call: str) -> str:
    """A `.func` declared by ``fdecl`` (line 5) and a kernel whose call sits on line 24
    (``caller_decls``: two lines)."""
    return HEAD + f"""
{fdecl}
{{
{fbody}
    ret;
}}

.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, 5;
    {{
{caller_decls}
    st.param.b32 [p0], %r1;
    {call}
    }}
    st.global.u32 [%rd1], %r2;
    ret;
}}
"""


F1 = ".func (.param .b32 r) f(.param .b32 a)"
F2 = ".func (.param .b32 r) f(.param .b32 a, .param .b32 b)"
BODY = "    .reg .b32 %x;\n    ld.param.b32 %x, [a];\n    st.param.b32 [r], %x;"
DECLS = "    .param .b32 p0;\n    .param .b32 q;"

# (name, callee, caller's two declaration lines, the call, our message after "file:24:5: error: ")
# ptxas's verdict for each: the comment.
BAD_CALLS = [
    # ptxas: "Call has wrong number of parameters"
    ("fewer_args", F2, BODY, DECLS, "call (q), f, (p0);",
     "`call (q), f, (p0);` passes 1 argument to `f`, which takes 2 (declared at line 5)"),
    ("more_args", F1, BODY, "    .param .b32 p0;\n    .param .b32 q, p1;", "call (q), f, (p0, p1);",
     "`call (q), f, (p0, p1);` passes 2 arguments to `f`, which takes 1 (declared at line 5)"),
    ("no_return_buffer", F1, BODY, "    .param .b32 p0;\n", "call f, (p0);",
     "`call f, (p0);` has no return list, but `f` returns 1 value (declared at line 5): "
     "write `call (r), ...` with a `.param` for the result"),
    ("return_buffer_for_void", ".func f(.param .b32 a)", "    .reg .b32 %x;\n    ld.param.b32 %x, [a];\n    add.s32 %x, %x, 1;",
     DECLS, "call (q), f, (p0);",
     "`call (q), f, (p0);` expects 1 result from `f`, which returns nothing (declared at line 5)"),
    # ptxas: "Type of argument does not match formal parameter 'a'" (+ "Alignment of ...")
    ("narrower_arg", ".func (.param .b32 r) f(.param .b64 a)", BODY, DECLS, "call (q), f, (p0);",
     "`call (q), f, (p0);` passes `p0` (.param .b32, 4 bytes) as argument 1 of `f`, whose parameter "
     "`a` is .param .b64 (8 bytes) (declared at line 5)"),
    ("scalar_for_array", ".func (.param .b32 r) f(.param .align 4 .b8 a[4])", BODY, DECLS,
     "call (q), f, (p0);",
     "`call (q), f, (p0);` passes `p0` (.param .b32, 4 bytes) as argument 1 of `f`, whose parameter "
     "`a` is .param .align 4 .b8[4] (4 bytes) (declared at line 5)"),
    ("wider_result", ".func (.param .b64 r) f(.param .b32 a)",
     "    .reg .b64 %x;\n    mov.b64 %x, 0;\n    st.param.b64 [r], %x;", DECLS, "call (q), f, (p0);",
     "`call (q), f, (p0);` passes `q` (.param .b32, 4 bytes) as result 1 of `f`, whose parameter "
     "`r` is .param .b64 (8 bytes) (declared at line 5)"),
    # ptxas: "Alignment of argument does not match formal parameter 'a'"
    ("alignment", ".func (.param .b32 r) f(.param .align 4 .b8 a[8])", BODY,
     "    .param .align 8 .b8 p0[8];\n    .param .b32 q;", "call (q), f, (p0);",
     "`call (q), f, (p0);` passes `p0` aligned to 8 bytes as argument 1 of `f`, whose parameter `a` "
     "is aligned to 4 (declared at line 5)"),
]


@pytest.mark.parametrize("name,fdecl,body,decls,call,message", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_mismatched_call_is_a_located_error_when_loaded(name, fdecl, body, decls, call, message):
    # The verifier runs the check, so the module is refused before any executor sees it.
    with pytest.raises(PtxSemanticError) as e:
        ptxvm.Module(_call_module(fdecl, body, decls, call), f"{name}.ptx")
    assert (e.value.filename, e.value.line, e.value.column) == (f"{name}.ptx", 24, 5)
    assert e.value.message == message


@pytest.mark.parametrize("name,fdecl,body,decls,call,message", BAD_CALLS[:3], ids=[c[0] for c in BAD_CALLS[:3]])
def test_mismatched_call_fails_translate_with_status_1(tmp_path, capsys, name, fdecl, body, decls, call,
                                                         message):
    src = tmp_path / f"{name}.ptx"
    src.write_text(_call_module(fdecl, body, decls, call))
    code = main(["translate", str(src), "--arch", "gfx90a", "-o", str(tmp_path / "out"), "--emit-llvm"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines()[0] == f"{src}:24:5: error: {message}"


def test_same_size_other_kind_is_accepted_and_runs():
    """ptxas accepts an `.f32` parameter given a `.b32` argument (same size): so do we."""
    k = ptxvm.Module(_call_module(".func (.param .b32 r) f(.param .f32 a)", BODY, DECLS,
                                  "call (q), f, (p0);\n    ld.param.b32 %r2, [q];"), "kinds.ptx")["k"]
    out = np.zeros(1, np.uint32)
    k(1, 1, (out,), device="cpu")
    assert out[0] == 5


def test_indirect_call_is_checked_against_its_prototype():
    """ptxas: "Call has wrong number of parameters" for a prototype with two parameters."""
    text = _call_module(F2, BODY, "    .param .b32 p0;\n    .param .b32 q; pr: .callprototype (.param .b32 _) _ "
                        "(.param .b32 _, .param .b32 _);", "mov.u64 %rd2, f; call (q), %rd2, (p0), pr;")
    with pytest.raises(PtxSemanticError) as e:
        ptxvm.Module(text, "proto.ptx")
    assert e.value.message == ("`call (q), %rd2, (p0), pr;` passes 1 argument to prototype `pr`, which "
                               "takes 2 (declared at line 22)")


def test_register_arguments_run_on_both_executors():
    """ptxas accepts `.reg` parameters passed registers (a non-ABI call, `ptxas -arch=sm_80`
    exit 0): the call passes %r1 = 5 by value, `f` adds 1, so out = 6 on `interp` and `cpu`
    (it was refused by the lifter until issue 14)."""
    text = _call_module(".func (.reg .b32 r) f(.reg .b32 a)", "    add.s32 r, a, 1;", DECLS,
                        "call (%r2), f, (%r1);")
    k = ptxvm.Module(text, "regs.ptx")["k"]
    for device in ("interp", "cpu"):
        out = np.zeros(1, np.uint32)
        k(1, 1, (out,), device=device)
        assert out[0] == 6, device


# ----------------------------------------------------------------------------- long names

def _long_names_module(n: int) -> tuple[str, str]:
    """A kernel and a `.func` whose registers, labels, `.param`s, function, global and kernel
    names are each about ``n`` characters; the two registers of each pair differ only in
    their last character (LLVM cuts local names at 1,024). Returns (text, kernel name)."""
    r, lab, fn, g, a, ret, p, q = (c + c[-1] * n for c in ("%r", "$L", "f", "g", "a", "o", "p", "q"))
    kernel = "k" * n
    text = HEAD + f"""
.global .u32 {g};
.func (.param .b32 {ret}) {fn}(.param .b32 {a})
{{
    .reg .b32 {r}a, {r}b;
    ld.param.b32 {r}a, [{a}];
    add.s32 {r}b, {r}a, 1;
    st.param.b32 [{ret}], {r}b;
    ret;
}}
.visible .entry {kernel}(.param .u64 out)
{{
    .reg .b32 {r}1, {r}2;
    .reg .b64 %rd1;
    ld.param.u64 %rd1, [out];
    mov.u32 {r}1, 5;
    bra {lab};
{lab}:
    {{
    .param .b32 {p};
    .param .b32 {q};
    st.param.b32 [{p}], {r}1;
    call ({q}), {fn}, ({p});
    ld.param.b32 {r}2, [{q}];
    }}
    st.global.u32 [{g}], {r}2;
    ld.global.u32 {r}2, [{g}];
    add.s32 {r}2, {r}2, {r}1;
    st.global.u32 [%rd1], {r}2;
    ret;
}}
"""
    return text, kernel


@pytest.mark.parametrize("n", [1_100, 10_000])
def test_very_long_names_run_on_the_jit(n):
    text, kernel = _long_names_module(n)
    out = np.zeros(1, np.uint32)
    ptxvm.Module(text, "long.ptx")[kernel](1, 1, (out,), device="cpu")
    assert out[0] == (5 + 1) + 5                  # f(5) = 6 through the global, plus %r1


@pytest.mark.lld
@pytest.mark.parametrize("n", [1_100, 10_000])
def test_very_long_names_translate_and_keep_their_symbols(tmp_path, n):
    from ptxvm.amdgpu import compile as compile_ptx
    from ptxvm.amdgpu.elf import read_elf
    text, kernel = _long_names_module(n)
    obj = compile_ptx(text, "gfx90a", filename="long.ptx")
    assert obj.kernels == [kernel]
    # The kernel keeps its full name as its symbol (a HIP host looks it up by that name) and
    # the global its own: LLVM does not cut global names.
    assert f'define amdgpu_kernel void @"{kernel}"' in obj.llvm_ir or f"define amdgpu_kernel void @{kernel}(" \
        in obj.llvm_ir
    assert "g" + "g" * n in obj.llvm_ir
    assert read_elf(obj.hsaco) is not None


# ----------------------------------------------------------------------------- --stats at scale

LISTING = """\
\t.text
\t.globl\tfirst
first:
; %bb.0:
\ts_load_dwordx2 s[0:1], s[4:5], 0x0
\tv_mov_b32_e32 v0, 0
.LBB0_1:                                ; a local label: not an instruction
\t// a comment
\tglobal_store_dword v0, v0, s[0:1]
\ts_endpgm
.Lfunc_end0:
\t.size\tfirst, .Lfunc_end0-first
"second$1":
\ts_endpgm
.Lfunc_end1:
"""


def test_instruction_counts_by_hand():
    from ptxvm.amdgpu.codeobject import count_instructions, instruction_counts
    assert instruction_counts(LISTING) == {"first": 4, "second$1": 1}
    assert count_instructions(LISTING, "second$1") == 1 and count_instructions(LISTING, "nope") == 0


def test_instruction_counts_are_one_pass_over_20000_functions():
    """The per-kernel scan re-split the listing for every kernel: 2,000 kernels took 105 s of
    counting (20,000: hours). One pass: well under a second for 20,000."""
    import time
    from ptxvm.amdgpu.codeobject import instruction_counts
    body = "\ts_load_dword s0, s[4:5], 0x0\n\tv_add_u32_e32 v0, s0, v0\n\ts_endpgm\n"
    asm = "".join(f"kern_{i}:\n{body}.Lfunc_end{i}:\n\t.size\tkern_{i}, .Lfunc_end{i}-kern_{i}\n"
                  for i in range(20_000))
    t0 = time.perf_counter()
    counts = instruction_counts(asm)
    assert time.perf_counter() - t0 < 5.0
    assert len(counts) == 20_000 and set(counts.values()) == {3}


# ----------------------------------------------------------------------------- -o and --offload-arch

SMALL = HEAD + """
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    mov.u32 %r1, 7;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""


@pytest.fixture
def small(tmp_path) -> Path:
    src = tmp_path / "small.ptx"
    src.write_text(SMALL)
    return src


@pytest.mark.lld
def test_output_is_a_file_for_one_input_and_one_target(tmp_path, capsys, small):
    out = tmp_path / "build" / "k.hsaco"
    code = main(["translate", str(small), "--offload-arch", "gfx90a", "-o", str(out), "--emit-llvm",
                 "--emit-asm", "--metadata"])
    assert code == 0, capsys.readouterr().err
    assert out.is_file() and out.read_bytes()[:4] == b"\x7fELF"
    assert sorted(p.name for p in out.parent.iterdir()) == ["k.hsaco", "k.json", "k.ll", "k.s"]
    assert capsys.readouterr().out == f"{out}: 1 kernel, {out.stat().st_size} bytes\n"


@pytest.mark.lld
def test_output_is_a_directory_when_it_is_one_or_ends_with_a_slash(tmp_path, capsys, small):
    assert main(["translate", str(small), "--arch", "gfx90a", "-o", str(tmp_path / "d") + "/"]) == 0
    assert (tmp_path / "d" / "small.gfx90a.hsaco").is_file()
    assert main(["translate", str(small), "--arch", "gfx1030", "-o", str(tmp_path / "d")]) == 0
    assert (tmp_path / "d" / "small.gfx1030.hsaco").is_file()


@pytest.mark.lld
def test_repeated_offload_arch_makes_a_directory_of_outputs(tmp_path, capsys, small):
    code = main(["translate", str(small), "--offload-arch", "gfx90a", "--offload-arch", "gfx1030",
                 "-o", str(tmp_path / "out")])
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["small.gfx1030.hsaco", "small.gfx90a.hsaco"]


def test_a_file_for_several_outputs_is_a_usage_error(tmp_path, capsys, small):
    code = main(["translate", str(small), "--arch", "gfx90a,gfx1030", "-o", str(tmp_path / "k.hsaco")])
    assert code == 2
    assert capsys.readouterr().err == (f"ptxvm translate: error: -o {tmp_path / 'k.hsaco'} names a file, but 1 "
                                       f"input for 2 targets make 2 code objects: give a directory (-o DIR/)\n")
    assert not (tmp_path / "k.hsaco").exists()


def test_a_code_object_named_like_a_side_output_is_a_usage_error(tmp_path, capsys, small):
    code = main(["translate", str(small), "--arch", "gfx90a", "-o", str(tmp_path / "k.ll"), "--emit-llvm"])
    assert code == 2
    assert capsys.readouterr().err == (f"ptxvm translate: error: -o {tmp_path / 'k.ll'}: a code object named like "
                                       f"a .ll output would be overwritten by it; name it e.g. "
                                       f"{tmp_path / 'k.hsaco'}\n")


def test_help_shows_the_file_output_and_offload_arch(capsys):
    assert main(["translate", "--help"]) == 0
    out = capsys.readouterr().out
    assert "ptxvm translate k.ptx --arch gfx90a -o k.hsaco" in out and "--offload-arch" in out
    assert "pip install 'ptxvm[amdgpu]'" in out


# ----------------------------------------------------------------------------- without ziglang

MISSING = "linking AMD code objects needs ld.lld from the ziglang package: pip install 'ptxvm[amdgpu]'"
_NO_ZIG = ("import sys; sys.modules['ziglang'] = None\n"       # find_spec('ziglang') is None: not installed
           "from ptxvm.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def _without_ziglang(tmp_path: Path, *argv: str):
    import os
    import subprocess
    import sys
    env = {**os.environ, "PTXVM_CACHE_DIR": str(tmp_path / "cache")}     # no linked object from a cache
    return subprocess.run([sys.executable, "-c", _NO_ZIG, *argv], capture_output=True, text=True, env=env,
                          timeout=300, check=False)


def test_without_ziglang_translate_says_which_extra_to_install(tmp_path, small):
    proc = _without_ziglang(tmp_path, "translate", str(small), "--arch", "gfx90a", "-o", str(tmp_path / "out/"))
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"error: {MISSING}\n")
    assert not (tmp_path / "out").exists()          # refused before any work or output


def test_without_ziglang_emit_llvm_and_asm_still_work(tmp_path, small):
    out = tmp_path / "k.hsaco"
    proc = _without_ziglang(tmp_path, "translate", str(small), "--arch", "gfx90a", "-o", str(out),
                            "--emit-llvm", "--emit-asm")
    assert (proc.returncode, proc.stderr) == (1, f"error: {out} not written: {MISSING}\n")
    assert not out.exists()
    assert 'define amdgpu_kernel void @"k"(' in (tmp_path / "k.ll").read_text()
    assert "global_store_dword" in (tmp_path / "k.s").read_text()


def test_without_ziglang_compile_raises_a_ptx_error(tmp_path):
    import os
    import subprocess
    import sys
    code = ("import sys; sys.modules['ziglang'] = None\nimport ptxvm\nfrom ptxvm.amdgpu import compile\n"
            f"try:\n    compile({SMALL!r}, 'gfx90a')\nexcept ptxvm.PtxError as e:\n"
            "    print(type(e).__name__, e.message, sep=': ')\n")
    env = {**os.environ, "PTXVM_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False)
    assert (proc.returncode, proc.stdout) == (0, f"LinkerMissingError: {MISSING}\n"), proc.stderr


@pytest.mark.parametrize("folders", [
    ("nvcc/sm80", "numba", "triton"),
    pytest.param(("",), marks=pytest.mark.slow, id="all"),       # with the -G and lineinfo builds: ~10 s
])
def test_no_call_in_the_fixture_corpus_is_refused(folders):
    """Every call nvcc, numba and Triton emitted in our fixtures passes ptxas: the check must
    refuse none of them."""
    import warnings
    from ptxvm.ir.calls_check import call_diagnostics
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    checked = 0
    for path in sorted(p for folder in folders for p in (fixtures / folder).rglob("*.ptx")):
        if "call" not in path.read_text(errors="replace"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ptxvm.PtxVersionWarning)       # newer .version: parsed anyway
            module = ptxvm.load(path)
        assert call_diagnostics(module) == [], path
        checked += 1
    assert checked >= 5
