"""Shared test setup: tests never write to the user's real cache directory or secret."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory):
    import os
    # The cache's secret too: tests must not create or read the user's real one. Under
    # pytest-xdist (`-n auto`) each worker is a session of its own with its own basetemp, so
    # every worker gets its own cache folder and secret: no cache is shared between workers.
    names = ("PTXVM_CACHE_DIR", "PTXVM_CACHE_SECRET")
    old = {n: os.environ.get(n) for n in names}
    os.environ["PTXVM_CACHE_DIR"] = str(tmp_path_factory.mktemp("ptxvm-cache"))
    os.environ["PTXVM_CACHE_SECRET"] = str(tmp_path_factory.mktemp("ptxvm-secret") / "cache-secret")
    yield
    for n, v in old.items():
        if v is None:
            os.environ.pop(n, None)
        else:
            os.environ[n] = v


# The `executor` fixture is the pytest plugin's (ptxvm/pytest_plugin.py, which users get too):
# every registered CPU executor, a missing package a visible skip, --ptxvm-device honoured.
from ptxvm.pytest_plugin import executor  # noqa: E402,F401


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite golden files (tests/golden) from the current output; review the diff")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "lld: links AMD code objects with ld.lld from the ziglang wheel "
                                       "(pip install 'ptxvm[amdgpu]'); skipped without it")
    if config.getoption("--update-golden", default=False):
        import os
        os.environ["PTXVM_UPDATE_GOLDEN"] = "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from importlib.util import find_spec
    if find_spec("ziglang") is not None:
        return
    skip = pytest.mark.skip(reason="needs ld.lld from the ziglang wheel: pip install 'ptxvm[amdgpu]'")
    for item in items:
        if "lld" in item.keywords:
            item.add_marker(skip)
