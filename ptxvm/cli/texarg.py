"""`ptxvm run --arg` texture and surface specs:

  tex2d:f32[64,64]=random(seed=1),filter=linear,address=clamp
  tex1d:f32[256]=arange,linear_memory          (tex1Dfetch: linear memory, no sampler)
  tex2dlayered:u8[3,16,16]=random(seed=2),read=normalized,channels=4,normalized=1
  texcube:f32[6,8,8]=ones,filter=linear
  surf2d:u8[16,64]=zeros,channels=4

The part before the first option is an array spec as for plain arrays (its shape in numpy order,
without the channel axis); options: filter=point|linear, address=wrap|clamp|mirror|border (or
one per axis joined with '/'), normalized=0|1, read=element|normalized, border=r/g/b/a,
channels=1|2|4, srgb, linear_memory. Names follow cudaTextureDesc (ptxvm.TextureObject).
"""

from __future__ import annotations

import re

_SPEC = re.compile(r"^(?P<kind>tex|surf)(?P<dims>1d|2d|3d|cube)(?P<layered>layered)?:(?P<rest>.+)$")


def is_spec(text: str) -> bool:
    return bool(_SPEC.match(text.strip()))


def _split(rest: str) -> list[str]:
    """Comma-separated at bracket depth 0."""
    out, depth, cur = [], 0, ""
    for ch in rest:
        depth += ch in "[(" and 1 or (ch in "])" and -1 or 0)
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def _options(spec: str, index: int, items: list[str], err) -> dict[str, str]:
    known = {"filter", "address", "normalized", "read", "border", "channels", "srgb", "linear_memory"}
    opts = {}
    for item in items:
        key, _, value = item.strip().partition("=")
        if key not in known:
            raise err(f"--arg #{index + 1} {spec!r}: unknown texture option `{key}`; use "
                      + ", ".join(sorted(known)))
        opts[key] = value.strip() or "1"
    return opts


def parse(spec: str, index: int):
    """The spec -> a ptxvm TextureObject or SurfaceObject (over a new CudaArray)."""
    import numpy as np

    from ..errors import LaunchError
    from ..machine.textures import CudaArray, SurfaceObject, TextureObject
    from .run import ArgError, parse_arg
    m = _SPEC.match(spec.strip())
    parts = _split(m["rest"])
    opts = _options(spec, index, parts[1:], ArgError)
    try:
        channels = int(opts.get("channels", "1"))
    except ValueError:
        raise ArgError(f"--arg #{index + 1} {spec!r}: channels=1, 2 or 4") from None
    array_spec = parts[0].strip()
    if channels > 1:            # the generator makes the channel axis too
        array_spec = re.sub(r"\[([^\]]*)\]", lambda g: f"[{g[1]},{channels}]", array_spec, count=1)
    data = parse_arg(array_spec, index)
    if not isinstance(data, np.ndarray):
        raise ArgError(f"--arg #{index + 1} {spec!r}: `{parts[0]}` is not an array spec like f32[64,64]=zeros")
    want = {"1d": 1, "2d": 2, "3d": 3, "cube": 2}[m["dims"]] + bool(m["layered"] or m["dims"] == "cube")
    if data.ndim - (channels > 1) != want:
        raise ArgError(f"--arg #{index + 1} {spec!r}: {m['kind']}{m['dims']}{m['layered'] or ''} needs a "
                       f"{want}-dimensional shape, got {list(data.shape[:data.ndim - (channels > 1)])}")
    try:
        if "linear_memory" in opts:
            resource = data
        else:
            resource = CudaArray.from_numpy(data, channels, layered=bool(m["layered"]), cubemap=m["dims"] == "cube")
        if m["kind"] == "surf":
            return SurfaceObject(resource)
        return TextureObject(resource, address_mode=tuple(opts.get("address", "clamp").split("/")),
                             filter_mode=opts.get("filter", "point"),
                             read_mode={"normalized": "normalized_float"}.get(opts.get("read", ""), "element_type"),
                             normalized_coords=opts.get("normalized", "0") in ("1", "true", "yes"),
                             border_color=tuple(float(c) for c in opts.get("border", "0").split("/")),
                             srgb="srgb" in opts)
    except (LaunchError, ValueError) as e:
        raise ArgError(f"--arg #{index + 1} {spec!r}: {getattr(e, 'message', e)}") from None


def host_view(value):
    """What a run prints and saves for a texture/surface argument: its texels (None: not one)."""
    from ..machine.textures import SurfaceObject, TextureObject
    if isinstance(value, SurfaceObject):
        return value.array.to_numpy()
    if isinstance(value, TextureObject):
        return value.array.to_numpy()
    return None
