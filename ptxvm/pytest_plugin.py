"""ptxvm's pytest plugin (entry point ``pytest11``; loaded by pytest wherever ptxvm is installed).

    def test_my_kernel(executor):            # runs once per CPU executor: interp, cpu, ...
        out = np.zeros(n, np.float32)
        mod["scale"][blocks, threads](x, out, device=executor)
        np.testing.assert_array_equal(out, x * 2)

    def test_agree():                         # the documented way to test a kernel
        ptxvm.testing.assert_executors_agree(ptx, "scale", blocks, threads, (x, out))

* ``executor`` fixture: the name of each registered executor that runs on this CPU, from the
  executor registry; one whose Python package is missing is a visible skip, naming it.
* ``--ptxvm-device NAME[,NAME...]``: run ``executor`` tests on those executors only (the rest
  skip, saying why) and make NAME (the first) the default of every launch (``PTXVM_DEVICE``).
* ``PTXVM_NUMBA=1``: ``ptxvm.numba.install()`` before tests are collected, so unmodified
  ``numba.cuda.jit`` kernels run on ptxvm (as ``NUMBA_ENABLE_CUDASIM=1`` for numba's simulator).

A project (ptxvm's own tests/conftest.py) may import ``executor`` from here into its conftest:
that is the same fixture, and this module's hooks are not registered a second time.
"""

from __future__ import annotations

import os

import pytest

OPTION = "--ptxvm-device"


def cpu_executor_params() -> list:
    """One ``pytest.param`` per registered CPU executor, the reference (interp) first; one the
    installation lacks a package for carries a skip mark naming it."""
    from ptxvm.driver import executors
    out = []
    for name in executors.names():
        e = executors.get(name)
        if not e.capabilities.host_cpu:
            continue
        missing = executors.missing_package(e)
        marks = pytest.mark.skip(reason=f"executor `{name}` needs {missing}: pip install {missing}") if missing else ()
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def selected_devices(config: pytest.Config) -> tuple[str, ...]:
    """The executors ``--ptxvm-device`` names (empty: all)."""
    value = config.getoption(OPTION, default=None)
    return tuple(n.strip() for n in (value or "").split(",") if n.strip())


@pytest.fixture(params=cpu_executor_params())
def executor(request: pytest.FixtureRequest) -> str:
    """The name of each CPU executor in turn (``device=executor``): interp, cpu (with llvmlite), ..."""
    chosen = selected_devices(request.config)
    if chosen and request.param not in chosen:
        pytest.skip(f"{OPTION} {','.join(chosen)} leaves out executor `{request.param}`")
    return request.param


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ptxvm")
    group.addoption(OPTION, metavar="NAME[,NAME]", default=None,
                    help="run tests using the `executor` fixture on these ptxvm executors only, and make "
                         "the first the default device of every launch (PTXVM_DEVICE)")


def pytest_configure(config: pytest.Config) -> None:
    chosen = selected_devices(config)
    if chosen:
        from ptxvm.driver import executors
        for name in chosen:
            executors.get(name, what=OPTION)       # an unknown name fails now, listing the known ones
        os.environ["PTXVM_DEVICE"] = chosen[0]
    if os.environ.get("PTXVM_NUMBA", "").strip():
        from ptxvm.numba import install_from_env
        install_from_env()
