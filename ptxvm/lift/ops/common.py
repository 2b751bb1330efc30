"""Small helpers shared by several lowering chapters (types, mode flags)."""

from __future__ import annotations

from ...ir import nodes as ptx
from ...ir.types import ScalarType
from ..function import FunctionLowering


U32, S32, B32 = ScalarType.U32, ScalarType.S32, ScalarType.B32


def _t(ins: ptx.Instruction) -> ScalarType:
    return ins.types[0]


def _signed(t: ScalarType) -> bool:
    return t.kind == "s"


def _simple(fl: FunctionLowering, ins: ptx.Instruction, fn, src_types, dst_type=None) -> None:
    srcs = [fl.read(o, t) for o, t in zip(ins.operands[1:], src_types)]
    fl.write(ins.operands[0], dst_type or _t(ins), fn(fl.b, *srcs))


def _mode(ins: ptx.Instruction) -> str:
    return ins.mod("hilo") or ins.mod("wide") or ins.mod("hi") or "lo"
