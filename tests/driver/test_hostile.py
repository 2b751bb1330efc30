"""Hostile kernels: each attacks one state space the executors address, and must end in the same
ptxvm error (class, kernel, block, thread, PTX line, state space) on the interpreter and on the
host JIT, with the process alive. Each executor runs every case in a child process (a crash must
not take pytest with it), which prints one JSON line per case.

The kernels are ours, small and legal PTX (``ptxas -arch=sm_80`` accepts each; see
``test_every_hostile_kernel_is_legal_ptx``). The expected outcome of each is the PTX ISA's:
every access outside its state space's bounds, a recursion past the stack budget and a call
through an address that is no function are errors of the thread that made them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from models.hostile import LOAD_OUT, OUT, REGS, entry, recursion, run_cases, where


def _fparam(access: str) -> str:
    """A `.func` with an 8-byte parameter ``a0`` and an 8-byte result ``r0`` that makes ``access``."""
    return entry("{\n.param .b64 p;\n.param .b64 q;\nst.param.b64 [p], %rd1;\ncall (q), f, (p);\n}",
                  before=f".func (.param .b64 r0) f(.param .b64 a0)\n{{\n{REGS}mov.u64 %rd1, 7;\n{access}\n"
                         "st.param.b64 [r0], %rd1;\nret;\n}\n")


# name -> (PTX, grid, block, arguments: "out" = a 6-word u32 array, ints as they are, dynamic shared)
CASES: dict[str, tuple[str, int, int, tuple, int]] = {
    "param_past_block": (entry("ld.param.u64 %rd2, [pout+4096];"), 1, 1, ("out",), 0),
    "param_far": (entry("ld.param.u64 %rd2, [pout+268435456];"), 1, 1, ("out",), 0),
    "param_below_block": (entry("ld.param.u64 %rd2, [pout+-8];"), 1, 1, ("out",), 0),
    # The block is 16 bytes (8 + 4, padded): the second element, at 16, is past it.
    "param_vector_straddles_end": (entry("ld.param.v2.u64 {%rd2, %rd3}, [pout+8];", OUT + ", .param .u32 n"),
                                   1, 1, ("out", 5), 0),
    # A store past a call's argument record (ptxas itself crashes on one past a callee's result).
    "func_param_store_past_record": (
        entry("{\n.param .b64 p;\n.param .b64 q;\nst.param.b64 [p+64], %rd1;\ncall (q), f, (p);\n}",
               before=f".func (.param .b64 r0) f(.param .b64 a0)\n{{\n{REGS}ld.param.b64 %rd1, [a0];\n"
                      "st.param.b64 [r0], %rd1;\nret;\n}\n"), 1, 1, ("out",), 0),
    "func_param_load_far": (_fparam("ld.param.b64 %rd2, [a0+268435456];"), 1, 1, ("out",), 0),
    "recursion_64k_params_400_deep": (recursion(65536, 400), 1, 1, ("out",), 0),
    "recursion_64k_params_8_blocks": (recursion(65536, 4000), 8, 2, ("out",), 0),
    "recursion_past_call_depth": (recursion(4, 5000), 1, 1, ("out",), 0),
    "local_past_end": (entry("st.local.u32 [buf+16], %r1;", decls=".local .align 4 .b8 buf[16];\n"),
                       1, 1, ("out",), 0),
    "local_below_start": (entry("mov.u64 %rd2, buf;\nsub.s64 %rd3, %rd2, 4;\nld.local.u32 %r3, [%rd3];",
                                 decls=".local .align 4 .b8 buf[16];\n"), 1, 1, ("out",), 0),
    "shared_static_past_end": (entry("mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\nmov.u32 %r3, s;\n"
                                      "add.s32 %r4, %r3, %r2;\nst.shared.u32 [%r4], %r1;",
                                      decls=".shared .align 4 .b8 s[64];\n"), 1, 32, ("out",), 0),
    "shared_below_start": (entry("mov.u32 %r3, s;\nsub.s32 %r4, %r3, 4;\nld.shared.u32 %r5, [%r4];",
                                  decls=".shared .align 4 .b8 s[64];\n"), 1, 1, ("out",), 0),
    "shared_dynamic_past_end": (entry("mov.u32 %r1, %tid.x;\nshl.b32 %r2, %r1, 2;\nmov.u32 %r3, dyn;\n"
                                       "add.s32 %r4, %r3, %r2;\nst.shared.u32 [%r4], %r1;",
                                       before=".extern .shared .align 16 .b8 dyn[];\n"), 1, 32, ("out",), 48),
    "shared_vector_straddles_end": (entry("mov.u32 %r3, s;\nld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r3+48];",
                                           decls=".shared .align 16 .b8 s[56];\n"), 1, 1, ("out",), 0),
    "const_past_end": (entry("mov.u64 %rd2, c;\nld.const.u32 %r1, [%rd2+4096];",
                              before=".const .align 4 .b8 c[16];\n"), 1, 1, ("out",), 0),
    "global_vector_straddles_end": (entry(LOAD_OUT + "ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd1+16];"),
                                    1, 1, ("out",), 0),
    "global_store_far": (entry(LOAD_OUT + "st.global.u32 [%rd1+268435456], %r1;"), 1, 1, ("out",), 0),
    "generic_past_shared": (entry("mov.u64 %rd2, s;\ncvta.shared.u64 %rd3, %rd2;\nld.u32 %r1, [%rd3+64];",
                                   decls=".shared .align 4 .b8 s[64];\n"), 1, 1, ("out",), 0),
    "generic_past_local": (entry("mov.u64 %rd2, buf;\ncvta.local.u64 %rd3, %rd2;\nld.u32 %r1, [%rd3+16];",
                                  decls=".local .align 4 .b8 buf[16];\n"), 1, 1, ("out",), 0),
    # `mov` of a kernel parameter's name gives its .param address (§5.1.6.1), cvta.param its
    # generic one; 16 bytes on is past the block.
    "generic_past_param": (entry("mov.u64 %rd2, pout;\ncvta.param.u64 %rd3, %rd2;\nld.u64 %rd4, [%rd3+16];"),
                           1, 1, ("out",), 0),
    "atomic_global_past_end": (entry(LOAD_OUT + "atom.global.add.u32 %r1, [%rd1+24], 1;"), 1, 1, ("out",), 0),
    "atomic_shared_past_end": (entry("mov.u32 %r3, s;\natom.shared.add.u32 %r1, [%r3+64], 1;",
                                      decls=".shared .align 4 .b8 s[64];\n"), 1, 1, ("out",), 0),
    "red_global_far": (entry(LOAD_OUT + "red.global.add.u32 [%rd1+268435456], 1;"), 1, 1, ("out",), 0),
    "cp_async_shared_destination_below": (
        entry(LOAD_OUT + "mov.u32 %r3, s;\nsub.s32 %r4, %r3, 16;\ncp.async.ca.shared.global [%r4], [%rd1], 16;",
               decls=".shared .align 16 .b8 s[64];\n"), 1, 1, ("out",), 0),
    "cp_async_global_source_past_end": (
        entry(LOAD_OUT + "mov.u32 %r3, s;\ncp.async.ca.shared.global [%r3], [%rd1+16], 16;",
               decls=".shared .align 16 .b8 s[64];\n"), 1, 1, ("out",), 0),
    "indirect_call_bad_address": (
        entry("mov.u64 %rd2, 12345;\n{\n.param .b32 a;\n.param .b32 r;\nst.param.b32 [a], %r1;\n"
               "proto: .callprototype (.param .b32 _) _ (.param .b32 _);\ncall (r), %rd2, (a), proto;\n}",
               before=".func (.param .b32 r) g(.param .b32 a)\n{\n.reg .b32 %r<2>;\nld.param.b32 %r1, [a];\n"
                      "st.param.b32 [r], %r1;\nret;\n}\n"), 1, 1, ("out",), 0),
}

# Where the interpreter is wrong today (the "interp" helper of issue 12 fixes these): the case
# then passes on the JIT alone, and the xfail turns into a failure when the interpreter is fixed.
INTERP_WRONG: dict[str, str] = {}


_RESULTS: dict[str, dict[str, dict]] = {}


def _results(device: str) -> dict[str, dict]:
    if device not in _RESULTS:
        _RESULTS[device] = run_cases(device, CASES)
    return _RESULTS[device]


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_kernel_ends_the_same_on_both_executors(name, request):
    pytest.importorskip("llvmlite")
    if name in INTERP_WRONG:
        request.applymarker(pytest.mark.xfail(strict=True, reason=INTERP_WRONG[name]))
    interp, cpu = _results("interp")[name], _results("cpu")[name]
    assert interp["outcome"] not in ("ok",) and not interp["outcome"].startswith("raw"), interp
    assert cpu["outcome"] not in ("ok",) and not cpu["outcome"].startswith("raw"), cpu
    assert where(interp) == where(cpu), (interp, cpu)


@pytest.mark.skipif(shutil.which("ptxas") is None and not Path("/usr/local/bin/ptxas").exists(),
                    reason="ptxas is not installed")
def test_every_hostile_kernel_is_legal_ptx(tmp_path):
    ptxas = shutil.which("ptxas") or "/usr/local/bin/ptxas"
    bad = {}
    for name, (text, *_rest) in CASES.items():
        f = tmp_path / f"{name}.ptx"
        f.write_text(text)
        p = subprocess.run([ptxas, "-arch=sm_80", str(f), "-o", os.devnull], capture_output=True, text=True)
        if p.returncode:
            bad[name] = p.stderr.strip()
    assert not bad, bad
