"""`ptxvm --version` and `ptxvm info`: what this ptxvm is made of, for bug reports.

Neither imports llvmlite (or numpy): package versions come from the installed
distributions' metadata, LLVM's and lld's versions from a short subprocess each, so both
work, and say what is missing, where an optional package is not installed.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from dataclasses import asdict
from importlib import metadata
from importlib.util import find_spec
from typing import Any

_TIMEOUT = 20      # seconds for a helper subprocess (llvmlite's LLVM version, ld.lld --version)


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _importable(name: str) -> bool:
    try:
        return find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _run_quiet(cmd: list[str]) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = (proc.stdout or proc.stderr).strip()
    return out.splitlines()[0].strip() if proc.returncode == 0 and out else None


def llvm_version() -> str | None:
    """The LLVM llvmlite is built on, asked in a child process so this one never loads it."""
    if not _importable("llvmlite"):
        return None
    code = "import llvmlite.binding as b; print('.'.join(map(str, b.llvm_version_info)))"
    return _run_quiet([sys.executable, "-c", code])


def lld_version() -> str | None:
    """``ld.lld --version`` of the ziglang wheel (the linker of AMD code objects), if installed."""
    if not _importable("ziglang"):
        return None
    text = _run_quiet([sys.executable, "-m", "ziglang", "ld.lld", "--version"])
    return text.removeprefix("LLD ").split(" (")[0] if text else None


def ptx_isa_version() -> str:
    from ..frontend.parser import NEWEST_PTX_ISA
    return f"{NEWEST_PTX_ISA[0]}.{NEWEST_PTX_ISA[1]}"


def amd_targets() -> list[str]:
    from ..amdgpu.targets import available
    return available()


def versions() -> dict[str, Any]:
    """ptxvm, Python, its dependencies, LLVM, lld, the PTX ISA it reads and the AMD targets."""
    from .. import __version__
    llvmlite = _dist_version("llvmlite") if _importable("llvmlite") else None
    return {
        "ptxvm": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "numpy": _dist_version("numpy"),
        "lark": _dist_version("lark"),
        "llvmlite": llvmlite,
        "llvm": llvm_version() if llvmlite else None,
        "ziglang": _dist_version("ziglang") if _importable("ziglang") else None,
        "lld": lld_version(),
        "ptx_isa": ptx_isa_version(),
        "amd_targets": amd_targets(),
    }


def version_text() -> str:
    v = versions()
    missing = "not installed"
    llvm = (f"llvmlite {v['llvmlite']} (LLVM {v['llvm'] or 'version unknown'})" if v["llvmlite"]
            else f"llvmlite {missing} (needed by --device cpu and translate: pip install llvmlite)")
    lld = (f"lld {v['lld'] or 'version unknown'} (ziglang {v['ziglang']})" if v["ziglang"]
           else f"lld {missing} (needed to link AMD code objects: pip install 'ptxvm[amdgpu]')")
    return "\n".join([
        f"ptxvm {v['ptxvm']}",
        f"Python {v['python']}, numpy {v['numpy'] or missing}, lark {v['lark'] or missing}",
        llvm, lld,
        f"PTX ISA up to {v['ptx_isa']}",
        f"AMD targets: {', '.join(v['amd_targets'])}",
    ])


def _executors() -> dict[str, str]:
    """Each registered executor a launch can name, and whether this installation can run it
    (its packages are looked up, not imported)."""
    from ..driver import executors
    out = {}
    for name in executors.names():
        why = executors.why_unavailable(executors.get(name))
        out[name] = f"unavailable: {why}" if why else "available"
    return out


def _capabilities() -> dict[str, dict[str, Any]]:
    """Each registered executor's summary and capabilities, for --json."""
    from ..driver import executors
    return {e.name: {"summary": e.summary, **asdict(e.capabilities)}
            for e in map(executors.get, executors.names())}


def info() -> dict[str, Any]:
    """Everything a bug report needs: versions, platform, cache, executors and limits in force."""
    from ..diskcache import cache_dir, cache_enabled
    from ..limits import current
    return {
        **versions(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "cache": {"dir": str(cache_dir()), "enabled": cache_enabled()},
        "executors": _executors(),
        "executor_capabilities": _capabilities(),
        "limits": asdict(current()),
        "environment": {k: v for k, v in sorted(os.environ.items()) if k.startswith("PTXVM_")},
    }


def cmd_info(args) -> int:
    doc = info()
    if args.json:
        print(json.dumps(doc, indent=2))
        return 0
    from ..limits import COUNTS, describe
    print(version_text())
    print(f"platform: {doc['platform']} ({doc['machine']}, {doc['cpus']} CPUs)")
    print(f"cache: {doc['cache']['dir']} ({'on' if doc['cache']['enabled'] else 'off'})")
    print("executors: " + ", ".join(f"{k} ({v})" for k, v in doc["executors"].items()))
    print("limits (PTXVM_LIMIT_<NAME> or ptxvm.limits.configure):")
    for name, value in doc["limits"].items():
        print(f"  {name:<24} {describe(value, name not in COUNTS)}")
    for k, v in doc["environment"].items():
        print(f"env: {k}={v}")
    return 0


INFO_EPILOG = """\
examples:
  ptxvm info                 versions, platform, cache dir, executors, limits in force
  ptxvm info --json          the same as one JSON object (paste it into a bug report)
"""


def add_parser(sub, fmt) -> None:
    p = sub.add_parser("info", formatter_class=fmt, help="show versions, executors and limits (for bug reports)",
                       description="Print what this ptxvm is made of: its version and its dependencies' "
                                   "(Python, numpy, lark, llvmlite/LLVM, lld), the PTX ISA version it reads, "
                                   "AMD targets, platform, cache directory, executors available and the "
                                   "resource limits in force (ptxvm.limits).", epilog=INFO_EPILOG)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_info)
