"""The on-disk store under ptxvm's caches: sealed entries, a size cap, inspection.

Every cache of ptxvm (parsed modules here, compiled LLVM objects in ``backend.toolchain``,
linked code objects in ``amdgpu.link``) keeps files under one directory,
``PTXVM_CACHE_DIR`` (default: ``platformdirs.user_cache_dir("ptxvm")``), as
``<dir>/<kind>/<key[:2]>/<key>.<ext>``. What is in them is trusted by the next
process (a pickle is unpickled, an object file is loaded and run), so whoever can
write that directory must not be able to choose what ptxvm loads:

* **Sealed entries.** ``seal(kind, key, payload)`` prefixes an HMAC-SHA256 over the
  seal format, the kind, the key and the payload, keyed with a per-user secret kept
  *outside* the cache directory (``PTXVM_CACHE_SECRET``, default
  ``platformdirs.user_data_dir("ptxvm")/cache-secret``: 32 random bytes, created
  atomically with mode 0600 on first use). ``unseal`` checks it before anything looks
  at the payload: a flipped bit, a truncation, an entry copied to another key or kind,
  or a payload written by someone without the secret is a miss (and the file is
  removed), never a wrong result. When the secret cannot be created or read, or is not
  private, every cache is disabled with one ``CacheWarning`` line.
* **A size cap.** The directory holds at most ``PTXVM_CACHE_MAX`` bytes (default 1 GiB,
  sizes as ``ptxvm.limits.parse_size`` reads them: ``512M``, ``2G``); writes evict the
  least recently used entries (a hit refreshes its entry's mtime) down to 90% of it.
* **Inspection.** ``cache_info()`` and ``cache_clear()`` back ``ptxvm cache info|clear``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import stat
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

from .limits import parse_size

KINDS = ("modules", "llvm", "hsaco")        # the subdirectories ptxvm's caches use
DEFAULT_MAX_BYTES = 1 << 30
SECRET_BYTES = 32
SEAL_FORMAT = 1
SEAL_MAGIC = b"PTXVM-SEAL %d\n" % SEAL_FORMAT
MAC_BYTES = hashlib.sha256().digest_size
HEADER_BYTES = len(SEAL_MAGIC) + MAC_BYTES
_MAC_DOMAIN = b"ptxvm cache seal %d\0" % SEAL_FORMAT
_ENTRY_NAME = re.compile(r"[0-9a-f]{64}\.(?:bin|hsaco)")
_LOW_WATER = 0.9           # eviction goes down to this fraction of the cap (not one entry per write)
_STALE_TMP_S = 3600.0      # temporary files older than this were left by a killed writer
_FALSE = {"", "0", "false", "no", "off"}


class CacheWarning(UserWarning):
    """The cache could not be used (it is then off for this process); ptxvm works on without it."""


# ------------------------------------------------------------------ settings

def cache_dir() -> Path:
    """Where entries live: ``$PTXVM_CACHE_DIR`` or the platform's user cache dir."""
    env = os.environ.get("PTXVM_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    try:
        from platformdirs import user_cache_dir
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return Path.home() / ".cache" / "ptxvm"
    return Path(user_cache_dir("ptxvm", appauthor=False))


def secret_path() -> Path:
    """The file holding the key of the seals: ``$PTXVM_CACHE_SECRET`` or the user data dir's."""
    env = os.environ.get("PTXVM_CACHE_SECRET")
    if env:
        return Path(env).expanduser()
    try:
        from platformdirs import user_data_dir
    except ImportError:  # pragma: no cover - platformdirs is a dependency
        return Path.home() / ".local" / "share" / "ptxvm" / "cache-secret"
    return Path(user_data_dir("ptxvm", appauthor=False)) / "cache-secret"


def cache_requested(use_cache: bool | None = None) -> bool:
    """``use_cache`` wins when given; otherwise on unless ``PTXVM_NO_CACHE`` is set."""
    if use_cache is not None:
        return bool(use_cache)
    return os.environ.get("PTXVM_NO_CACHE", "").strip().lower() in _FALSE


def cache_enabled(use_cache: bool | None = None) -> bool:
    """Whether to use the caches: requested (see ``cache_requested``) and a secret to seal with."""
    return cache_requested(use_cache) and _secret() is not None


_WARNED: set[str] = set()
_WARN_LOCK = threading.Lock()


def _warn_once(message: str) -> None:
    with _WARN_LOCK:
        if message in _WARNED:
            return
        _WARNED.add(message)
    warnings.warn(message, CacheWarning, stacklevel=3)


def max_bytes() -> int:
    """The cap on the cache directory: ``$PTXVM_CACHE_MAX`` or 1 GiB (a bad value warns, 1 GiB)."""
    raw = os.environ.get("PTXVM_CACHE_MAX")
    if raw is None or not raw.strip():
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(raw)
    except ValueError as e:
        _warn_once(f"ptxvm: PTXVM_CACHE_MAX ignored, using {DEFAULT_MAX_BYTES >> 30} GiB: {e}")
        return DEFAULT_MAX_BYTES


# ------------------------------------------------------------------ the secret

_SECRETS: dict[tuple[str, str], bytes | None] = {}
_SECRET_LOCK = threading.Lock()


def _secret() -> bytes | None:
    """The sealing key (made on first use), or None after one warning when there is none."""
    where, root = secret_path(), cache_dir()
    memo = (str(where), str(root))
    try:
        return _SECRETS[memo]
    except KeyError:
        pass
    with _SECRET_LOCK:
        if memo not in _SECRETS:
            try:
                _SECRETS[memo] = _load_or_create_secret(where, root)
            except (OSError, ValueError) as e:
                _SECRETS[memo] = None
                _warn_once(f"ptxvm: cache disabled: its key {where} cannot be used ({e}); "
                           f"set PTXVM_CACHE_SECRET to a private file, or PTXVM_NO_CACHE=1")
        return _SECRETS[memo]


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):
        return False


def _load_or_create_secret(where: Path, root: Path) -> bytes:
    if _inside(where, root):
        # Whoever can write the cache could then replace the key too.
        raise ValueError(f"it is inside the cache directory {root}")
    try:
        return _read_secret(where)
    except FileNotFoundError:
        pass
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(prefix=".cache-secret-", dir=where.parent)   # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(SECRET_BYTES))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, where)           # atomic, complete, and never replaces a racing writer's
        except FileExistsError:
            pass
        except OSError:                   # no hard links here: first complete writer wins
            if not where.exists():
                os.replace(tmp, where)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    return _read_secret(where)


def _read_secret(where: Path) -> bytes:
    fd = os.open(where, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise ValueError("owned by another user")
        if sys.platform != "win32" and st.st_mode & 0o077:
            raise ValueError(f"readable or writable by others (mode {stat.S_IMODE(st.st_mode):o}; "
                             f"chmod 600 it)")
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    if len(data) < SECRET_BYTES:
        raise ValueError(f"{len(data)} bytes, expected {SECRET_BYTES} (delete it to make a new one)")
    return data


# ------------------------------------------------------------------ seals

def _mac(secret: bytes, kind: str, key: str, payload) -> bytes:
    h = hmac.new(secret, _MAC_DOMAIN, hashlib.sha256)
    h.update(kind.encode("utf-8", "surrogateescape") + b"\0")
    h.update(key.encode("utf-8", "surrogateescape") + b"\0")
    h.update(payload)
    return h.digest()


def seal(kind: str, key: str, payload: bytes) -> bytes | None:
    """``payload`` with a seal binding it to ``kind`` and ``key``; None when caching has no secret."""
    secret = _secret()
    if secret is None:
        return None
    return SEAL_MAGIC + _mac(secret, kind, key, payload) + payload


def unseal(kind: str, key: str, blob: bytes) -> memoryview | None:
    """The payload of a sealed ``blob`` (a view, no copy), or None unless its seal is intact
    and was made for ``kind`` and ``key`` with this user's secret."""
    secret = _secret()
    if secret is None or len(blob) < HEADER_BYTES or not blob.startswith(SEAL_MAGIC):
        return None
    view = memoryview(blob)
    payload = view[HEADER_BYTES:]
    if not hmac.compare_digest(view[len(SEAL_MAGIC):HEADER_BYTES], _mac(secret, kind, key, payload)):
        return None
    return payload


# ------------------------------------------------------------------ entries on disk

def remove(path: Path) -> None:
    """Delete a bad entry (so that it is not read again); a file already gone is fine."""
    try:
        path.unlink()
    except OSError:
        pass


def read_sealed(path: Path, kind: str, key: str) -> memoryview | None:
    """The payload stored at ``path`` for ``kind``/``key``; a missing file is None, a bad
    one is None and removed. A hit refreshes the file's mtime (the order of eviction)."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    payload = unseal(kind, key, blob)
    if payload is None:
        remove(path)
        return None
    touch(path)
    return payload


def touch(path: Path) -> None:
    """Mark an entry used now (explicit nanoseconds: the file system's clock may be coarse)."""
    now = time.time_ns()
    try:
        os.utime(path, ns=(now, now))
    except OSError:
        pass    # a read-only cache still serves hits


def write_sealed(path: Path, kind: str, key: str, payload: bytes) -> bool:
    """Seal ``payload`` and store it at ``path`` atomically, within the cap; False if not stored."""
    blob = seal(kind, key, payload)
    if blob is None:
        return False
    return store(path, blob)


def store(path: Path, blob: bytes) -> bool:
    """Write ``blob`` to ``path`` atomically (temporary file + ``os.replace``), then evict
    what the cap asks; False when it was not stored (too large for the cap, or an OSError)."""
    cap = max_bytes()
    if len(blob) > cap:
        return False
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        return False
    finally:
        if tmp is not None:
            remove(Path(tmp))
    touch(path)
    _account(path.parent.parent.parent, len(blob), cap)
    return True


# ------------------------------------------------------------------ the size cap
#
# Scanning the directory costs a stat per entry (~70 ms per 10,000 here), too much for every
# write of every process. So ``<dir>/usage`` keeps the byte count ("<bytes> <ns of the last
# scan>"): each write adds to it, and a scan (with eviction) happens when the count would pass
# the cap, when it is missing, unreadable or a day old, and after every cap/8 a process wrote
# itself (two processes updating it at once can lose an addition; these rescans bound that).

_USAGE_FILE = "usage"
_RESCAN_S = 86400.0
_SINCE: dict[Path, int] = {}        # bytes this process wrote under a root since it last scanned
_USAGE_LOCK = threading.Lock()


def _read_usage(root: Path) -> tuple[int, int] | None:
    """(bytes, ns of the last scan) from the usage file; None when missing, bad or a day old."""
    try:
        total, scanned = (int(x) for x in (root / _USAGE_FILE).read_text().split())
    except (OSError, ValueError):
        return None
    if total < 0 or not 0 <= time.time_ns() - scanned <= int(_RESCAN_S * 1e9):
        return None
    return total, scanned


def _write_usage(root: Path, total: int, scanned_ns: int) -> None:
    # Overwritten in place at a fixed width: no rename, no truncation (on ext4 either one
    # flushes the data, ~1 ms). A reader that catches it half-written sees a bad count,
    # which only means one extra scan.
    try:
        fd = os.open(root / _USAGE_FILE, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, b"%20d %20d\n" % (total, scanned_ns), 0)
        finally:
            os.close(fd)
    except (OSError, AttributeError):   # (no os.pwrite on Windows: no count, more scans)
        pass


def _account(root: Path, added: int, cap: int) -> None:
    """Count a write of ``added`` bytes under ``root``; evict when over the cap."""
    with _USAGE_LOCK:
        since = _SINCE.get(root, 0) + added
        usage = _read_usage(root)
        if usage is not None and usage[0] + added <= cap and since <= cap // 8:
            _SINCE[root] = since
            _write_usage(root, usage[0] + added, usage[1])
            return
        now = time.time_ns()
        _SINCE[root] = 0
        _write_usage(root, _evict(root, cap), now)


# (mtime_ns, name, path, kind, size): sorts oldest first, ties by name
_Entry = tuple[int, str, str, str, int]


def _scan(root: Path, stale_before_ns: int | None = None) -> list[_Entry]:
    """Every entry of every cache kind under ``root`` (only names ptxvm writes; nothing else is
    touched); temporary files older than ``stale_before_ns`` are deleted on the way."""
    found: list[_Entry] = []
    match = _ENTRY_NAME.fullmatch
    for kind in KINDS:
        try:
            shards = [d.path for d in os.scandir(root / kind) if d.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for shard in shards:
            try:
                files = list(os.scandir(shard))
            except OSError:
                continue
            for f in files:
                name = f.name
                entry = match(name) is not None
                if not entry and not (stale_before_ns is not None and name.startswith(".tmp-")):
                    continue
                try:
                    st = f.stat(follow_symlinks=False)
                except OSError:
                    continue
                if entry:
                    if stat.S_ISREG(st.st_mode):
                        found.append((st.st_mtime_ns, name, f.path, kind, st.st_size))
                elif st.st_mtime_ns < stale_before_ns:        # type: ignore[operator]
                    remove(Path(f.path))
    return found


def _evict(root: Path, cap: int) -> int:
    """Delete least recently used entries until the directory is within the cap (down to the
    low-water mark); returns the bytes left."""
    files = _scan(root, time.time_ns() - int(_STALE_TMP_S * 1e9))
    total = sum(f[4] for f in files)
    if total <= cap:
        return total
    goal = int(cap * _LOW_WATER)
    for _, _, path, _, size in sorted(files):
        if total <= goal:
            break
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError:
            continue
        total -= size
    return total


# ------------------------------------------------------------------ inspection

def cache_info() -> dict:
    """What ``ptxvm cache info`` shows: where, whether on, how many entries and bytes, the cap,
    the secret's path, and the same counts per kind (``"kinds"``)."""
    root = cache_dir()
    files = _scan(root)
    kinds = {k: {"entries": 0, "bytes": 0} for k in KINDS}
    for _, _, _, kind, size in files:
        kinds[kind]["entries"] += 1
        kinds[kind]["bytes"] += size
    return {"dir": str(root), "enabled": cache_enabled(), "entries": len(files),
            "bytes": sum(f[4] for f in files), "max_bytes": max_bytes(),
            "secret": str(secret_path()), "kinds": kinds}


def cache_clear(directory: Path | None = None) -> int:
    """Delete every entry of every cache kind (and left-over temporary files); returns how many
    entries were removed. Files that are not ptxvm's entries are left alone."""
    root = directory if directory is not None else cache_dir()
    n = 0
    with _USAGE_LOCK:
        for f in _scan(root, stale_before_ns=time.time_ns() + 1):   # every temporary file too
            try:
                os.unlink(f[2])
                n += 1
            except OSError:
                pass
        remove(root / _USAGE_FILE)
        _SINCE.pop(root, None)
    return n


__all__ = ["CacheWarning", "DEFAULT_MAX_BYTES", "KINDS", "cache_clear", "cache_dir", "cache_enabled",
           "cache_info", "cache_requested", "max_bytes", "read_sealed", "remove", "seal", "secret_path",
           "store", "touch", "unseal", "write_sealed"]
