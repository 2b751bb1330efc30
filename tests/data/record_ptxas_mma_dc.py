"""Refresh tests/data/ptxas_mma_dc.json: ptxas's verdict on every D/C type pair of every dense
mma.sync shape x A/B type of isa/matrix.toml (each accumulator type of the entry for D and for C,
whether or not the entry's `dc` lists the pair), on sm_80 and sm_90 (sm_89 for the fp8 forms,
whose minimum it is; ptxas 13 has no sm_70 target).

    python tests/data/record_ptxas_mma_dc.py [--ptxas ptxas]

ptxas is only needed here; tests/machine/test_mma_dc_pairs.py reads the file."""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from ptxvm.machine import fragments as F
from ptxvm.testing.ptxgen.tensor import MmaForm, mma_ptx

OUT = Path(__file__).resolve().parent / "ptxas_mma_dc.json"


def _archs(sm: int) -> list[int]:
    return [a for a in (80, 89, 90) if a >= sm and (a != 89 or sm == 89)]


def _verdict(ptxas: str, text: str, sm: int, tmp: Path) -> tuple[str, str]:
    src = tmp / "k.ptx"
    src.write_text(text.replace(".target sm_90", f".target sm_{sm}"))
    r = subprocess.run([ptxas, f"-arch=sm_{sm}", str(src), "-o", str(tmp / "k.o")],
                       capture_output=True, text=True)
    msg = " ".join(line.split(", line ", 1)[-1] for line in r.stderr.splitlines() if "error" in line)
    return ("accept" if r.returncode == 0 else "reject"), msg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptxas", default="ptxas")
    args = ap.parse_args()
    version = subprocess.run([args.ptxas, "--version"], capture_output=True, text=True).stdout.split("\n")
    cases = []
    with tempfile.TemporaryDirectory() as d:
        for c in F.mma_combinations():
            a = c["ab"][0]
            for dt in c["acc"]:
                for ct in c["acc"]:
                    form = MmaForm(c["shape"], a, a, ct, dt, ".xor.popc" if a == "b1" else "")
                    text = mma_ptx(form)[0]
                    for sm in _archs(int(c["sm"])):
                        v, msg = _verdict(args.ptxas, text, sm, Path(d))
                        cases.append({"shape": c["shape"], "ab": a, "d": dt, "c": ct, "arch": f"sm_{sm}",
                                      "ptxas": v, "ptxas_message": msg})
    OUT.write_text(json.dumps({"ptxas": version[-2].strip(), "cases": cases}, indent=1) + "\n")
    print(f"{len(cases)} verdicts: {sum(c['ptxas'] == 'accept' for c in cases)} accept")


if __name__ == "__main__":
    main()
