"""The content-hash module cache (ptxvm.frontend.cache)."""

from __future__ import annotations

import gc
import warnings
from pathlib import Path

import pytest

import ptxvm
from ptxvm.frontend import cache
from ptxvm.ir.nodes import Instruction

from models.fixtures import PTX_FILES, fixture_id
from models.ptx_samples import BAD, VADD


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(d))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    return d


@pytest.fixture
def vadd(tmp_path: Path) -> Path:
    p = tmp_path / "vadd.ptx"
    p.write_text(VADD)
    return p


def entries(d: Path) -> list[Path]:
    return sorted((d / "modules").glob("*/*.bin")) if d.exists() else []


def test_second_load_hits_the_cache(cache_dir: Path, parses: list, vadd: Path) -> None:
    first = cache.load_file(vadd)
    assert len(parses) == 1 and len(entries(cache_dir)) == 1
    second = cache.load_file(vadd)
    assert len(parses) == 1
    assert second == first == ptxvm.parse(VADD)
    assert second is not first
    assert cache.check_file(vadd).cached
    # Source positions survive the round trip (they are not part of ==).
    a = [s.span for s in first.kernels["vadd"].body.walk()]
    b = [s.span for s in second.kernels["vadd"].body.walk()]
    assert a == b and a[0].filename == str(vadd) and a[0].line > 0


def test_public_load_uses_the_cache(cache_dir: Path, parses: list, vadd: Path) -> None:
    ptxvm.load(vadd)
    ptxvm.load(vadd)
    assert len(parses) == 1
    ptxvm.load(vadd, cache=False)
    assert len(parses) == 2


def test_cache_dir_from_environment(cache_dir: Path, vadd: Path) -> None:
    assert cache.cache_dir() == cache_dir
    cache.load_file(vadd)
    (entry,) = entries(cache_dir)
    assert entry.parent.parent == cache_dir / "modules"
    assert not list(entry.parent.glob(".tmp-*")), "temporary file left behind"


def test_disabled_by_environment_or_argument(cache_dir: Path, parses: list, vadd: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXVM_NO_CACHE", "1")
    cache.load_file(vadd)
    cache.load_file(vadd)
    assert len(parses) == 2 and entries(cache_dir) == []
    cache.load_file(vadd, use_cache=True)        # an explicit request wins over the environment
    assert len(entries(cache_dir)) == 1
    monkeypatch.setenv("PTXVM_NO_CACHE", "0")
    assert cache.cache_enabled()
    n = len(parses)
    cache.load_file(vadd, use_cache=False)
    assert len(parses) == n + 1


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "wrong-key"])
def test_corrupted_entry_is_ignored_and_rewritten(cache_dir: Path, parses: list, vadd: Path,
                                                  damage: str) -> None:
    good = cache.load_file(vadd)
    (entry,) = entries(cache_dir)
    blob = entry.read_bytes()
    if damage == "garbage":
        entry.write_bytes(b"PTXVMC1\n\x80\x05not a pickle at all")
    elif damage == "truncated":
        entry.write_bytes(blob[: len(blob) // 2])
    elif damage == "empty":
        entry.write_bytes(b"")
    else:   # a valid entry stored under the wrong name
        other = cache.encode_entry(("0" * 64, [], []), good)
        entry.write_bytes(other)
    assert cache.load_file(vadd) == good
    assert len(parses) == 2
    assert entry.read_bytes() != b"" and cache.load_file(vadd) == good
    assert len(parses) == 2, "the damaged entry was not rewritten"


def test_unwritable_cache_is_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, vadd: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(blocker))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    assert cache.load_file(vadd) == ptxvm.parse(VADD)


def test_content_change_invalidates(cache_dir: Path, parses: list, vadd: Path) -> None:
    before = cache.load_file(vadd)
    vadd.write_text(VADD.replace("0f40000000", "0f40400000"))   # 2.0 -> 3.0
    after = cache.load_file(vadd)
    assert len(parses) == 2 and after != before
    muls = [i for i in after.kernels["vadd"].body.walk() if isinstance(i, Instruction) and i.opcode == "mul"]
    assert str(muls[-1].operands[-1]) == "0f40400000"


def test_key_covers_filename_verify_and_toolchain(cache_dir: Path, parses: list, vadd: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    cache.load_file(vadd)
    copy = tmp_path / "copy.ptx"
    copy.write_text(VADD)
    m = cache.load_file(copy)                       # same bytes, other name: spans must name it
    assert len(parses) == 2
    assert next(m.kernels["vadd"].body.walk()).span.filename == str(copy)
    cache.load_file(vadd, verify=False)
    assert len(parses) == 3
    monkeypatch.setattr(cache, "toolchain_fingerprint", lambda: "grammar or table changed")
    cache.load_file(vadd)
    assert len(parses) == 4


def test_fingerprint_tracks_grammar_and_tables() -> None:
    fp = cache.toolchain_fingerprint()
    assert len(fp) == 64 and fp == cache.toolchain_fingerprint()


def test_errors_are_not_cached(cache_dir: Path, parses: list, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ptx"
    bad.write_text(BAD)
    for n in (1, 2):
        with pytest.raises(ptxvm.PtxError) as info:
            cache.load_file(bad)
        assert len(info.value.diagnostics) == 2 and info.value.diagnostics[0].line == 27
        assert len(parses) == n
    assert entries(cache_dir) == []
    result = cache.check_file(bad)
    assert not result.ok and len(result.errors) == 2


def test_load_text(cache_dir: Path, parses: list) -> None:
    a = cache.load_text(VADD, "mem.ptx")
    b = cache.load_text(VADD.encode(), "mem.ptx")
    assert a == b and len(parses) == 1


def test_warnings_are_replayed_on_a_hit(cache_dir: Path, parses: list, tmp_path: Path) -> None:
    p = tmp_path / "new.ptx"
    p.write_text(VADD.replace(".version 8.0", ".version 9.5"))
    for _ in range(2):
        with pytest.warns(UserWarning, match=r"new\.ptx:4: PTX ISA 9\.5 is newer"):
            cache.load_file(p)
    assert len(parses) == 1
    hit = cache.check_file(p)
    assert hit.cached and hit.warnings[0].line == 4 and hit.warnings[0].severity == "warning"


def test_gc_state_is_left_alone(cache_dir: Path, vadd: Path) -> None:
    cache.load_file(vadd)
    assert gc.isenabled()
    cache.load_file(vadd)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        cache.load_file(vadd)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_encoding_keeps_lookalike_values_apart() -> None:
    # ("b32",) and (ScalarType.B32,) are == in Python; sharing must not confuse them.
    m = ptxvm.parse(VADD)
    _, back = cache.decode_entry(cache.encode_entry((), m))
    for x, y in zip(m.kernels["vadd"].body.walk(), back.kernels["vadd"].body.walk()):
        if isinstance(x, Instruction):
            assert [type(t) for t in x.types] == [type(t) for t in y.types]
            assert [type(t) for t in x.modifiers] == [type(t) for t in y.modifiers]


MID_SIZED = [p for p in PTX_FILES if 20_000 < p.stat().st_size < 60_000][:3]


@pytest.mark.parametrize("path", MID_SIZED, ids=fixture_id)
def test_fixture_round_trip(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = ptxvm.parse(path.read_bytes(), str(path))
    _, back = cache.decode_entry(cache.encode_entry((), m))
    assert back == m


@pytest.mark.slow
@pytest.mark.parametrize("path", PTX_FILES, ids=fixture_id)
def test_every_fixture_round_trips(path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = ptxvm.parse(path.read_bytes(), str(path))
    _, back = cache.decode_entry(cache.encode_entry((), m))
    assert back == m
    spans = lambda mod: [s.span for f in mod.functions.values() if f.body for s in f.body.walk()]  # noqa: E731
    assert spans(back) == spans(m)


def test_cache_hits_leave_full_collections_working(cache_dir: Path, vadd: Path) -> None:
    """Cyclic garbage made around cache hits must still be reclaimed by the collector's own
    schedule. An earlier hit moved every young object to the oldest generation uncounted
    (gc.freeze + unfreeze): full collections stopped, and a fuzzing campaign, which lifts
    (cyclic llvmlite.ir garbage) around every hit, grew by GBs."""
    import weakref

    class Node:
        pass

    cache.load_file(vadd)
    gc.collect()
    alive = []
    for _ in range(300):
        keep = []
        for _ in range(2000):
            a, b = Node(), Node()
            a.other, b.other = b, a          # a cycle: only the collector frees it
            keep.append(a)
        alive.append(weakref.ref(keep[0]))
        cache.load_file(vadd)                # a hit while the cycles are young and alive
        del keep, a, b
    left = sum(r() is not None for r in alive)     # no explicit collection: its own schedule
    assert left < len(alive) // 2, f"{left} of {len(alive)} dropped cycles are still alive"


def test_a_cache_hit_warns_with_the_class_a_fresh_parse_used(tmp_path, monkeypatch) -> None:
    # A module newer than the ISA ptxvm knows warns with PtxVersionWarning (pyproject's filter
    # and users' filters select it by class); replayed from the cache it was a plain UserWarning.
    import warnings

    import ptxvm
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    src = tmp_path / "new.ptx"
    src.write_text(".version 9.9\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n")
    for _ in range(2):                       # a miss, then a hit
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ptxvm.load(src)
        assert [w.category for w in caught] == [ptxvm.PtxVersionWarning]
