"""`ptxvm cache info|clear`: look at and empty the parse/compile cache (ptxvm.diskcache)."""

from __future__ import annotations

import json

EPILOG = """\
examples:
  ptxvm cache info           where the cache is, how many entries and bytes, its size cap
  ptxvm cache info --json    the same as JSON
  ptxvm cache clear          delete every entry (the next loads parse again)

The cache keeps parsed modules and compiled code, keyed by content; it is capped
(PTXVM_CACHE_MAX, oldest entries evicted first), can be moved (PTXVM_CACHE_DIR) and
turned off (PTXVM_NO_CACHE=1).
"""


def add_parser(sub, fmt) -> None:
    p = sub.add_parser("cache", formatter_class=fmt, help="show or clear ptxvm's cache",
                       description="Show where ptxvm caches parsed modules and compiled code and how much "
                                   "it holds, or clear it.", epilog=EPILOG)
    p.add_argument("action", choices=("info", "clear"), help="info: show; clear: delete every entry")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_cache)


def _size(n: int) -> str:
    from ..limits import describe
    return describe(n)


def cmd_cache(args) -> int:
    from ..diskcache import cache_clear, cache_info
    if args.action == "clear":
        where = cache_info()["dir"]
        n = cache_clear()
        if args.json:
            print(json.dumps({"dir": where, "removed": n}))
        else:
            print(f"removed {n} cache entr{'y' if n == 1 else 'ies'} from {where}")
        return 0
    info = cache_info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    state = "on" if info.get("enabled", True) else "off (PTXVM_NO_CACHE)"
    print(f"cache dir: {info['dir']} ({state})")
    print(f"entries:   {info['entries']}, {_size(info['bytes'])}")
    cap = info.get("max_bytes", info.get("cap"))
    if cap is not None:
        print(f"cap:       {_size(cap)} (PTXVM_CACHE_MAX; oldest entries are evicted first)")
    for kind, c in sorted(info.get("kinds", {}).items()):
        print(f"  {kind:<10} {c['entries']} entries, {_size(c['bytes'])}")
    return 0
