"""machine/hostheap.py: when the host heap settings are applied (each case in a fresh process:
the settings are the process's)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

CHILD = "from ptxvm.machine import hostheap; print(hostheap.keep_heap_pages(), hostheap.keep_heap_pages())"


def _glibc() -> bool:
    try:
        ctypes.CDLL(None).gnu_get_libc_version
    except (OSError, AttributeError):
        return False
    return True


def _run(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith("MALLOC_") and k not in ("GLIBC_TUNABLES", "PTXVM_HOST_HEAP")}
    return subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True,
                          env={**clean, **env}).stdout.strip()


@pytest.mark.skipif(not _glibc(), reason="mallopt is glibc's")
def test_applied_once_by_default_on_glibc():
    assert _run() == "True True"


@pytest.mark.parametrize("env", [{"PTXVM_HOST_HEAP": "default"}, {"MALLOC_TOP_PAD_": "1048576"},
                                 {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1000000"}])
def test_left_alone_when_the_environment_chooses(env):
    assert _run(**env) == "False False"
