"""Clang offload bundles: ptxvm's writer checked against the documented layout (read here
with struct, not with ptxvm's reader) and, where Debian's clang-19 is installed, byte for byte
against clang-offload-bundler itself and through its unbundler."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

import ptxvm
from ptxvm.amdgpu.bundle import BundleError, code_objects, read_bundle, write_bundle
from ptxvm.cli import main

FIXTURE = Path(__file__).parents[1] / "fixtures" / "nvcc" / "sm80" / "elementwise.ptx"
BUNDLER = shutil.which("clang-offload-bundler-19") or next(
    (p for p in ("/usr/lib/llvm-19/bin/clang-offload-bundler",) if Path(p).is_file()), None)
needs_bundler = pytest.mark.skipif(BUNDLER is None, reason="clang-offload-bundler (Debian's clang-19) not installed")


def _entries(data: bytes) -> list[tuple[int, int, str]]:
    """The documented layout: 24-byte magic, u64 count, then (offset, size, id length, id)."""
    assert data[:24] == b"__CLANG_OFFLOAD_BUNDLE__"
    (count,) = struct.unpack_from("<Q", data, 24)
    pos, out = 32, []
    for _ in range(count):
        off, size, n = struct.unpack_from("<QQQ", data, pos)
        out.append((off, size, data[pos + 24:pos + 24 + n].decode()))
        pos += 24 + n
    return out


def test_layout_is_the_documented_one():
    data = write_bundle({"gfx90a": b"AAAA", "gfx1100": b"BBBBBB"})
    entries = _entries(data)
    assert [e[2] for e in entries] == ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a",
                                       "hipv4-amdgcn-amd-amdhsa--gfx1100"]
    assert [(off % 4096, size) for off, size, _ in entries] == [(0, 0), (0, 4), (0, 6)]
    assert [data[off:off + size] for off, size, _ in entries] == [b"", b"AAAA", b"BBBBBB"]
    assert read_bundle(data)["hipv4-amdgcn-amd-amdhsa--gfx90a"] == b"AAAA"
    assert code_objects(data) == {"gfx90a": b"AAAA", "gfx1100": b"BBBBBB"}


@pytest.mark.parametrize("data, message", [
    (b"not a bundle at all", "no __CLANG_OFFLOAD_BUNDLE__ magic"),
    (b"__CLANG_OFFLOAD_BUNDLE__\x02\x00", "truncated or corrupt"),
    (b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<QQQQ", 1, 64, 999, 3) + b"abc", "runs past the end"),
])
def test_malformed_bundles_are_refused_clearly(data, message):
    with pytest.raises(BundleError, match=message):
        read_bundle(data)


@needs_bundler
def test_same_bytes_as_clang_offload_bundler(tmp_path):
    (tmp_path / "a.co").write_bytes(b"\x7fELF-a" * 100)
    (tmp_path / "b.co").write_bytes(b"\x7fELF-bb" * 333)
    out = tmp_path / "ref.hipfb"
    subprocess.run([BUNDLER, "-type=o", "-bundle-align=4096",
                    "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a,"
                    "hipv4-amdgcn-amd-amdhsa--gfx942",
                    "-input=/dev/null", f"-input={tmp_path / 'a.co'}", f"-input={tmp_path / 'b.co'}",
                    f"-output={out}"], check=True)
    ours = write_bundle({"gfx90a": (tmp_path / "a.co").read_bytes(), "gfx942": (tmp_path / "b.co").read_bytes()})
    assert ours == out.read_bytes()


@pytest.mark.lld
def test_compile_with_a_list_of_targets_gives_a_bundle(tmp_path):
    bundle = ptxvm.compile(FIXTURE.read_text(), target=["gfx90a", "gfx1100"], filename=str(FIXTURE))
    assert bundle.targets == ["gfx90a", "gfx1100"]
    assert bundle["gfx1100"].target.name == "gfx1100"
    assert code_objects(bundle.save(tmp_path / "k.hipfb").read_bytes()) == {
        "gfx90a": bundle["gfx90a"].hsaco, "gfx1100": bundle["gfx1100"].hsaco}
    with pytest.raises(KeyError, match="holds gfx90a, gfx1100"):
        bundle["gfx942"]


@pytest.mark.lld
@needs_bundler
def test_translate_bundle_unbundles_to_the_single_target_objects(tmp_path, capsys):
    assert main(["translate", str(FIXTURE), "--arch", "gfx90a,gfx942,gfx1100", "--bundle",
                 "-o", str(tmp_path / "k.hipfb")]) == 0
    assert "k.hipfb: 8 kernels, 3 targets (gfx90a, gfx942, gfx1100)" in capsys.readouterr().out
    listed = subprocess.run([BUNDLER, "-list", "-type=o", f"-input={tmp_path / 'k.hipfb'}"],
                            check=True, capture_output=True, text=True).stdout.split()
    assert sorted(listed) == sorted(["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a",
                                     "hipv4-amdgcn-amd-amdhsa--gfx942", "hipv4-amdgcn-amd-amdhsa--gfx1100"])
    for arch in ("gfx942", "gfx1100"):
        got = tmp_path / f"{arch}.co"
        subprocess.run([BUNDLER, "-type=o", f"-targets=hipv4-amdgcn-amd-amdhsa--{arch}",
                        f"-input={tmp_path / 'k.hipfb'}", f"-output={got}", "-unbundle"], check=True)
        assert main(["translate", str(FIXTURE), "--arch", arch, "-q", "-o", str(tmp_path / f"{arch}.hsaco")]) == 0
        assert got.read_bytes() == (tmp_path / f"{arch}.hsaco").read_bytes()


@pytest.mark.lld
def test_bundle_for_several_files_goes_to_a_directory(tmp_path, capsys):
    other = tmp_path / "copy.ptx"
    other.write_text(FIXTURE.read_text())
    assert main(["translate", str(FIXTURE), str(other), "--arch", "gfx90a,gfx1030", "--bundle",
                 "-o", str(tmp_path / "out") + "/", "-q"]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["copy.hipfb", "elementwise.hipfb"]
    assert sorted(code_objects((tmp_path / "out" / "copy.hipfb").read_bytes())) == ["gfx1030", "gfx90a"]
