#!/usr/bin/env python3
"""Record ptxas's verdict on every hand-written PTX test of this folder into verdicts.json.

ptxas is the oracle: the tests (tests/frontend/test_handwritten_ptx.py) check that ptxvm
accepts exactly the files ptxas accepted, and re-run ptxas when it is installed to check the
recorded verdicts still hold. Each file is assembled for the target its `.target` names
(sm_80, or sm_100 for the .v8 forms). Run from anywhere: ``python record_verdicts.py``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERDICTS = HERE / "verdicts.json"


def target_of(path: Path) -> str:
    m = re.search(r"^\s*\.target\s+(sm_\w+)", path.read_text(), re.M)
    return m.group(1) if m else "sm_80"


def verdict(ptxas: str, path: Path) -> dict:
    arch = target_of(path)
    proc = subprocess.run([ptxas, f"-arch={arch}", path.name, "-o", "/dev/null"], cwd=HERE,
                          capture_output=True, text=True, timeout=120)
    return {"arch": arch, "accepted": proc.returncode == 0,
            "messages": [ln for ln in proc.stderr.splitlines() if ln.strip()]}


def ptxas_version(ptxas: str) -> str:
    out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=True).stdout
    return [ln for ln in out.splitlines() if "release" in ln][-1].strip()


def main() -> int:
    ptxas = shutil.which("ptxas")
    if not ptxas:
        print("ptxas not found on PATH", file=sys.stderr)
        return 1
    files = {p.name: verdict(ptxas, p) for p in sorted(HERE.glob("*.ptx"))}
    VERDICTS.write_text(json.dumps({"ptxas": ptxas_version(ptxas), "files": files}, indent=1) + "\n")
    for name, v in files.items():
        print(f"{name:32s} {v['arch']:7s} {'accepted' if v['accepted'] else 'REJECTED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
