"""``python -m ptxvm.numba script.py [args]``: run an unmodified numba CUDA program on ptxvm
(``ptxvm.numba.install()`` first, then the script as ``__main__``)."""

from __future__ import annotations

import runpy
import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m ptxvm.numba SCRIPT.py [ARGS...]   (numba.cuda.jit kernels run on ptxvm; "
              "the executor is $PTXVM_DEVICE, default interp)")
        return 0 if argv else 2
    from . import install
    install()
    sys.argv = argv
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
