"""Deliberately broken executors, registered only when this file is imported (tests, and the
workers of a campaign given ``--plugin tests/models/broken_executors.py``).

* ``flip``:  the interpreter, then bit 0 of the first word of the launch's second array
  argument flipped, for kernels with a ``sub`` instruction (a generated kernel's prologue and
  epilogue have none, so the fault sits in the body and shrinking keeps it; about a third of
  small generated kernels have one).
* ``abort``: kills its own process (``os.abort``) on the same kernels; runs the interpreter
  on the others.
* ``refuse`` / ``fail``: raise UnsupportedError / LaunchError on the same kernels.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

import numpy as np

from ptxvm.driver import executors as registry
from ptxvm.errors import LaunchError, UnsupportedError


SUB = re.compile(r"^\s*(?:@!?%\w+\s+)?sub\.", re.MULTILINE)


def _faulty(request) -> bool:
    from ptxvm import format_ptx
    return SUB.search(format_ptx(request.kernel.module.ir)) is not None


def _flip(request):
    stats = registry.get("interp").launch(request)
    arrays = [a for a in request.args if isinstance(a, np.ndarray)]
    if _faulty(request) and len(arrays) > 1:
        arrays[1].view(np.uint8)[0] ^= 1
    return stats


def _abort(request):
    if _faulty(request):
        os.abort()
    return registry.get("interp").launch(request)


def _raising(error):
    def launch(request):
        if _faulty(request):
            raise error(f"test executor: `sub` in kernel {request.kernel.name}")
        return registry.get("interp").launch(request)
    return launch


def _register(name: str, summary: str, launch) -> None:
    caps = replace(registry.get("interp").capabilities, reference=False, opt_in=True)
    registry.register(registry.Executor(name, summary, caps, launch), replace=True)


_register("flip", "test only: the interpreter with one output bit flipped on kernels with sub", _flip)
_register("abort", "test only: aborts its process on kernels with sub", _abort)
_register("refuse", "test only: refuses kernels with sub", _raising(UnsupportedError))
_register("fail", "test only: raises a LaunchError on kernels with sub", _raising(LaunchError))
