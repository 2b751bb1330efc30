"""Run at interpreter start by the ``ptxvm-numba.pth`` file the wheel installs, only when
``PTXVM_NUMBA`` is set: unmodified ``numba.cuda.jit`` programs then launch on ptxvm, as
``NUMBA_ENABLE_CUDASIM=1`` makes them run on numba's simulator. A failure (numba missing) is
one line on stderr, never a traceback at every start."""

from __future__ import annotations

import sys

try:
    from . import install_from_env
    install_from_env()
except Exception as exc:                     # noqa: BLE001 - at startup, any failure is one line
    print(f"ptxvm: PTXVM_NUMBA is set but numba.cuda kernels cannot run on ptxvm: {exc}", file=sys.stderr)
