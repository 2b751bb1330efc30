"""cubin / fatbin / executables: the PTX nvcc embedded, read from the committed fixtures of
tests/fixtures/make_elf_fixtures.py (no nvcc needed here).

Independent references: nvcc's own ``-ptx`` output of the same source (frontdoor.ptx), the
uncompressed fatbin (--compress-mode=none) for the compressed ones, numpy for the kernels.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

import ptxvm
from ptxvm.cli import main
from ptxvm.errors import PtxError
from ptxvm.frontend import elf_ptx
from ptxvm.frontend.elf_ptx import NoPtxError, extract_ptx, lz4_block_decompress, ptx_entries
from ptxvm.frontend.sources import read_ptx

ELF = Path(__file__).resolve().parents[1] / "fixtures" / "elf"
WITH_PTX = ["frontdoor.fatbin", "frontdoor.lz4.fatbin", "frontdoor.plain.fatbin", "frontdoor_exe",
            "libfrontdoor.so"]


def _normalised(text: str) -> list[str]:
    """PTX lines without comments, whitespace runs as one space (fatbinary strips comments and
    tabs, keeping the lines)."""
    return [" ".join(re.sub(r"//.*", "", line).split()) for line in text.splitlines()]


@pytest.mark.parametrize("name", WITH_PTX)
def test_embedded_ptx_is_what_nvcc_ptx_writes(name: str) -> None:
    data, label = read_ptx(ELF / name)
    reference = (ELF / "frontdoor.ptx").read_text()
    assert label == f"{ELF / name}[compute_80.ptx]"
    assert _normalised(data.decode()) == _normalised(reference)


def test_newest_ptx_of_a_fatbin_is_chosen() -> None:
    entries, sass = ptx_entries((ELF / "frontdoor.multi.fatbin").read_bytes(), "multi")
    assert sorted(e.arch for e in entries) == [75, 90] and sass == []
    chosen = extract_ptx((ELF / "frontdoor.multi.fatbin").read_bytes(), "multi")
    assert chosen.arch == 90 and b".target sm_90" in chosen.text and chosen.version == (9, 0)


def _sum_blocks(x: np.ndarray, block: int) -> np.ndarray:
    return x.reshape(-1, block).sum(axis=1)


@pytest.mark.parametrize("name", ["frontdoor.fatbin", "frontdoor_exe"])
def test_kernels_of_a_fatbin_and_an_executable_run(name: str, executor: str) -> None:
    mod = ptxvm.Module.from_file(ELF / name)
    n = 300
    a = np.random.default_rng(1).random(n, dtype=np.float32)
    b = np.random.default_rng(2).random(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    mod["vadd"]((3,), (128,), (a, b, c, np.int32(n)), device=executor)
    np.testing.assert_array_equal(c, a + b)
    x = a.copy()
    mod["scale<float>"]((3,), (128,), (x, np.float32(2.5), np.int32(n)), device=executor)
    np.testing.assert_array_equal(x, a * np.float32(2.5))
    ints = np.arange(512, dtype=np.int32) * 3 - 700
    out = np.zeros(4, np.int32)
    mod["block_sum"]((4,), (128,), (ints, out, np.int32(512)), device=executor)
    np.testing.assert_array_equal(out, _sum_blocks(ints, 128))


@pytest.mark.parametrize("name, what", [("frontdoor.sass.fatbin", "file"), ("frontdoor.sm80.cubin", "cubin")])
def test_sass_only_says_how_to_rebuild(name: str, what: str) -> None:
    with pytest.raises(NoPtxError) as e:
        ptxvm.Module.from_file(ELF / name)
    assert e.value.filename == str(ELF / name)
    assert f"this {what} has no PTX, only SASS for sm_80" in e.value.message
    assert "-gencode arch=compute_80,code=compute_80" in e.value.message


def test_two_translation_units_are_two_modules() -> None:
    data = (ELF / "two_units_exe").read_bytes()
    with pytest.raises(PtxError, match="holds the PTX of 2 translation units"):
        extract_ptx(data, "two_units_exe")
    entries, _ = ptx_entries(data, "two_units_exe")
    kernels = [sorted(ptxvm.Module(e.text).kernels) for e in sorted(entries, key=lambda e: e.unit)]
    assert sorted(kernels) == [["_Z5scaleIfEvPT_S0_i", "block_sum", "vadd"], ["negate"]]


def test_lz4_block_with_an_overlapping_match() -> None:
    # Hand-made block: token 0x22 = 2 literals "ab", match of 2+4 = 6 at distance 2 (overlapping:
    # "ababab"), then a last sequence of 1 literal "c".
    assert lz4_block_decompress(b"\x22ab\x02\x00\x10c", 9) == b"ababababc"
    # 15+ literals take length bytes: 15 + 3 = 18 literals.
    assert lz4_block_decompress(b"\xf0\x03" + b"x" * 18, 18) == b"x" * 18


@pytest.mark.parametrize("name", ["frontdoor.fatbin", "frontdoor.lz4.fatbin", "frontdoor_exe"])
def test_truncated_or_corrupt_files_are_ptx_errors(name: str) -> None:
    data = (ELF / name).read_bytes()
    for cut in range(1, len(data), max(len(data) // 120, 1)):
        for blob in (data[:cut], data[:cut] + bytes(len(data) - cut), data[:cut] + b"\xff" * 64 + data[cut + 64:]):
            try:
                extract_ptx(blob, name)
            except PtxError:
                pass                      # what any damage may give; never another exception


def test_corrupt_compressed_entries_are_located(tmp_path: Path) -> None:
    data = bytearray((ELF / "frontdoor.fatbin").read_bytes())
    at = data.find(b"\x28\xb5\x2f\xfd")      # the zstd frame of the PTX entry
    data[at + 8:at + 40] = b"\xa5" * 32
    (tmp_path / "bad.fatbin").write_bytes(data)
    with pytest.raises(PtxError) as e:
        ptxvm.Module.from_file(tmp_path / "bad.fatbin")
    assert e.value.filename == str(tmp_path / "bad.fatbin") and "zstd" in e.value.message


def test_zstd_without_a_decoder_says_what_to_install(monkeypatch) -> None:
    def missing(src: bytes, size: int) -> bytes:
        raise ImportError
    monkeypatch.setattr(elf_ptx, "_zstd_stdlib", missing)
    monkeypatch.setattr(elf_ptx, "_zstd_package", missing)
    monkeypatch.setattr(elf_ptx, "_libzstd", lambda: None)
    with pytest.raises(PtxError, match=r"zstd-compressed .* pip install 'ptxvm\[cuda\]'"):
        extract_ptx((ELF / "frontdoor.fatbin").read_bytes(), "f")
    assert extract_ptx((ELF / "frontdoor.lz4.fatbin").read_bytes(), "f").arch == 80   # LZ4 needs none


def test_fatbin_header_facts() -> None:
    # The layout elf_ptx reads, checked on the uncompressed fatbin: magic, then a PTX entry whose
    # payload is the PTX text.
    data = (ELF / "frontdoor.plain.fatbin").read_bytes()
    magic, _version, header, size = struct.unpack_from("<IHHQ", data)
    assert magic == 0xBA55ED50 and header + size == len(data)
    assert b".version 9.0" in data and b".entry vadd" in data


def test_cli_check_run_and_bad_input(tmp_path: Path, capsys) -> None:
    assert main(["check", str(ELF / "frontdoor.fatbin"), "-q"]) == 0
    assert main(["check", str(ELF / "frontdoor.sm80.cubin")]) == 1
    err = capsys.readouterr()
    assert "this cubin has no PTX" in err.out + err.err and "Traceback" not in err.out + err.err
    out = tmp_path / "o.npz"
    assert main(["run", str(ELF / "frontdoor_exe"), "-k", "vadd", "-g", "1", "-b", "64", "-a", "f32[64]=arange",
                 "-a", "f32[64]=ones", "-a", "f32[64]=zeros", "-a", "64", "-o", str(out), "-q"]) == 0
    np.testing.assert_array_equal(np.load(out)["arg2"], np.arange(64, dtype=np.float32) + 1)
    assert main(["run", str(ELF / "frontdoor.sass.fatbin"), "-k", "vadd"]) == 1
    assert "has no PTX" in capsys.readouterr().err
