"""Load host object files (made by ``backend.toolchain.compile_ir``) into this process.

    triple, cpu, features = host_target()
    res = toolchain.compile_ir(ir_text, triple=triple, cpu=cpu, features=features)
    lib = load_object(res.obj)
    f = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32)(lib.address("f"))

No code generation happens here, only linking (MCJIT's RuntimeDyld with an empty
module): that part of LLVM is given objects we made ourselves and does not hit
codegen's fatal errors. What could still go wrong silently is checked first on
the ELF file itself: an object for another machine, or an external symbol this
process cannot provide (RuntimeDyld would bind it to address 0 and the first
call would crash the process). Both become ``CodegenError``.

Keep the ``LoadedObject`` alive while any address taken from it may be used: its
code is freed with it.
"""

from __future__ import annotations

import platform
import struct
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..errors import CodegenError

# ELF e_machine of the hosts LLVM's RuntimeDyld supports, by platform.machine().
_ELF_MACHINE = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "ppc64le": 21,
                "riscv64": 243, "s390x": 22}
_ET_REL = 1
# LLVM's C API wraps even unparseable bytes into an "object" that crashes when linked, so
# nothing reaches it without the host format's magic (MCJIT uses ELF everywhere but macOS).
_HOST_FORMAT_MAGIC: bytes | None = b"\xcf\xfa\xed\xfe" if sys.platform == "darwin" else b"\x7fELF"
# Undefined symbols RuntimeDyld resolves itself rather than through the process.
_LINKER_PROVIDED = frozenset({"_GLOBAL_OFFSET_TABLE_"})

_lock = threading.Lock()


@cache
def _llvm() -> Any:
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm


@cache
def host_target() -> tuple[str, str, str]:
    """``(triple, cpu, features)`` of this machine, as the worker must compile for it."""
    llvm = _llvm()
    try:
        features = llvm.get_host_cpu_features().flatten()
    except RuntimeError:   # not available on every host: generic features then
        features = ""
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), features


# ------------------------------------------------------------------ ELF inspection

@dataclass(frozen=True)
class ElfSymbols:
    machine: int
    type: int
    defined: frozenset[str]        # global/weak symbols the object defines
    undefined: tuple[str, ...]     # symbols it needs from elsewhere


def elf_symbols(obj: bytes) -> ElfSymbols | None:
    """Symbols of a 64-bit little-endian ELF object; None for other formats.

    Raises ``CodegenError`` for an ELF file whose headers point outside it: LLVM must
    never see one (its C API hands back a null object that crashes when linked).
    """
    if len(obj) < 64 or obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    try:
        e_type, e_machine = struct.unpack_from("<HH", obj, 16)
        e_shoff, = struct.unpack_from("<Q", obj, 0x28)
        e_shentsize, e_shnum = struct.unpack_from("<HH", obj, 0x3A)
        if e_shentsize != 64 or e_shoff + e_shnum * 64 > len(obj):
            raise ValueError("section headers outside the file")
        sections = [struct.unpack_from("<IIQQQQIIQQ", obj, e_shoff + i * e_shentsize) for i in range(e_shnum)]
        for sh in sections:
            if sh[1] != 8 and sh[4] + sh[5] > len(obj):      # SHT_NOBITS occupies no file space
                raise ValueError("a section lies outside the file")
        defined: set[str] = set()
        undefined: list[str] = []
        for sh in sections:
            if sh[1] != 2:          # SHT_SYMTAB
                continue
            offset, size, link, entsize = sh[4], sh[5], sh[6], sh[9] or 24
            str_off, str_size = sections[link][4], sections[link][5]
            strtab = obj[str_off:str_off + str_size]
            for k in range(1, size // entsize):      # entry 0 is the null symbol
                st_name, st_info, _other, st_shndx = struct.unpack_from("<IBBH", obj, offset + k * entsize)
                binding = st_info >> 4
                name = strtab[st_name:strtab.index(b"\0", st_name)].decode("utf-8", "replace")
                if not name or binding == 0:         # local symbols do not link
                    continue
                (undefined.append(name) if st_shndx == 0 else defined.add(name))
    except (struct.error, IndexError, ValueError) as exc:
        raise CodegenError(f"malformed ELF object: {exc}") from None
    return ElfSymbols(e_machine, e_type, frozenset(defined), tuple(undefined))


# ------------------------------------------------------------------ loading

class LoadedObject:
    """One object file linked into this process. Its code lives as long as this object."""

    def __init__(self, engine: Any, symbols: ElfSymbols | None) -> None:
        self._engine = engine
        self._symbols = symbols

    @property
    def symbols(self) -> frozenset[str] | None:
        """Global symbols the object defines (None when it is not an ELF file we can read)."""
        return self._symbols.defined if self._symbols is not None else None

    def address(self, symbol: str) -> int:
        """Run-time address of ``symbol`` (function or data); ``CodegenError`` if not defined."""
        if self._symbols is not None and symbol not in self._symbols.defined:
            raise CodegenError(f"symbol {symbol!r} is not defined in the loaded object")
        with _lock:
            addr = self._engine.get_function_address(symbol) or self._engine.get_global_value_address(symbol)
        if not addr:
            raise CodegenError(f"symbol {symbol!r} is not defined in the loaded object")
        return int(addr)


def load_object(obj: bytes, *, reloc: str = "pic", codemodel: str = "jitdefault",
                externals: Mapping[str, int] | None = None) -> LoadedObject:
    """Link a host object file into this process and return a handle to its symbols.

    ``reloc``/``codemodel`` must be those the object was compiled with (the defaults of
    ``compile_ir``). ``externals`` adds symbols (name -> address, e.g. a ctypes callback)
    the object may call; they are registered process-wide with LLVM's symbol search.
    """
    llvm = _llvm()
    info = elf_symbols(obj)
    if info is None and _HOST_FORMAT_MAGIC is not None and not bytes(obj[:4]) == _HOST_FORMAT_MAGIC:
        raise CodegenError(f"not a host object file (starts with {bytes(obj[:8])!r})")
    if info is not None:
        expected = _ELF_MACHINE.get(platform.machine().lower())
        if expected is not None and info.machine != expected:
            raise CodegenError(f"object is for ELF machine {info.machine}, this host is {expected} "
                               f"({platform.machine()}): it cannot be loaded here")
        if info.type != _ET_REL:
            raise CodegenError(f"object has ELF type {info.type}; only relocatable objects (ET_REL) load")
    triple, cpu, features = host_target()
    with _lock:
        for name, addr in (externals or {}).items():
            llvm.add_symbol(name, int(addr))
        tm = llvm.Target.from_triple(triple).create_target_machine(
            cpu=cpu, features=features, reloc=reloc, codemodel=codemodel)
        backing = llvm.parse_assembly("")
        backing.triple = triple
        backing.data_layout = str(tm.target_data)
        # Creating the engine also makes the process's own symbols (libm, libc) searchable.
        engine = llvm.create_mcjit_compiler(backing, tm)
        if info is not None:
            missing = sorted({name for name in info.undefined
                              if name not in _LINKER_PROVIDED and name not in info.defined
                              and not llvm.address_of_symbol(name)})
            if missing:
                raise CodegenError("the object needs external symbols this process does not provide: "
                                   + ", ".join(missing))
        try:
            ref = llvm.ObjectFileRef.from_data(bytes(obj))
        except ValueError:    # LLVM returned no object: not an object file it understands
            raise CodegenError("not an object file LLVM can load") from None
        engine.add_object_file(ref)
        engine.finalize_object()
    return LoadedObject(engine, info)


def jit_ir(llvm_ir: str, *, opt: int = 3, use_cache: bool | None = None,
           externals: Mapping[str, int] | None = None) -> LoadedObject:
    """Compile ``llvm_ir`` for this host in the worker and load the result."""
    from ..backend.toolchain import compile_ir
    triple, cpu, features = host_target()
    res = compile_ir(llvm_ir, triple=triple, cpu=cpu, features=features, opt=opt, emit=("obj",),
                     reloc="pic", codemodel="jitdefault", use_cache=use_cache)
    assert res.obj is not None
    return load_object(res.obj, reloc="pic", codemodel="jitdefault", externals=externals)
