"""A small Itanium C++ ABI demangler for the names nvcc and numba give kernels.

    >>> demangle("_Z10vector_addPKfS0_Pfi")
    'vector_add(float const*, float const*, float*, int)'
    >>> base_name("_Z10vector_addPKfS0_Pfi")
    'vector_add'

It covers what CUDA front ends emit for kernels and the device functions around them:
namespaces and nested names, templates with type, integer, enum and ``T_`` arguments,
builtin types, pointers, references (collapsed as C++ does), const/volatile, the
substitutions ``S_``/``S<n>_`` and ``St``..., constructors, destructors, operators, ABI
tags, local names (``_ZZ...E4tile``), vtables, argument packs and their ``Dp`` expansions
(CUB's ``transform_kernel<...>(..., kernel_arg<T>...)``), array and function types
(``float (*) [10]``, ``void (&)(int)``), lambdas and unnamed types (``{lambda(int)#1}``). The output is spelled as GNU
``c++filt`` spells it. On anything outside that set it returns ``None`` and never guesses:
a wrong name is worse than a mangled one. Pure Python, no imports beyond the standard
library, so every stage (and ``ptxvm check`` without llvmlite) can use it.
"""
# size: one recursive-descent parser of the Itanium mangling grammar; its productions call each other
# through one cursor and substitution table, so the file reads as the grammar does (split next time
# the grammar grows: types and names into two modules).

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

_BUILTIN = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char",
    "s": "short", "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long",
    "m": "unsigned long", "x": "long long", "y": "unsigned long long", "n": "__int128",
    "o": "unsigned __int128", "f": "float", "d": "double", "e": "long double", "g": "__float128",
    "z": "...",
}
_BUILTIN_D = {"Dn": "decltype(nullptr)", "Ds": "char16_t", "Di": "char32_t", "Du": "char8_t", "Dh": "half"}
# Literal suffixes c++filt prints for integer template arguments; other types get a cast.
_LITERAL_SUFFIX = {"i": "", "j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}
_STD_SUBS = {"St": "std", "Sa": "std::allocator", "Sb": "std::basic_string", "Ss": "std::string",
             "Si": "std::istream", "So": "std::ostream", "Sd": "std::iostream"}
_OPERATORS = {
    "nw": "new", "na": "new[]", "dl": "delete", "da": "delete[]", "ps": "+", "ng": "-", "ad": "&",
    "de": "*", "co": "~", "pl": "+", "mi": "-", "ml": "*", "dv": "/", "rm": "%", "an": "&", "or": "|",
    "eo": "^", "aS": "=", "pL": "+=", "mI": "-=", "mL": "*=", "dV": "/=", "rM": "%=", "aN": "&=",
    "oR": "|=", "eO": "^=", "ls": "<<", "rs": ">>", "lS": "<<=", "rS": ">>=", "eq": "==", "ne": "!=",
    "lt": "<", "gt": ">", "le": "<=", "ge": ">=", "ss": "<=>", "nt": "!", "aa": "&&", "oo": "||",
    "pp": "++", "mm": "--", "cm": ",", "pm": "->*", "pt": "->", "cl": "()", "ix": "[]",
}
_SPECIAL = {"TV": "vtable for ", "TI": "typeinfo for ", "TS": "typeinfo name for ", "TT": "VTT for "}


class _Unsupported(Exception):
    """A construct this demangler does not decode: the caller gets None."""


@dataclass(frozen=True)
class _Type:
    """A type's spelling, with its reference kind kept apart for reference collapsing.

    Array and function types print around a declarator hole, as C++ spells them
    (``float (*) [10]``, ``void (&)(int)``): ``base`` is left of it, ``right`` the ``[n]`` or
    ``(params)`` after it, ``decl`` the pointers/references in it. A template argument pack
    (``J...E``) keeps its elements in ``pack`` so that ``T<n>_`` indices and ``Dp`` expansions
    see it as one argument."""

    base: str
    ref: str = ""            # "", "&" or "&&"
    cv: frozenset[str] = frozenset()   # top-level qualifiers already spelled in `base`
    right: str = ""
    decl: str = ""
    array: bool = False
    pack: tuple["_Type", ...] | None = None

    def __str__(self) -> str:
        if not self.right:
            return self.base + self.ref
        if not self.decl:
            return f"{self.base} {self.right}"
        return f"{self.base} ({self.decl}){' ' if self.array else ''}{self.right}"


# A substitution candidate whose spelling depends on a pack expansion: referring to it is refused.
_POISON = _Type("\0")


@dataclass
class _Name:
    text: str
    template: bool = False       # ends in template arguments (its encoding has a return type)
    ctor_like: bool = False      # constructor, destructor or conversion: no return type
    suffix: str = ""             # " const" and ref-qualifiers of a member function


class _Demangler:
    def __init__(self, s: str) -> None:
        self.s, self.i = s, 0
        self.subs: list[_Type] = []
        self.tmpl: list[_Type] | None = None   # template arguments T_ refers to
        self.expanding: int | None = None      # the pack element a `Dp` expansion is spelling
        self.pack_len: int | None = None

    # ---------------------------------------------------------------- reading
    def peek(self, n: int = 1) -> str:
        return self.s[self.i:self.i + n]

    def take(self, text: str) -> bool:
        if self.s.startswith(text, self.i):
            self.i += len(text)
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.take(text):
            raise _Unsupported(f"expected {text!r} at {self.i}")

    def number(self) -> int:
        m = re.compile(r"\d+").match(self.s, self.i)
        if not m:
            raise _Unsupported("number")
        self.i = m.end()
        return int(m.group())

    def seq_id(self, end: str) -> int:
        """``_`` -> 0, ``<base 36>_`` -> n + 1 (substitutions and template parameters)."""
        if self.take(end):
            return 0
        m = re.compile(r"[0-9A-Z]+").match(self.s, self.i)
        if not m:
            raise _Unsupported("sequence id")
        self.i = m.end()
        self.expect(end)
        return int(m.group(), 36) + 1

    # ---------------------------------------------------------------- top level
    def mangled(self) -> str:
        self.expect("_Z")
        prefix = next((v for k, v in _SPECIAL.items() if self.take(k)), None)
        if prefix is not None:
            text = prefix + str(self.type())
        elif self.take("GV"):
            text = "guard variable for " + self.name(top=True).text
        else:
            text = self.encoding()
        if self.i != len(self.s):
            raise _Unsupported("trailing characters (a clone suffix or an unknown construct)")
        return text

    def encoding(self, with_return: bool = True) -> str:
        """A function's signature; ``with_return=False`` for the function around a local name,
        which c++filt prints without its return type."""
        name = self.name(top=True)
        if self.i == len(self.s) or self.peek() == "E":
            return name.text + name.suffix          # a variable, or the function of a local name
        ret = ""
        if name.template and not name.ctor_like:
            rt = self.type()
            if rt.right:
                raise _Unsupported("a function returning an array or function pointer")
            ret = str(rt) + " " if with_return else ""
        params = []
        while self.i < len(self.s) and self.peek() not in ("E", "."):
            params.append(str(self.type()))
        params = [p for p in params if p]           # an empty pack expansion prints nothing
        if params == ["void"]:
            params = []
        return f"{ret}{name.text}({', '.join(params)}){name.suffix}"

    # ---------------------------------------------------------------- names
    def name(self, top: bool = False) -> _Name:
        c = self.peek()
        if c == "N":
            return self.nested(top)
        if c == "Z":
            return self.local()
        if c == "S" and self.peek(2) != "St":
            base = self.substitution()
            if self.peek() != "I":
                raise _Unsupported("a substitution as a whole name")
            return _Name(base.base + self.template_args(top), template=True)
        std = self.take("St")
        unq = self.unqualified(last_source="")
        text = ("std::" if std else "") + unq.text
        if self.peek() == "I":
            self.subs.append(_Type(text))
            return _Name(text + self.template_args(top), template=True, ctor_like=unq.ctor_like)
        return _Name(text, ctor_like=unq.ctor_like)

    def local(self) -> _Name:
        self.expect("Z")
        outer = self.encoding(with_return=False)
        self.expect("E")
        if self.take("s"):
            raise _Unsupported("string literal entity")
        inner = self.name()
        if self.take("_"):
            raise _Unsupported("discriminator")
        return _Name(f"{outer}::{inner.text}", template=inner.template, ctor_like=inner.ctor_like,
                     suffix=inner.suffix)

    def nested(self, top: bool) -> _Name:
        self.expect("N")
        suffix = ""
        for q, word in (("r", " restrict"), ("V", " volatile"), ("K", " const")):
            if self.take(q):
                suffix = word + suffix
        if self.take("R"):
            suffix += " &"
        elif self.take("O"):
            suffix += " &&"
        text, last_source = "", ""
        template = ctor_like = False
        while not self.take("E"):
            if self.i >= len(self.s):
                raise _Unsupported("unterminated nested name")
            c = self.peek()
            if c == "I" and text:
                text += self.template_args(top)
                template = True
            elif c == "S" and not text:
                if self.take("St"):
                    text = "std"
                    continue
                text = self.substitution().base
                template = False
                continue            # a substitution is not added again
            elif c == "T" and not text:
                text = str(self.template_param(substitute=False))
                template = False
            elif c in "DL" and self.peek(2) in ("Dt", "DT", "DC"):
                raise _Unsupported("decltype or structured binding in a name")
            else:
                unq = self.unqualified(last_source)
                if unq.source:
                    last_source = unq.source
                text = f"{text}::{unq.text}" if text else unq.text
                template, ctor_like = False, unq.ctor_like
            if self.peek() != "E":
                self.subs.append(_Type(text))
        return _Name(text, template=template, ctor_like=ctor_like, suffix=suffix)

    @dataclass
    class _Unqualified:
        text: str
        source: str = ""        # the plain identifier, for a constructor's name
        ctor_like: bool = False

    def unqualified(self, last_source: str) -> _Demangler._Unqualified:
        c = self.peek()
        if c.isdigit():
            ident = self.source_name()
            return self._Unqualified(ident + self.abi_tags(), ident)
        if c == "C" and self.peek(2)[1:] in ("1", "2", "3", "I"):
            if self.take("CI"):
                raise _Unsupported("inheriting constructor")
            self.i += 2
            if not last_source:
                raise _Unsupported("constructor outside a class")
            return self._Unqualified(last_source + self.abi_tags(), ctor_like=True)
        if c == "D" and self.peek(2)[1:] in ("0", "1", "2"):
            self.i += 2
            if not last_source:
                raise _Unsupported("destructor outside a class")
            return self._Unqualified("~" + last_source + self.abi_tags(), ctor_like=True)
        if self.take("cv"):
            return self._Unqualified("operator " + str(self.type()), ctor_like=True)
        if self.take("Ut"):
            return self._Unqualified(f"{{unnamed type#{self.discriminator()}}}")
        if self.take("Ul"):
            params = []
            while not self.take("E"):
                if self.i >= len(self.s):
                    raise _Unsupported("unterminated lambda signature")
                params.append(str(self.type()))
            params = [p for p in params if p]
            if params == ["void"]:
                params = []
            return self._Unqualified(f"{{lambda({', '.join(params)})#{self.discriminator()}}}")
        op = _OPERATORS.get(self.peek(2))
        if op is not None:
            self.i += 2
            sep = " " if op[0].isalpha() else ""
            if op[-1] in "<>" and self.peek() == "I":
                raise _Unsupported("c++filt spaces `operator< <T>`; not decoded")
            return self._Unqualified(f"operator{sep}{op}" + self.abi_tags())
        raise _Unsupported(f"unqualified name at {self.i}")

    def discriminator(self) -> int:
        """The ``[<number>] _`` after a closure or unnamed type: ``_`` is #1, ``<n>_`` is #n+2."""
        if self.take("_"):
            return 1
        n = self.number()
        self.expect("_")
        return n + 2

    def source_name(self) -> str:
        n = self.number()
        if n <= 0 or self.i + n > len(self.s):
            raise _Unsupported("source name length")
        ident = self.s[self.i:self.i + n]
        self.i += n
        if ident.startswith("_GLOBAL__N"):
            return "(anonymous namespace)"
        return ident

    def abi_tags(self) -> str:
        tags = ""
        while self.take("B"):
            tags += f"[abi:{self.source_name()}]"
        return tags

    # ---------------------------------------------------------------- templates
    def template_args(self, scope: bool) -> str:
        self.expect("I")
        args: list[_Type] = []
        while not self.take("E"):
            if self.i >= len(self.s):
                raise _Unsupported("unterminated template arguments")
            args.extend(self.template_arg())
        if scope:
            self.tmpl = args
        text = ", ".join(t for t in map(str, args) if t)
        return f"<{text}{' ' if text.endswith('>') else ''}>"

    def template_arg(self) -> list[_Type]:
        if self.take("L"):
            return [self.literal()]
        if self.take("X"):
            if self.peek() != "T":
                raise _Unsupported("expression template argument")
            value = self.template_param(substitute=False)
            self.expect("E")
            return [value]
        if self.take("J"):
            pack: list[_Type] = []
            while not self.take("E"):
                if self.i >= len(self.s):
                    raise _Unsupported("unterminated pack")
                pack.extend(self.template_arg())
            return [_Type(", ".join(t for t in map(str, pack) if t), pack=tuple(pack))]
        return [self.type()]

    def literal(self) -> _Type:
        if self.peek() == "_":
            raise _Unsupported("external name literal")
        c = self.peek()
        if c in _LITERAL_SUFFIX or c in ("b", "h", "a", "c", "s", "t"):
            self.i += 1
            ty = _BUILTIN[c]
        else:
            ty = str(self.type())
            c = ""
        neg = self.take("n")
        value = self.number()
        self.expect("E")
        sign = "-" if neg else ""
        if c == "b" and value in (0, 1):
            return _Type("true" if value else "false")
        if c in _LITERAL_SUFFIX:
            return _Type(f"{sign}{value}{_LITERAL_SUFFIX[c]}")
        return _Type(f"({ty}){sign}{value}")

    def template_param(self, substitute: bool = True) -> _Type:
        self.expect("T")
        n = self.seq_id("_")
        if self.tmpl is None or n >= len(self.tmpl):
            raise _Unsupported("template parameter without arguments in scope")
        value = self.tmpl[n]
        if value.pack is not None and self.expanding is not None:
            # Inside `Dp`: the element being expanded (an empty pack expands to nothing).
            self.pack_len = len(value.pack)
            value = value.pack[self.expanding] if self.expanding < len(value.pack) else _Type("")
        if substitute:
            self.subs.append(value)
        return value

    def substitution(self) -> _Type:
        two = self.peek(2)
        if two in _STD_SUBS and two != "St":
            self.i += 2
            return _Type(_STD_SUBS[two])
        self.expect("S")
        n = self.seq_id("_")
        if n >= len(self.subs) or self.subs[n] is _POISON:
            raise _Unsupported("substitution out of range or inside a pack expansion")
        return self.subs[n]

    # ---------------------------------------------------------------- types
    # size: the <type> production of the Itanium grammar, one short branch per type code, read top to
    # bottom against the ABI document.
    def type(self) -> _Type:
        c = self.peek()
        if not c:
            raise _Unsupported("a type expected at the end")
        if c in _BUILTIN:
            self.i += 1
            return _Type(_BUILTIN[c])
        code = self.peek(2)
        if code in _BUILTIN_D:
            self.i += 2
            return _Type(_BUILTIN_D[code])
        if code == "Dp":
            return self.pack_expansion()
        if c == "A":
            self.i += 1
            n = self.number()
            self.expect("_")
            elem = self.type()
            if elem.right or elem.ref:
                raise _Unsupported("array of arrays, functions or references")
            t = _Type(str(elem), right=f"[{n}]", array=True)
            self.subs.append(t)
            return t
        if c == "F":
            self.i += 1
            self.take("Y")
            ret = self.type()
            if ret.right:
                raise _Unsupported("a function type returning an array or function pointer")
            params = []
            while not self.take("E"):
                if self.i >= len(self.s) or self.peek() in "RO" and self.peek(2)[1:] == "E":
                    raise _Unsupported("function type with a ref-qualifier")
                params.append(str(self.type()))
            params = [p for p in params if p]
            if params == ["void"]:
                params = []
            t = _Type(str(ret), right=f"({', '.join(params)})")
            self.subs.append(t)
            return t
        if c in "rVK":
            words = [w for q, w in (("r", "restrict"), ("V", "volatile"), ("K", "const")) if self.take(q)]
            inner = self.type()
            if inner.ref:
                raise _Unsupported("cv-qualified reference")
            if inner.right:
                if not inner.array or inner.decl:
                    raise _Unsupported("cv-qualified function type or pointer to array")
                # cv of an array qualifies its elements: `float const [10]`.
                t = _Type(inner.base + "".join(" " + w for w in reversed(words)), right=inner.right,
                          array=True)
                self.subs.append(t)
                return t
            # const of a `float* const` typedef'd again is one const (C++ merges them).
            new = [w for w in reversed(words) if w not in inner.cv]
            t = _Type(inner.base + "".join(" " + w for w in new), cv=inner.cv | set(new))
            self.subs.append(t)
            return t
        if c in "PRO":
            self.i += 1
            inner = self.type()
            if inner.right:
                decl = inner.decl
                if decl.startswith("&"):
                    if c == "P":
                        raise _Unsupported("pointer to a reference")
                    # Reference collapsing: only && of && stays &&.
                    new = "&&" if c == "O" and decl.startswith("&&") else "&"
                    decl = new + decl.lstrip("&")
                else:
                    decl = {"P": "*", "R": "&", "O": "&&"}[c] + decl
                t = _Type(inner.base, right=inner.right, array=inner.array, decl=decl)
                self.subs.append(t)
                return t
            if c == "P":
                if inner.ref:
                    raise _Unsupported("pointer to reference")
                t = _Type(inner.base + "*")
            else:
                ref = "&" if c == "R" or inner.ref == "&" else "&&"
                t = _Type(inner.base, ref)
            self.subs.append(t)
            return t
        if c == "S" and self.peek(2) != "St":
            t = self.substitution()
            if self.peek() == "I":
                t = _Type(t.base + self.template_args(False))
                self.subs.append(t)
            return t
        if c == "T":
            t = self.template_param()
            if self.peek() == "I":
                t = _Type(t.base + self.template_args(False))
                self.subs.append(t)
            return t
        if c.isdigit() or c in "NZ" or self.peek(2) == "St":
            n = self.name()
            t = _Type(n.text)
            self.subs.append(t)
            return t
        raise _Unsupported(f"type {c!r} at {self.i}")


    def pack_expansion(self) -> _Type:
        """``Dp <type>``: the pattern spelled once per element of the pack it names, joined
        with ``, `` as c++filt prints an expanded parameter or argument list."""
        self.expect("Dp")
        if self.expanding is not None:
            raise _Unsupported("nested pack expansion")
        start, nsubs = self.i, len(self.subs)
        self.expanding, self.pack_len = 0, None
        try:
            texts = [str(self.type())]
            end, n = self.i, self.pack_len
            if n is None:
                raise _Unsupported("pack expansion without a pack")
            for k in range(1, n):
                self.i, self.expanding = start, k
                del self.subs[len(self.subs) - (len(self.subs) - nsubs):]
                texts.append(str(self.type()))
                if self.i != end:
                    raise _Unsupported("pack expansion of uneven length")
        finally:
            self.expanding = None
        added = len(self.subs) - nsubs
        self.subs[nsubs:] = [_POISON] * (added + 1)   # the pattern's candidates and the expansion
        return _Type(", ".join(texts) if n else "")


@lru_cache(maxsize=4096)
def demangle(name: str) -> str | None:
    """``name`` as GNU c++filt prints it, or None when it is not an Itanium name this covers."""
    if not name.startswith("_Z"):
        return None
    try:
        return _Demangler(name).mangled()
    except (_Unsupported, IndexError, ValueError, RecursionError):
        return None


def _strip_brackets(text: str, open_: str, close: str) -> str:
    """Remove every balanced ``open_ ... close`` group (template arguments, ABI tags)."""
    out, depth = [], 0
    for ch in text:
        if ch == open_:
            depth += 1
        elif ch == close and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def _without_params(full: str) -> str:
    """``void ns::f<int>(int*) const`` -> ``ns::f<int>``: the qualified name of a demangled function."""
    depth, end = 0, len(full)
    for i, ch in enumerate(full):
        if ch in "<[":
            depth += 1
        elif ch in ">]":
            depth -= 1
        elif ch == "(" and depth == 0:
            end = i
            break
    head = full[:end]
    # A return type precedes the name with a space outside brackets.
    depth, start = 0, 0
    for i, ch in enumerate(head):
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
        elif ch == " " and depth == 0 and not head[:i].endswith("operator"):
            start = i + 1
    return head[start:]


def qualified_name(name: str) -> str:
    """``_ZN2ns6kernelIiEEvPT_`` -> ``ns::kernel<int>``; a name that is not mangled is itself."""
    full = demangle(name)
    return _without_params(full) if full else name


def base_name(name: str) -> str:
    """The short name a person types: ``_Z10vector_addPKfS0_Pfi`` -> ``vector_add``; for nested
    and template kernels the last component without template arguments or ABI tags."""
    q = qualified_name(name)
    plain = _strip_brackets(_strip_brackets(q, "<", ">"), "[", "]")
    return plain.rsplit("::", 1)[-1]


def display_name(name: str) -> str:
    """What to show for a kernel: the demangled signature, or the name itself when not mangled."""
    return demangle(name) or name


def kernel_matches(names: Iterable[str], wanted: str) -> list[str]:
    """The kernel names ``wanted`` denotes: the exact name if present, else every name whose
    demangled signature, qualified name (with or without template arguments) or base name
    is ``wanted``."""
    names = list(names)
    if wanted in names:
        return [wanted]
    w = wanted.replace(" ", "")
    found = []
    for n in names:
        full = demangle(n)
        if full is None:
            continue
        q = _without_params(full)
        forms = {full, q, _strip_brackets(q, "[", "]"), _strip_brackets(_strip_brackets(q, "<", ">"), "[", "]"),
                 base_name(n)}
        if w in {f.replace(" ", "") for f in forms}:
            found.append(n)
    return found


def short_param(kernel: str, param: str) -> str:
    """nvcc names parameters ``<mangled kernel>_param_N``: show ``param_N``; others as they are."""
    prefix = f"{kernel}_param_"
    return param[len(kernel) + 1:] if param.startswith(prefix) else param
