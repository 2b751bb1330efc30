"""The whole-translation cache (ptxvm.amdgpu.objcache): a re-translation of unchanged PTX for
the same target is the stored code object, without parsing, lifting, LLVM or linking; anything
that may change the object is another key; a damaged entry is a miss."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import ptxvm
from ptxvm.amdgpu import codegen, objcache
from ptxvm.amdgpu.targets import load_target

# Links code objects: needs ld.lld from the ziglang wheel (the `amdgpu` extra).
pytestmark = pytest.mark.lld

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "nvcc" / "sm80"
TEXT = (FIX / "stencil2d.ptx").read_text()


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(d))
    monkeypatch.setenv("PTXVM_CACHE_SECRET", str(tmp_path / "secret" / "cache-secret"))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    return d


def _entries(d: Path) -> list[Path]:
    return sorted(p for p in (d / "hsaco").rglob("*.hsaco")) if (d / "hsaco").is_dir() else []


def _refuse(*a, **k):
    raise AssertionError("lifted again: the translation cache missed")


def test_a_retranslation_is_the_stored_object(cache, monkeypatch):
    first = ptxvm.compile(TEXT, "gfx90a")
    listing = first.asm
    with monkeypatch.context() as m:
        m.setattr(codegen, "lift_module", _refuse)
        again = ptxvm.compile(TEXT, "gfx90a")
    assert again.hsaco == first.hsaco and again.llvm_ir == first.llvm_ir
    assert again.metadata == first.metadata and again.note == first.note and again.kernels == first.kernels
    assert again.asm == listing and again.stats() == first.stats()    # (the listing: translated again)


def test_what_can_change_the_object_is_in_the_key():
    text = TEXT.encode()
    base = objcache.key(text, None, "gfx90a", 3)
    assert objcache.key(text, None, "gfx90a", 3) == base
    others = {objcache.key(text + b"\n", None, "gfx90a", 3), objcache.key(text, "k.ptx", "gfx90a", 3),
              objcache.key(text, None, "gfx1030", 3), objcache.key(text, None, "gfx90a", 2)}
    assert base not in others and len(others) == 4


def test_a_changed_target_description_is_another_entry(cache):
    tgt = load_target("gfx90a")
    ptxvm.compile(TEXT, tgt)
    ptxvm.compile(TEXT, dataclasses.replace(tgt, matrix_units=()))     # same name, other fields
    assert len(_entries(cache)) == 2 + 1          # two translations; one linked object (same code)


def test_a_damaged_entry_is_a_miss_and_rewritten(cache, monkeypatch):
    first = ptxvm.compile(TEXT, "gfx1030")
    key = codegen._object_key(TEXT, None, load_target("gfx1030"), 3, None)
    path = objcache._path(key)
    blob = bytearray(path.read_bytes())
    blob[-1] ^= 1
    path.write_bytes(bytes(blob))
    assert objcache.get(key) is None and not path.exists()
    assert ptxvm.compile(TEXT, "gfx1030").hsaco == first.hsaco
    monkeypatch.setattr(codegen, "lift_module", _refuse)
    assert ptxvm.compile(TEXT, "gfx1030").hsaco == first.hsaco


def test_off_with_the_other_caches(cache, monkeypatch):
    ptxvm.compile(TEXT, "gfx90a", use_cache=False)
    monkeypatch.setenv("PTXVM_NO_CACHE", "1")
    ptxvm.compile(TEXT, "gfx90a")
    assert _entries(cache) == []


def test_a_parsed_module_is_not_cached(cache):
    ptxvm.compile(ptxvm.parse(TEXT), "gfx90a")
    assert codegen._object_key(ptxvm.parse(TEXT), None, load_target("gfx90a"), 3, None) is None
    assert len(_entries(cache)) == 1          # only the linked object (amdgpu.link's cache)


def test_a_translation_that_warns_is_not_stored(cache, monkeypatch):
    real = codegen.lift_module

    def warning_lift(*a, **k):
        import warnings
        warnings.warn("a lifter warning", UserWarning)
        return real(*a, **k)
    monkeypatch.setattr(codegen, "lift_module", warning_lift)
    for _ in range(2):        # warns both times: nothing stored that would skip the warning
        with pytest.warns(UserWarning, match="a lifter warning"):
            ptxvm.compile(TEXT, "gfx90a")
    assert len(_entries(cache)) == 1          # only the linked object
