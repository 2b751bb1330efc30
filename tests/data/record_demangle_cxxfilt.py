"""Refresh tests/data/demangle_cxxfilt.tsv: every `_Z` name in the PTX under tests/fixtures,
tests/ptx and tests/cuda (kernels as `entry`, others as `name`, `_param_N` dropped), the
hand-written `extra` / `extra-beyond` rows kept, and the third column from GNU c++filt.

    python tests/data/record_demangle_cxxfilt.py [--cxxfilt c++filt]

c++filt is only needed here; tests/cli/test_cli_newcomer.py reads the file."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
OUT = HERE / "demangle_cxxfilt.tsv"

# Forms nvcc, CUB and libcu++ emit that the fixtures may not show (kind `extra`: must decode).
EXTRA = [
    "_Z1fPA10_f", "_Z1fPFviE", "_Z1fIJifEEvDpT_", "_Z1fIJEEvDpT_", "_Z1fPPA10_f", "_Z1fPKA10_f",
    "_Z1fRA3_i", "_ZN1AUt_E", "_Z1fIJiEEvDpPT_", "_Z1gIJifEEvDpRKT_", "_Z1fIJRiEEvDpOT_",
    "_ZZ4mainENKUliE_clEi", "_ZZ4mainENKUlvE0_clEv", "_ZZ4mainENKUlifE_clEif",
    "_Z6launchIZ4mainEUliE_EvT_", "_ZZ12cub_warp_sumILi16EEvPKiPiE3tmp",
]
# Forms ptxvm.demangle may leave undecoded (kind `extra-beyond`: None is fine, never wrong).
BEYOND = ["_Z3foov.part.0", "_Z1fM1AFivE", "_Z1fPFPFviEvE", "_Z1fPA10_A20_f"]


def _fixture_names() -> dict[str, str]:
    kinds: dict[str, str] = {}
    for d in ("fixtures", "ptx", "cuda"):
        for p in sorted((TESTS / d).rglob("*.ptx")):
            text = p.read_text(errors="replace")
            entries = set(re.findall(r"\.entry\s+(_Z[A-Za-z0-9_$]+)", text))
            for m in re.findall(r"_Z[A-Za-z0-9_$]+", text):
                m = re.sub(r"_param_\d+$", "", m)
                kind = "entry" if m in entries else "name"
                if kinds.get(m) != "entry":
                    kinds[m] = kind
    return kinds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cxxfilt", default="c++filt")
    args = ap.parse_args()
    head = [ln for ln in OUT.read_text().splitlines() if ln.startswith("#")]
    old = [ln.split("\t") for ln in OUT.read_text().splitlines() if ln and not ln.startswith("#")]
    rows: dict[str, str] = {}
    for kind, mangled, _ in old:
        if kind.startswith("extra"):
            rows.setdefault(mangled, kind)
    for m in EXTRA:
        rows[m] = "extra"
    for m in BEYOND:
        rows[m] = "extra-beyond"
    for m, kind in _fixture_names().items():
        if m not in rows or kind == "entry":
            rows[m] = kind
    order = sorted(rows, key=lambda m: ({"entry": 0, "name": 1, "extra": 2, "extra-beyond": 3}[rows[m]], m))
    out = subprocess.run([args.cxxfilt], input="\n".join(order) + "\n", capture_output=True, text=True,
                         check=True).stdout.split("\n")
    version = subprocess.run([args.cxxfilt, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    head = [h if not h.startswith("# same, or return None") else
            f"# same, or return None; never a different name). Recorded with {version}." for h in head]
    lines = head + [f"{rows[m]}\t{m}\t{o}" for m, o in zip(order, out)]
    OUT.write_text("\n".join(lines) + "\n")
    print(f"{len(order)} names -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
