"""The host C heap's settings for launches on the host (interpreter and JIT).

A launch of 2^14 threads makes numpy temporaries of 64 KB to 1 MB per instruction, dozens at
a time. With glibc's defaults such a buffer is either mmap'ed (at or above the mmap threshold,
128 KB at first) or carved from the top of the heap, which is handed back to the kernel as
soon as 128-256 KB lie free there; either way the next temporary lands on fresh pages, and
the kernel faults and zeroes each one (``clear_page`` was most of an interpreted f64 ``fma``'s
time: 3 ms for 16,384 lanes, 0.36 ms once the pages stay mapped). So the first host launch
keeps freed heap memory mapped for reuse: allocations below 64 MiB come from the heap, whose
top keeps up to 256 MiB free before it is trimmed.

glibc only (``mallopt``); elsewhere nothing changes. The settings are the process's, so they
are left alone when the environment already chooses them (``MALLOC_*_`` variables,
``GLIBC_TUNABLES``) or says ``PTXVM_HOST_HEAP=default``.
"""

from __future__ import annotations

import ctypes
import os
import threading

# mallopt parameters (glibc malloc.h)
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
MMAP_THRESHOLD = 64 << 20        # buffers below this come from the heap (reused), not mmap
TRIM_THRESHOLD = 256 << 20       # free bytes at the heap's top before any goes back to the kernel
TOP_PAD = 64 << 20               # extra bytes the heap grows by (fewer brk calls)

_USER_VARS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_", "GLIBC_TUNABLES")
_lock = threading.Lock()
_state: bool | None = None        # None: not tried yet; else whether the settings were applied


def keep_heap_pages() -> bool:
    """Apply the settings once per process; whether they are in effect."""
    global _state
    with _lock:
        if _state is None:
            _state = _apply()
        return _state


def _apply() -> bool:
    if os.environ.get("PTXVM_HOST_HEAP", "").lower() == "default" or any(v in os.environ for v in _USER_VARS):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version           # glibc's, not another C library's mallopt
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    done = [mallopt(p, v) == 1 for p, v in ((M_MMAP_THRESHOLD, MMAP_THRESHOLD),
                                            (M_TRIM_THRESHOLD, TRIM_THRESHOLD), (M_TOP_PAD, TOP_PAD))]
    return all(done)
