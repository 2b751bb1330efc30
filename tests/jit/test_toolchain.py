"""The isolated LLVM code generator (ptxvm.backend.toolchain) and the in-process loader (ptxvm.jit.loader).

One worker process serves the whole file; tests that crash or kill it check that the
next compile starts a fresh one.
"""

from __future__ import annotations

import ctypes
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ptxvm import CodegenError
from ptxvm.backend import toolchain
from ptxvm.jit import loader
from ptxvm.jit.loader import elf_symbols, host_target, jit_ir, load_object
from ptxvm.backend.toolchain import compile_ir

HOST = host_target()
EM_AMDGPU = 224

MATH_IR = """
declare float @sinf(float)
declare float @expf(float)
define float @exp_sin(float %x) {
  %s = call float @sinf(float %x)
  %e = call float @expf(float %s)
  ret float %e
}
define i32 @twice_plus(i32 %x, i32 %y) {
  %a = shl i32 %x, 1
  %b = add i32 %a, %y
  ret i32 %b
}
"""

AMDGPU_KERNEL = """
declare i32 @llvm.amdgcn.workitem.id.x()
define amdgpu_kernel void @store_tid(ptr addrspace(1) %p) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %q = getelementptr i32, ptr addrspace(1) %p, i32 %t
  store i32 %t, ptr addrspace(1) %q
  ret void
}
"""

# Valid IR for any target, but x86 instruction selection has no pattern for an amdgcn intrinsic:
# LLVM aborts the process ("LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.workitem.id.x").
ABORTS_ON_HOST = """
declare i32 @llvm.amdgcn.workitem.id.x()
define i32 @tid() {
  %r = call i32 @llvm.amdgcn.workitem.id.x()
  ret i32 %r
}
"""


def host_compile(ir: str, **kw) -> toolchain.CompileResult:
    triple, cpu, features = HOST
    return compile_ir(ir, triple=triple, cpu=cpu, features=features, **kw)


def add_const_ir(name: str, k: int) -> str:
    return f"define i64 @{name}(i64 %x) {{\n  %y = add i64 %x, {k}\n  ret i64 %y\n}}\n"


def call_i64(lib: loader.LoadedObject, name: str, x: int) -> int:
    return ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(lib.address(name))(x)


# ------------------------------------------------------------------ compile, load, call

def test_compile_load_and_call_with_libm() -> None:
    res = host_compile(MATH_IR, use_cache=False, emit=("obj", "asm", "ll"))
    assert res.origin == "worker" and res.seconds > 0
    assert res.obj[:4] == b"\x7fELF"
    assert "twice_plus" in res.asm and "define" in res.optimized_ir
    lib = load_object(res.obj)
    assert lib.symbols == {"exp_sin", "twice_plus"}
    exp_sin = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)(lib.address("exp_sin"))
    for x in (0.0, 1.0, -2.5, 100.0):
        got = np.float32(exp_sin(x))
        want = np.float32(math.exp(float(np.float32(math.sin(x)))))
        assert abs(int(got.view(np.int32)) - int(want.view(np.int32))) <= 2, (x, got, want)
    twice_plus = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)(lib.address("twice_plus"))
    assert twice_plus(20, 2) == 42
    assert twice_plus(2**30, 0) == -(2**31)      # i32 wraparound, not Python ints


def test_missing_symbol_is_a_codegen_error() -> None:
    lib = jit_ir(add_const_ir("plus_one", 1))
    assert call_i64(lib, "plus_one", 41) == 42
    with pytest.raises(CodegenError, match="'nope' is not defined"):
        lib.address("nope")


def test_unresolvable_external_is_refused_before_linking() -> None:
    ir = ("declare i32 @ptxvm_test_no_such_function(i32)\n"
          "define i32 @f(i32 %x) {\n  %r = call i32 @ptxvm_test_no_such_function(i32 %x)\n  ret i32 %r\n}\n")
    with pytest.raises(CodegenError, match="ptxvm_test_no_such_function"):
        jit_ir(ir)


def test_externals_supply_a_callback() -> None:
    proto = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)
    callback = proto(lambda v: v * 3)
    ir = ("declare i64 @ptxvm_test_triple(i64)\n"
          "define i64 @g(i64 %x) {\n  %r = call i64 @ptxvm_test_triple(i64 %x)\n"
          "  %s = add i64 %r, 1\n  ret i64 %s\n}\n")
    lib = jit_ir(ir, externals={"ptxvm_test_triple": ctypes.cast(callback, ctypes.c_void_p).value})
    assert call_i64(lib, "g", 5) == 16


def test_loader_refuses_foreign_and_garbage_objects() -> None:
    amd = compile_ir(AMDGPU_KERNEL, triple="amdgcn-amd-amdhsa", cpu="gfx90a")
    with pytest.raises(CodegenError, match="ELF machine 224"):
        load_object(amd.obj)
    with pytest.raises(CodegenError):
        load_object(b"not an object file at all" * 4)


# ------------------------------------------------------------------ errors from LLVM

def test_parse_error_carries_llvms_message() -> None:
    with pytest.raises(CodegenError) as info:
        host_compile("define i32 @f(i32 %x) {\n  %y = frobnicate i32 %x\n  ret i32 %y\n}\n", use_cache=False)
    text = str(info.value)
    assert "could not parse" in text
    assert "<string>:2:" in text and "frobnicate" in text


def test_verifier_error_carries_llvms_message() -> None:
    ir = "define i32 @f() {\nentry:\n  %a = add i32 %b, 1\n  %b = add i32 %a, 1\n  ret i32 %a\n}\n"
    with pytest.raises(CodegenError, match="(?s)failed verification.*does not dominate all uses"):
        host_compile(ir, use_cache=False)


def test_llvm_abort_becomes_codegen_error_and_worker_restarts() -> None:
    before = toolchain.worker_stats()
    with pytest.raises(CodegenError) as info:
        host_compile(ABORTS_ON_HOST, use_cache=False)
    text = str(info.value)
    assert "LLVM ERROR: Cannot select" in text and "llvm.amdgcn.workitem.id.x" in text
    assert "SIGABRT" in text
    assert info.value.returncode == -signal.SIGABRT
    # This process is still here, and the next compile gets a fresh worker.
    lib = jit_ir(add_const_ir("after_crash", 7), use_cache=False)
    assert call_i64(lib, "after_crash", 1) == 8
    assert toolchain.worker_stats()["starts"] == before["starts"] + 1


def test_unknown_processor_is_refused() -> None:
    with pytest.raises(CodegenError, match="'gfx9999' is not a recognized processor"):
        compile_ir(AMDGPU_KERNEL, triple="amdgcn-amd-amdhsa", cpu="gfx9999", use_cache=False)


def test_timeout_kills_the_worker() -> None:
    t0 = time.perf_counter()
    with pytest.raises(CodegenError, match="timed out after 0.3 s"):
        toolchain._request({"op": "sleep", "seconds": 30, "triple": "test"}, 0.3)
    assert time.perf_counter() - t0 < 10
    assert toolchain.ping() > 0


def test_worker_killed_while_idle_is_replaced_transparently() -> None:
    pid = toolchain.ping()
    os.kill(pid, signal.SIGKILL)
    res = host_compile(add_const_ir("after_kill", 3), use_cache=False)
    assert call_i64(load_object(res.obj), "after_kill", 3) == 6
    assert toolchain.worker_stats()["pid"] != pid


def test_concurrent_compiles_from_threads() -> None:
    results: dict[int, int] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            lib = jit_ir(add_const_ir(f"thread_{k}", k * 1000), use_cache=False)
            results[k] = call_i64(lib, f"thread_{k}", k)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert results == {k: k * 1001 for k in range(6)}


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="emit"):
        host_compile(MATH_IR, emit=("exe",))
    with pytest.raises(ValueError, match="opt"):
        host_compile(MATH_IR, opt=4)


# ------------------------------------------------------------------ AMDGPU

@pytest.mark.parametrize("cpu", ["gfx90a", "gfx1030"])
def test_amdgpu_kernel_object_and_assembly(cpu: str) -> None:
    res = compile_ir(AMDGPU_KERNEL, triple="amdgcn-amd-amdhsa", cpu=cpu, emit=("obj", "asm"), use_cache=False)
    info = elf_symbols(res.obj)
    assert info is not None and info.machine == EM_AMDGPU and info.type == 1
    assert "store_tid" in info.defined
    assert "s_endpgm" in res.asm and "global_store_dword" in res.asm
    assert f".amdgcn_target \"amdgcn-amd-amdhsa--{cpu}" in res.asm


def test_deferred_assembly_matches_a_direct_compile() -> None:
    """``later=("asm",)``: made from the module the worker kept (one request, no new compile),
    or after a restart by compiling again; either way the same text as ``emit=("obj", "asm")``."""
    kw = {"triple": "amdgcn-amd-amdhsa", "cpu": "gfx90a", "use_cache": False}
    direct = compile_ir(AMDGPU_KERNEL, emit=("obj", "asm"), **kw)
    res = compile_ir(AMDGPU_KERNEL, emit=("obj",), later=("asm",), **kw)
    assert res.asm is None and res.obj == direct.obj
    requests = toolchain.worker_stats()["requests"]
    assert toolchain.emit_later(res, "asm") == direct.asm
    assert toolchain.worker_stats()["requests"] == requests + 1
    assert toolchain.emit_later(res, "asm") == direct.asm            # kept once: compiled again
    res2 = compile_ir(AMDGPU_KERNEL, emit=("obj",), later=("asm",), **kw)
    toolchain.shutdown_worker()
    assert toolchain.emit_later(res2, "asm") == direct.asm
    with pytest.raises(ValueError, match="deferred"):
        toolchain.emit_later(res2, "ll")


def test_worker_is_replaced_after_recycle_compiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """llvmlite's pass manager leaks in the worker (~0.5 MB a compile, and compiles slow down):
    after RECYCLE_COMPILES compiles the worker is retired and the next request starts another;
    results, and a listing deferred across the change, are unaffected."""
    monkeypatch.setattr(toolchain, "RECYCLE_COMPILES", 3)
    toolchain.shutdown_worker()
    kw = {"triple": "amdgcn-amd-amdhsa", "cpu": "gfx90a", "use_cache": False}
    direct = compile_ir(AMDGPU_KERNEL, emit=("obj", "asm"), **kw)
    starts = toolchain.worker_stats()["starts"]
    first_pid = toolchain.worker_stats()["pid"]
    host_compile(add_const_ir("f", 0), use_cache=False)
    kept = compile_ir(AMDGPU_KERNEL, emit=("obj",), later=("asm",), **kw)   # the third: retires it
    assert toolchain.worker_stats()["pid"] is None and first_pid is not None
    assert toolchain.emit_later(kept, "asm") == direct.asm                 # compiled again
    assert toolchain.worker_stats()["starts"] == starts + 1
    for k in range(4):
        lib = load_object(host_compile(add_const_ir("f", k), use_cache=False).obj)
        assert call_i64(lib, "f", 10) == 10 + k
    assert toolchain.worker_stats()["starts"] == starts + 2


# ------------------------------------------------------------------ caches

@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    toolchain.clear_memory_cache()
    return tmp_path


def test_disk_cache_hit_returns_identical_bytes_without_the_worker(fresh_cache: Path) -> None:
    ir = add_const_ir("cached_fn", 11)
    first = host_compile(ir, emit=("obj", "asm"))
    assert first.origin == "worker"
    entries = list((fresh_cache / "llvm").rglob("*.bin"))
    assert len(entries) == 1
    requests = toolchain.worker_stats()["requests"]

    toolchain.clear_memory_cache()
    second = host_compile(ir, emit=("asm", "obj"))         # same outputs, other order: same entry
    assert second.origin == "disk"
    assert second.obj == first.obj and second.asm == first.asm and second.seconds == first.seconds
    third = host_compile(ir, emit=("obj", "asm"))
    assert third.origin == "memory" and third.obj == first.obj
    assert toolchain.worker_stats()["requests"] == requests
    assert call_i64(load_object(second.obj), "cached_fn", 1) == 12

    # Any option is part of the key.
    assert host_compile(ir, emit=("obj", "asm"), opt=1).origin == "worker"


def test_corrupt_cache_entry_is_ignored_and_rewritten(fresh_cache: Path) -> None:
    ir = add_const_ir("corrupt_fn", 5)
    good = host_compile(ir)
    (entry,) = (fresh_cache / "llvm").rglob("*.bin")
    blob = entry.read_bytes()
    for damaged in (b"garbage", blob[: len(blob) // 2], blob[:-1] + bytes([blob[-1] ^ 1])):
        entry.write_bytes(damaged)
        toolchain.clear_memory_cache()
        requests = toolchain.worker_stats()["requests"]
        again = host_compile(ir)
        assert again.origin == "worker" and again.obj == good.obj
        assert toolchain.worker_stats()["requests"] == requests + 1
        toolchain.clear_memory_cache()          # the rewritten entry serves the next call
        reread = host_compile(ir)
        assert reread.origin == "disk" and reread.obj == good.obj


def test_no_cache_env_disables_both_caches(fresh_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXVM_NO_CACHE", "1")
    ir = add_const_ir("uncached_fn", 2)
    requests = toolchain.worker_stats()["requests"]
    a = host_compile(ir)
    b = host_compile(ir)
    assert a.origin == b.origin == "worker" and a.obj == b.obj
    assert toolchain.worker_stats()["requests"] == requests + 2
    assert not (fresh_cache / "llvm").exists()


# ------------------------------------------------------------------ lifecycle

def test_shutdown_and_restart() -> None:
    toolchain.ping()
    toolchain.shutdown_worker()
    assert toolchain.worker_stats()["pid"] is None
    assert toolchain.ping() > 0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_worker_exits_with_the_parent() -> None:
    code = textwrap.dedent("""
        from ptxvm.backend import toolchain
        print(toolchain.ping(), flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_forked_child_gets_its_own_worker() -> None:
    parent_pid = toolchain.ping()
    child = os.fork()
    if child == 0:     # the child: must not talk to the parent's worker
        try:
            ok = toolchain.ping() != parent_pid and call_i64(
                jit_ir(add_const_ir("in_child", 9), use_cache=False), "in_child", 1) == 10
        except BaseException:  # noqa: BLE001
            ok = False
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert toolchain.ping() == parent_pid
