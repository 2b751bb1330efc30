"""isa/instructions.toml: completeness, and decoding of modifiers in any order."""

from __future__ import annotations

import itertools

import pytest

from ptxvm import isa
from ptxvm.isa import Status

TIER1 = "add mov ld mul fma setp wmma st bra sub cvt shl selp and shr bar cvta mad shfl not or xor cp vote neg barrier div abs ret min atom rcp".split()
TIER2 = "max tex sqrt bfi call ex2 popc clz rem brev membar bfind sust nanosleep rsqrt".split()
TIER3 = "activemask addc bmsk copysign cos exit fence lg2 madc match mbarrier prmt red redux shf sin subc suld trap vabsdiff4".split()
# Instruction families the interpreter issue leaves for later (textures, tensor cores, async copies).
LATER = {"wmma", "tex", "sust", "suld", "cp", "mbarrier", "vabsdiff4"}
# Every chapter of PTX ISA 9.0 §9.7 has at least these.
MORE = ("testp sad mul24 mad24 fns szext dp4a dp2a slct set lop3 cnot ldu prefetch isspacep cvt.pack "
        "tld4 txq suq sured brx.idx griddepcontrol elect.sync mma ldmatrix stmatrix wgmma.mma_async "
        "vadd vmax vset vadd2 vmin4 pmevent brkpt tanh getctarank mapa istypep applypriority discard "
        "createpolicy multimem.ld_reduce setmaxnreg").split()


def _keys_for(base: str) -> list[str]:
    return [k for k in isa.TABLE().ops if k == base or k.startswith(base + ".")]


def test_table_loads_and_every_entry_is_documented() -> None:
    table = isa.TABLE()
    assert len(table.ops) >= 200
    for name, spec in table.ops.items():
        assert spec.section and spec.title, name
        assert spec.forms, name
        for f in spec.forms:
            assert all(g in table.groups for g in f.groups), (name, f.name)


@pytest.mark.parametrize("base", TIER1 + TIER2 + TIER3 + MORE)
def test_opcode_present(base: str) -> None:
    assert _keys_for(base), f"{base} missing from isa/instructions.toml"


@pytest.mark.parametrize("base", sorted(set(TIER1 + TIER2 + TIER3) - LATER))
def test_tiers_1_to_3_are_supported(base: str) -> None:
    statuses = {isa.TABLE().ops[k].status for k in _keys_for(base)}
    assert Status.SUPPORTED in statuses, f"{base}: {statuses}"


@pytest.mark.parametrize("text", [
    "add.rn.ftz.f32", "ld.global.v4.f32", "setp.ltu.or.f32", "cvt.rzi.sat.s32.f32",
    "atom.global.gpu.acq_rel.add.u32", "shfl.sync.bfly.b32", "fma.rn.sat.f32",
])
def test_modifiers_in_any_order_decode_alike(text: str) -> None:
    parts = text.split(".")
    base = isa.decode(text)
    # Types keep their relative order (cvt's destination comes first); everything else may move.
    types = [p for p in parts[1:] if p in {t.value for t in base.types}]
    others = [p for p in parts[1:] if p not in types]
    for perm in itertools.islice(itertools.permutations(others), 24):
        d = isa.decode(".".join([parts[0], *perm, *types]))
        assert (d.opcode, sorted(d.mods), d.types, d.form.name) == \
            (base.opcode, sorted(base.mods), base.types, base.form.name)


@pytest.mark.parametrize("text, message", [
    ("add.rnx.f32", "unknown modifier `.rnx` for `add.f32`; expected one of .rm .rn .rp .rz"),
    ("addx.s32", "unknown instruction `addx`; did you mean `add`"),
    ("add.rn.rz.f32", "conflicting modifiers `.rn` and `.rz` in `add.rn.rz.f32`"),
    ("bra.f32", "`bra` takes no type, found `.f32`"),
])
def test_decode_errors_name_the_offender(text: str, message: str) -> None:
    with pytest.raises(isa.DecodeError) as exc:
        isa.decode(text)
    assert exc.value.message.startswith(message)


@pytest.mark.parametrize("text", ["add.rn.s32", "add.sat.u32", "cvt.rn.rz.f32.f64", "mul.wide.f32"])
def test_impossible_combinations_are_rejected(text: str) -> None:
    with pytest.raises(isa.DecodeError):
        isa.decode(text)


def test_opcode_classes_come_from_the_table() -> None:
    # The ISA's warp-synchronous instructions (§9.7.9.6 shfl.sync, §9.7.13.2 bar.warp.sync,
    # §9.7.13.9-12 vote.sync, match.sync, activemask, redux.sync, §9.7.14 the warp-level matrix
    # instructions, §9.7.15 wgmma.mma_async over a warpgroup) and CTA barriers (§9.7.13.1).
    from ptxvm.isa import OpClass, opcodes_in
    assert opcodes_in(OpClass.WARP_SYNC) == {"shfl", "bar.warp.sync", "vote", "match", "activemask", "redux.sync",
                                             "wmma.load", "wmma.store", "wmma.mma", "mma", "ldmatrix",
                                             "stmatrix", "movmatrix", "wgmma.mma_async"}
    assert opcodes_in(OpClass.CTA_SYNC) == {"bar", "barrier", "mbarrier.test_wait", "mbarrier.test_wait.parity",
                                            "mbarrier.try_wait", "mbarrier.try_wait.parity"}
    assert {"wmma.load", "mma", "ldmatrix", "wgmma.mma_async"} <= opcodes_in(OpClass.FRAGMENT)
    assert not opcodes_in(OpClass.FRAGMENT) & {"ld", "st", "mov", "shfl"}
