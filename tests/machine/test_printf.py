"""machine.printf: CUDA's device printf over any byte source (the executors hand in theirs)."""

from __future__ import annotations

import struct

import numpy as np

from ptxvm.machine.printf import cstring, format_printf


class _Bytes:
    """A flat byte memory at address 0x1000 (what an executor's reader provides)."""

    BASE = 0x1000

    def __init__(self, data: bytes) -> None:
        self.data = data

    def load(self, space, addr, dtype, lanes):
        assert space == "generic" and np.dtype(dtype) == np.uint8
        return np.array([self.data[int(a) - self.BASE] for a in addr], dtype=np.uint8)


def test_format_with_cuda_argument_packing() -> None:
    fmt = b"%d|%5.2f|%s|%c|%x|%lld|%hhd|%%|%p\0"
    s = b"hi\0"
    fmt_at, s_at = 0x1000, 0x1000 + len(fmt)
    args_at = (s_at + len(s) + 7) // 8 * 8
    # Each argument aligned to its size: int 0, double 8, char* 16, char 24, int 28, long long 32,
    # char 40 (as int), pointer 48.
    args = (struct.pack("<i", -7) + bytes(4) + struct.pack("<d", 3.14159) + struct.pack("<Q", s_at)
            + struct.pack("<i", ord("A")) + struct.pack("<I", 255) + struct.pack("<q", 123456789012)
            + struct.pack("<i", 0x1FF) + bytes(4) + struct.pack("<Q", 0xABC))
    mem = _Bytes(fmt + s + bytes(args_at - s_at - len(s)) + args)
    assert format_printf(mem, fmt_at, args_at, 0) == "-7| 3.14|hi|A|ff|123456789012|-1|%|0xabc"


def test_no_arguments_and_cstring_limit() -> None:
    mem = _Bytes(b"plain text\n\0")
    assert format_printf(mem, 0x1000, 0, 0) == "plain text\n"
    assert cstring(mem, 0x1000, 0, limit=5) == "plain"
