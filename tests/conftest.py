"""Shared test setup: tests never write to the user's real cache directory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory):
    import os
    old = os.environ.get("PTXVM_CACHE_DIR")
    os.environ["PTXVM_CACHE_DIR"] = str(tmp_path_factory.mktemp("ptxvm-cache"))
    yield
    if old is None:
        os.environ.pop("PTXVM_CACHE_DIR", None)
    else:
        os.environ["PTXVM_CACHE_DIR"] = old


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
