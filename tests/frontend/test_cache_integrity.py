"""The parse cache cannot be forged, corrupted or grow without bound (issue 12).

Entries are sealed with an HMAC under a per-user secret outside the cache directory
(ptxvm.diskcache); these tests damage, forge, move and overfill entries
and check that each is a miss (a fresh parse), never a wrong module, never a traceback,
and that nothing in a forged entry ever runs.
"""

from __future__ import annotations

import os
import pickle
import stat
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import ptxvm
from ptxvm import diskcache as cache_store
from ptxvm.frontend import cache, parser

from models.ptx_samples import VADD

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache dir and a secret in another directory; returns the cache dir."""
    d = tmp_path / "cache"
    monkeypatch.setenv("PTXVM_CACHE_DIR", str(d))
    monkeypatch.setenv("PTXVM_CACHE_SECRET", str(tmp_path / "config" / "cache-secret"))
    monkeypatch.delenv("PTXVM_NO_CACHE", raising=False)
    monkeypatch.delenv("PTXVM_CACHE_MAX", raising=False)
    return d


@pytest.fixture
def unpickles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every unpickling the cache starts: a damaged entry must be refused before one."""
    calls: list[int] = []
    real = cache._Unpickler.load

    def counting(self):
        calls.append(1)
        return real(self)

    monkeypatch.setattr(cache._Unpickler, "load", counting)
    return calls


def entries(d: Path) -> list[Path]:
    return sorted((d / "modules").glob("*/*.bin")) if d.exists() else []


def fresh(path: Path) -> ptxvm.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ptxvm.parse(path.read_bytes(), str(path))


def fixture_entry(env: Path) -> tuple[Path, str, bytes]:
    """Loads the fixture once (a miss that writes its entry): the entry's path, key and bytes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cache.load_file(FIXTURE)
    key = cache.entry_key(FIXTURE.read_bytes(), str(FIXTURE), True)
    path = cache.entry_path(key)
    assert entries(env) == [path]
    return path, key, path.read_bytes()


def flipped(blob: bytes, bit: int) -> bytes:
    b = bytearray(blob)
    b[bit // 8] ^= 1 << (bit % 8)
    return bytes(b)


# ------------------------------------------------------------------ single-bit flips

def test_every_single_bit_flip_fails_the_seal(env: Path) -> None:
    """All 8·len(entry) single-bit flips of a real entry (elementwise.ptx, ~160,000 flips) are
    refused by the seal check, the gate every read passes before anything is unpickled."""
    _, key, blob = fixture_entry(env)
    assert cache_store.unseal("modules", key, blob) is not None      # the intact entry passes
    b = bytearray(blob)
    accepted = []
    for i in range(len(b)):
        for k in range(8):
            b[i] ^= 1 << k
            if cache_store.unseal("modules", key, bytes(b)) is not None:
                accepted.append(8 * i + k)
            b[i] ^= 1 << k
    assert accepted == []


def _stride_bits(blob: bytes, stride: int) -> list[int]:
    header = 8 * cache_store.HEADER_BYTES
    return list(range(header)) + list(range(header, 8 * len(blob), stride))


def test_bit_flips_in_the_entry_file_are_misses(env: Path, parses: list, unpickles: list,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end through the file: every bit of the seal header (45 bytes: 360 flips) and
    every 499th bit of the rest (~320 flips) written into the entry file give a miss (a fresh
    parse, not a hit), with nothing unpickled and the entry rewritten good."""
    path, key, blob = fixture_entry(env)
    expected = fresh(FIXTURE)
    parsed = parser.check_text(FIXTURE.read_bytes(), str(FIXTURE))
    bits = _stride_bits(blob, 499)
    assert len(bits) > 600
    parses.clear()

    def stub(text, filename=None, **kw):           # the fresh parse, without its cost
        parses.append(filename)
        return parsed

    encoded: dict = {}
    real_encode = cache.encode_entry
    monkeypatch.setattr(cache, "encode_entry",     # the rewrite's pickling, done once
                        lambda payload, module: encoded.get((payload[0], id(module)))
                        or encoded.setdefault((payload[0], id(module)), real_encode(payload, module)))
    real = parser.check_text
    parser.check_text = stub
    try:
        for bit in bits:
            path.write_bytes(flipped(blob, bit))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = cache.check_file(FIXTURE)
            assert not result.cached and result.module is parsed[0], f"bit {bit}: a hit"
    finally:
        parser.check_text = real
    assert len(parses) == len(bits)
    assert unpickles == []                          # the rewrites were never read back
    assert path.read_bytes() == blob                # rewritten good (deterministic encoding)
    for bit in bits[::97]:                          # and a few with a real parse and comparison
        path.write_bytes(flipped(blob, bit))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert cache.load_file(FIXTURE) == expected


@pytest.mark.slow
def test_every_bit_flip_of_the_entry_file_is_a_miss_and_removed(env: Path, unpickles: list) -> None:
    """All ~160,000 single-bit flips of elementwise.ptx's entry, each written as the entry file:
    the reader returns a miss without unpickling and removes the file."""
    path, key, blob = fixture_entry(env)
    for bit in range(8 * len(blob)):
        path.write_bytes(flipped(blob, bit))
        assert cache._read_entry(path, key) is None, f"bit {bit}: a hit"
        assert not path.exists(), f"bit {bit}: the bad entry was left"
    assert unpickles == []
    path.write_bytes(blob)
    hit = cache._read_entry(path, key)
    assert hit is not None and hit.module == fresh(FIXTURE) and unpickles == [1]


# ------------------------------------------------------------------ truncation, forgery, moves

def test_every_truncation_is_a_miss(env: Path) -> None:
    _, key, blob = fixture_entry(env)
    assert all(cache_store.unseal("modules", key, blob[:n]) is None for n in range(len(blob)))
    assert cache_store.unseal("modules", key, blob + b"\0") is None      # and an extension


@pytest.mark.parametrize("damage", ["empty", "header-only", "half"])
def test_truncated_entry_file_is_a_miss_removed_and_rewritten(env: Path, parses: list,
                                                               unpickles: list, damage: str) -> None:
    path, key, blob = fixture_entry(env)
    cut = {"empty": 0, "header-only": cache_store.HEADER_BYTES, "half": len(blob) // 2}[damage]
    path.write_bytes(blob[:cut])
    assert cache._read_entry(path, key) is None and not path.exists()
    expected = fresh(FIXTURE)
    parses.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert cache.load_file(FIXTURE) == expected
        assert len(parses) == 1 and path.read_bytes() == blob
        assert cache.check_file(FIXTURE).cached
    assert unpickles == [1]


class _RunsCode:
    """Unpickling this object creates the marker file (what a hostile entry would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _hostile_payload(marker: Path) -> bytes:
    return cache._MAGIC + pickle.dumps(((), _RunsCode(marker)), protocol=pickle.HIGHEST_PROTOCOL)


def test_forged_entries_are_misses_and_never_run(env: Path, parses: list, tmp_path: Path,
                                                 unpickles: list) -> None:
    """Entries written by someone without the secret: a valid module pickle unsealed (the old
    format), with a made-up seal, or sealed under another secret; and a pickle that would run a
    shell command. Each is a miss, never unpickled, and the command never runs."""
    vadd = tmp_path / "vadd.ptx"
    vadd.write_text(VADD)
    good = cache.load_file(vadd)
    (path,) = entries(env)
    key = cache.entry_key(vadd.read_bytes(), str(vadd), True)
    marker = tmp_path / "pwned"
    module_payload = cache.encode_entry((key, [], []), good)
    other_secret = os.urandom(32)
    forgeries = {
        "bare module pickle": module_payload,
        "bare hostile pickle": _hostile_payload(marker),
        "hostile pickle, made-up seal": cache_store.SEAL_MAGIC + os.urandom(32) + _hostile_payload(marker),
        "hostile pickle, zero seal": cache_store.SEAL_MAGIC + bytes(32) + _hostile_payload(marker),
        "module sealed with another secret": cache_store.SEAL_MAGIC
        + cache_store._mac(other_secret, "modules", key, module_payload) + module_payload,
        "hostile sealed with another secret": cache_store.SEAL_MAGIC
        + cache_store._mac(other_secret, "modules", key, _hostile_payload(marker)) + _hostile_payload(marker),
    }
    for name, blob in forgeries.items():
        path.write_bytes(blob)
        n = len(parses)
        result = cache.check_file(vadd)
        assert not result.cached and len(parses) == n + 1, name
        assert result.module == good, name
        assert not marker.exists(), f"{name}: its code ran"
    assert unpickles == []


def test_a_leaked_secret_still_cannot_run_code(env: Path, tmp_path: Path) -> None:
    """Second wall: a hostile pickle sealed with the real secret (as if it had leaked) still
    cannot call anything but the IR's constructors: a miss, the command never runs."""
    vadd = tmp_path / "vadd.ptx"
    vadd.write_text(VADD)
    good = cache.load_file(vadd)
    (path,) = entries(env)
    key = cache.entry_key(vadd.read_bytes(), str(vadd), True)
    marker = tmp_path / "pwned"
    blob = cache_store.seal("modules", key, _hostile_payload(marker))
    assert blob is not None
    path.write_bytes(blob)
    result = cache.check_file(vadd)
    assert not result.cached and result.module == good
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system"):
        cache.decode_entry(_hostile_payload(marker))


def test_an_entry_moved_to_another_key_is_a_miss(env: Path, tmp_path: Path, parses: list) -> None:
    """The seal covers the key: a valid entry of file A copied over file B's entry is a miss
    for B (B gets its own module, not A's)."""
    a, b = tmp_path / "a.ptx", tmp_path / "b.ptx"
    a.write_text(VADD)
    b.write_text(VADD.replace("0f40000000", "0f40400000"))     # 2.0 -> 3.0
    ma, mb = cache.load_file(a), cache.load_file(b)
    assert ma != mb
    pa = cache.entry_path(cache.entry_key(a.read_bytes(), str(a), True))
    pb = cache.entry_path(cache.entry_key(b.read_bytes(), str(b), True))
    pb.write_bytes(pa.read_bytes())
    n = len(parses)
    result = cache.check_file(b)
    assert not result.cached and result.module == mb and len(parses) == n + 1
    assert cache_store.unseal("llvm", "x" * 64, pa.read_bytes()) is None   # the kind is covered too


# ------------------------------------------------------------------ the secret

def test_secret_is_private_and_outside_the_cache(env: Path, tmp_path: Path) -> None:
    cache.load_text(VADD, "v.ptx")
    secret = Path(os.environ["PTXVM_CACHE_SECRET"])
    st = secret.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_size == cache_store.SECRET_BYTES
    assert not secret.resolve().is_relative_to(env.resolve())
    assert not list(secret.parent.glob(".cache-secret-*")), "temporary file left behind"
    assert len(entries(env)) == 1


def _disabled_with_one_warning(env: Path, parses: list) -> None:
    expected = ptxvm.parse(VADD)
    parses.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            assert cache.load_text(VADD, "v.ptx") == expected
    mine = [w for w in caught if issubclass(w.category, cache_store.CacheWarning)]
    assert len(mine) == 1, [str(w.message) for w in caught]
    text = str(mine[0].message)
    assert "\n" not in text and "cache disabled" in text and os.environ["PTXVM_CACHE_SECRET"] in text
    assert len(parses) == 3 and entries(env) == []
    assert not cache.cache_enabled() and cache_store.seal("modules", "k", b"x") is None


@pytest.mark.parametrize("problem", ["a directory", "not private", "too short", "in an unwritable dir",
                                     "inside the cache dir"])
def test_unusable_secret_disables_the_cache_with_one_warning(env: Path, parses: list, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             problem: str) -> None:
    secret = Path(os.environ["PTXVM_CACHE_SECRET"])
    secret.parent.mkdir(parents=True)
    if problem == "a directory":
        secret.mkdir()
    elif problem == "not private":
        secret.write_bytes(os.urandom(32))
        secret.chmod(0o644)
    elif problem == "too short":
        secret.write_bytes(b"short")
        secret.chmod(0o600)
    elif problem == "in an unwritable dir":
        blocker = tmp_path / "a-file"
        blocker.write_text("not a directory")
        monkeypatch.setenv("PTXVM_CACHE_SECRET", str(blocker / "cache-secret"))
    else:
        monkeypatch.setenv("PTXVM_CACHE_SECRET", str(env / "cache-secret"))
    _disabled_with_one_warning(env, parses)


def test_secret_is_created_once_by_racing_processes(env: Path) -> None:
    """Several processes starting on an empty machine all end with the same secret (created
    atomically: none reads a half-written one, none replaces another's)."""
    code = ("import warnings; warnings.simplefilter('error');"
            "from ptxvm import diskcache as s; print(s._secret().hex())")
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    secrets = {o.strip() for o, _ in outs}
    assert len(secrets) == 1
    assert Path(os.environ["PTXVM_CACHE_SECRET"]).read_bytes().hex() in secrets


# ------------------------------------------------------------------ the size cap

def _variant(tmp_path: Path, i: int) -> Path:
    p = tmp_path / f"v{i}.ptx"
    p.write_text(VADD.replace("0f40000000", f"0f4{i:07x}"))      # same size, other content
    return p


def test_cap_evicts_least_recently_used(env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        parses: list) -> None:
    a, b, c, d = (_variant(tmp_path, i) for i in range(4))
    cache.load_file(a)
    (ea,) = entries(env)
    size = ea.stat().st_size
    monkeypatch.setenv("PTXVM_CACHE_MAX", str(int(size * 3.5)))    # room for three entries
    cache.load_file(b)
    cache.load_file(c)
    assert len(entries(env)) == 3
    cache.load_file(a)                      # a hit: a is now the most recently used
    assert len(parses) == 3
    cache.load_file(d)                      # over the cap: b, the least recently used, goes
    names = {p.name for p in entries(env)}
    key = lambda p: cache.entry_key(p.read_bytes(), str(p), True) + ".bin"   # noqa: E731
    assert names == {key(a), key(c), key(d)}
    n = len(parses)
    cache.load_file(b)
    assert len(parses) == n + 1             # b was evicted: parsed again
    assert sum(p.stat().st_size for p in entries(env)) <= size * 3.5


def test_cap_counts_every_kind_and_leaves_foreign_files(env: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap is on the whole directory: old LLVM objects and code objects are evicted
    too; files that are not ptxvm's entries are never touched."""
    llvm = env / "llvm" / "ab" / ("ab" + "0" * 62 + ".bin")
    hsaco = env / "hsaco" / "cd" / ("cd" + "1" * 62 + ".hsaco")
    foreign = [env / "notes.txt", env / "modules" / "ab" / "readme.txt", env / "llvm" / "x.bin"]
    for p in (llvm, hsaco, *foreign):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"\0" * 100_000)
        os.utime(p, ns=(1, 1))              # long unused
    monkeypatch.setenv("PTXVM_CACHE_MAX", "100K")      # both must go: 200K + the new entry
    cache.load_file(_variant(tmp_path, 1))
    assert not llvm.exists() and not hsaco.exists()
    assert all(p.exists() for p in foreign)
    assert len(entries(env)) == 1


def test_entry_larger_than_the_cap_is_not_stored(env: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXVM_CACHE_MAX", "1K")
    assert cache.load_file(_variant(tmp_path, 1)) == ptxvm.parse(_variant(tmp_path, 1).read_text())
    assert entries(env) == []
    monkeypatch.setenv("PTXVM_CACHE_MAX", "0")
    cache.load_file(_variant(tmp_path, 2))
    assert entries(env) == []


def test_bad_cap_warns_once_and_uses_the_default(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXVM_CACHE_MAX", "a lot")
    with pytest.warns(cache_store.CacheWarning, match="PTXVM_CACHE_MAX.*not a size: 'a lot'"):
        assert cache_store.max_bytes() == cache_store.DEFAULT_MAX_BYTES == 1 << 30
    monkeypatch.setenv("PTXVM_CACHE_MAX", "64M")
    assert cache_store.max_bytes() == 64 << 20


def test_hit_refreshes_the_entry_for_eviction(env: Path, tmp_path: Path) -> None:
    p = _variant(tmp_path, 1)
    cache.load_file(p)
    (e,) = entries(env)
    os.utime(e, ns=(1, 1))
    assert cache.check_file(p).cached
    assert e.stat().st_mtime_ns > 1


# ------------------------------------------------------------------ info and clear

def test_cache_info_and_clear(env: Path, tmp_path: Path) -> None:
    cache.load_file(_variant(tmp_path, 1))
    cache.load_file(_variant(tmp_path, 2))
    sizes = [p.stat().st_size for p in entries(env)]
    llvm = env / "llvm" / "ab" / ("ab" + "0" * 62 + ".bin")
    llvm.parent.mkdir(parents=True)
    llvm.write_bytes(b"x" * 10)
    stray = env / "modules" / "ab" / ".tmp-x.bin"         # a killed writer's temporary file
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"partial")
    foreign = env / "notes.txt"
    foreign.write_text("mine")
    info = cache.cache_info()
    assert info["dir"] == str(env) and info["enabled"] is True
    assert info["entries"] == 3 and info["bytes"] == sum(sizes) + 10
    assert info["max_bytes"] == 1 << 30 and info["secret"] == os.environ["PTXVM_CACHE_SECRET"]
    assert info["kinds"]["modules"] == {"entries": 2, "bytes": sum(sizes)}
    assert info["kinds"]["llvm"] == {"entries": 1, "bytes": 10}
    assert cache.cache_clear() == 3
    assert entries(env) == [] and not llvm.exists() and not stray.exists() and foreign.exists()
    assert cache.cache_info()["entries"] == 0 and cache.cache_clear() == 0


def test_cache_info_without_a_cache_dir(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTXVM_NO_CACHE", "1")
    info = cache.cache_info()
    assert info["entries"] == 0 and info["bytes"] == 0 and info["enabled"] is False
    assert not env.exists()


def test_usage_count_spares_a_scan_per_write(env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes keep ``<dir>/usage`` (bytes, time of the last scan) instead of scanning the whole
    directory each time: one scan for the first write, the count exact after; a missing or
    day-old count is rescanned."""
    scans: list[Path] = []
    real = cache_store._scan
    monkeypatch.setattr(cache_store, "_scan", lambda root, *a: scans.append(root) or real(root, *a))
    for i in range(5):
        cache.load_file(_variant(tmp_path, i))
    assert len(scans) == 1
    total, scanned = (int(x) for x in (env / "usage").read_text().split())
    assert total == sum(p.stat().st_size for p in entries(env))
    (env / "usage").unlink()
    cache.load_file(_variant(tmp_path, 5))
    assert len(scans) == 2
    day_old = time.time_ns() - 86_401 * 10**9
    (env / "usage").write_text(f"{total} {day_old}\n")
    cache.load_file(_variant(tmp_path, 6))
    assert len(scans) == 3
    total, scanned = (int(x) for x in (env / "usage").read_text().split())
    assert total == sum(p.stat().st_size for p in entries(env)) and scanned > day_old


def test_an_undercount_is_corrected_by_a_rescan(env: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Processes racing on the count can lose additions; a process rescans after writing
    cap/8 itself, so the cap holds anyway."""
    cache.load_file(_variant(tmp_path, 0))
    size = entries(env)[0].stat().st_size
    monkeypatch.setenv("PTXVM_CACHE_MAX", str(size * 4))       # a rescan after every 2nd write
    for i in range(1, 12):
        (env / "usage").write_text(f"0 {time.time_ns()}\n")     # someone lost every addition
        cache.load_file(_variant(tmp_path, i))
    assert sum(p.stat().st_size for p in entries(env)) <= size * 4
