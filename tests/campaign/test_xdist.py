"""The suite under pytest-xdist: every worker has a cache folder (and secret) of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()


@pytest.mark.parametrize("n", range(6))
def test_probe(n: int) -> None:
    """Writes which cache folder its worker uses (only when the test below runs it)."""
    where = os.environ.get("PTXVM_XDIST_PROBE")
    if not where:
        pytest.skip("run by test_each_xdist_worker_has_its_own_cache")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(where, f"{worker}-{n}").write_text(f"{os.environ['PTXVM_CACHE_DIR']}\n{os.environ['PTXVM_CACHE_SECRET']}")


def test_each_xdist_worker_has_its_own_cache(tmp_path) -> None:
    pytest.importorskip("xdist")
    env = dict(os.environ, PTXVM_XDIST_PROBE=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
                        f"{HERE}::test_probe"], env=env, capture_output=True, text=True, timeout=600,
                       cwd=HERE.parents[2])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    seen: dict[str, set[str]] = {}
    for f in tmp_path.iterdir():
        seen.setdefault(f.name.split("-")[0], set()).add(f.read_text())
    assert set(seen) == {"gw0", "gw1"}                                # xdist gave both workers probes
    folders = [next(iter(v)) for v in seen.values()]
    assert all(len(v) == 1 for v in seen.values())                  # one per worker
    assert len(set(folders)) == len(folders)                         # none shared
    caches = [f.splitlines()[0] for f in folders]
    assert all(os.environ.get("PTXVM_CACHE_DIR") != c for c in caches)
