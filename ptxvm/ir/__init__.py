"""Typed IR of PTX modules."""

from .nodes import *  # noqa: F401,F403
from .nodes import Module, Function, Instruction  # noqa: F401
from .types import ScalarType, StateSpace  # noqa: F401
