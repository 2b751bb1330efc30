"""Regenerate the committed PTX of devrt.cu and cdp.cu (needs nvcc; tests never do).

    python tests/amdgpu/data/make_devrt.py
"""

from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILDS = [("devrt.cu", "devrt.sm80.ptx", []), ("cdp.cu", "cdp.sm80.ptx", ["-rdc=true"])]


def main() -> None:
    for src, out, flags in BUILDS:
        subprocess.run(["nvcc", "-arch=sm_80", "-ptx", *flags, str(HERE / src), "-o", str(HERE / out)], check=True)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
