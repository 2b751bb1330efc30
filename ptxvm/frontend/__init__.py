"""PTX text -> IR: Lark grammar, IR builder, error recovery."""

from .parser import parse, parse_unverified  # noqa: F401
