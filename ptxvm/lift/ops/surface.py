"""Surface instructions (PTX ISA 9.0 §9.7.11 suld, sust, sured, suq): the same operand reading
and target ``texture`` hook as the texture chapter (see ``texture``)."""

from __future__ import annotations

from ...ir import nodes as ptx
from ..function import FunctionLowering
from . import lowers
from .texture import lower_texture


@lowers("suld", "sust", "sured", "suq")
def _surface(fl: FunctionLowering, ins: ptx.Instruction) -> None:
    lower_texture(fl, ins)
