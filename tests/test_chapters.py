"""The interpreter and the lifter file each opcode under the same PTX ISA chapter (issue 13, item 6):
whoever looks for how `setp` runs finds it in `compare.py` in both `interp/ops/` and `lift/ops/`."""

from __future__ import annotations

from pathlib import Path

from ptxvm.interp import ops as interp_ops
from ptxvm.lift import ops as lift_ops

# The chapter files both trees share; helper modules (common, formulas, slices) register nothing.
CHAPTERS = {"arith", "integer", "logic", "floating", "compare", "move", "convert", "memory", "sync",
            "atomics", "async_copy", "control", "warp", "matrix", "texture", "surface",
            "mbarrier",    # §9.7.13.15 mbarrier objects and the bulk copies that complete on them
            "wgmma",       # §9.7.15 warpgroup matrix multiply-accumulate
            "tma"}         # §9.7.9.25.5 tensor copies through a tensor map
# Chapters the interpreter may have before the lifter (none today: textures and surfaces,
# §9.7.10-11, issue 17, are lowered too).
INTERP_FIRST: set[str] = set()


def _chapter_of(registry: dict) -> dict[str, str]:
    return {op: fn.__module__.rsplit(".", 1)[-1] for op, fn in registry.items()}


def test_each_opcode_lives_in_the_same_named_chapter_in_both_trees() -> None:
    interp = _chapter_of(interp_ops.load_all())
    lift = _chapter_of(lift_ops.LOWERINGS)
    both = sorted(set(interp) & set(lift))
    assert len(both) > 90      # the registries are really read (about 95 shared opcodes today)
    differ = [f"{op}: interp/ops/{interp[op]}.py vs lift/ops/{lift[op]}.py" for op in both if interp[op] != lift[op]]
    assert not differ, "\n".join(differ)


def test_implementations_sit_only_in_chapter_files_both_trees_have() -> None:
    used = set(_chapter_of(interp_ops.load_all()).values()) | set(_chapter_of(lift_ops.LOWERINGS).values())
    assert used <= CHAPTERS | INTERP_FIRST, sorted(used - CHAPTERS - INTERP_FIRST)
    for pkg in (interp_ops, lift_ops):
        files = {p.stem for p in Path(pkg.__file__).parent.glob("*.py")}
        assert CHAPTERS <= files, (pkg.__name__, sorted(CHAPTERS - files))
