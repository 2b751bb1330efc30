"""The LLVM object cache and the code-object cache only read entries sealed with this user's secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptxvm.amdgpu import link as amd_link
from ptxvm.backend import toolchain
from ptxvm.errors import CodegenError

IR = "define i64 @f(i64 %x) {\n  %y = add i64 %x, 1\n  ret i64 %y\n}\n"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PTXVM_CACHE_SECRET", str(tmp_path / "config" / "cache-secret"))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    toolchain.clear_memory_cache()
    return tmp_path / "cache"


def test_forged_llvm_entry_is_not_loaded(env: Path) -> None:
    """An entry in the old format with a recomputed SHA-256 (what anyone who can write the cache
    dir can make) must not be returned: its object code would be loaded and run."""
    kw = {"triple": "x86_64-unknown-linux-gnu", "emit": ("obj",)}
    good = toolchain.compile_ir(IR, **kw)
    (entry,) = (env / "llvm").rglob("*.bin")
    evil = toolchain.CompileResult(b"\x7fELF attacker code", None, None, 0.0, "worker", "")
    entry.write_bytes(toolchain._encode_entry(entry.stem, evil))
    toolchain.clear_memory_cache()
    again = toolchain.compile_ir(IR, **kw)
    assert again.origin == "worker" and again.obj == good.obj
    toolchain.clear_memory_cache()
    assert toolchain.compile_ir(IR, **kw).origin == "disk"      # the rewritten, sealed entry


@pytest.mark.lld
def test_planted_code_object_is_not_returned(env: Path) -> None:
    obj = b"\x7fELF not a real object"
    path = amd_link._cache_path(amd_link._cache_key(obj))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"attacker's code object")
    with pytest.raises(CodegenError):          # a miss: the (bad) object really goes to ld.lld
        amd_link.link(obj)
    assert not path.exists()
