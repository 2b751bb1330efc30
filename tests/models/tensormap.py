"""Independent numpy model of a tile-mode TMA load (PTX ISA §5.5), not importing ptxvm."""
import numpy as np


def load_box(tensor: np.ndarray, coords, box, estr, fill=0):
    """tensor indexed [d_{r-1}, ..., d_0]; coords/box/estr dimension 0 first. Returns the box array."""
    r = tensor.ndim
    axes = [np.arange(coords[d], coords[d] + box[d], estr[d]) for d in range(r)][::-1]
    out = np.full([len(a) for a in axes], fill, dtype=tensor.dtype)
    for idx in np.ndindex(*out.shape):
        pos = tuple(axes[k][idx[k]] for k in range(r))
        if all(0 <= p < s for p, s in zip(pos, tensor.shape)):
            out[idx] = tensor[pos]
    return out


def swizzle128(offset: int, span: int) -> int:
    """Where the swizzle (§5.5.6) puts byte ``offset`` of a box: shared memory is read in 128-byte
    lines of eight 16-byte chunks, and the chunk index is xored with the line index modulo span/16
    (32B: 2, 64B: 4, 128B: 8), so the pattern repeats every 256 / 512 / 1024 bytes. (The line is
    128 bytes whatever the span; only the xor's modulus depends on it.)"""
    line, chunk = offset // 128, (offset // 16) % 8
    return line * 128 + (chunk ^ (line % (span // 16))) * 16 + offset % 16
