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
    chunk, row = (offset % span) // 16, offset // span
    return (offset // span) * span + ((chunk ^ (row % (span // 16))) * 16) + offset % 16
