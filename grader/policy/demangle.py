"""C++ symbol names: demangled in bulk with c++filt (names), and read straight from their
mangling where the demangled text is ambiguous (outer_name: the Itanium C++ ABI's outermost
name; is_template_instance on the demangled text). The definition rule (object_rules.py) and
the device rule's messages use them."""

from __future__ import annotations

import re

from grader.policy import tools


def names(symbols: list) -> dict:
    """Mangled name -> demangled, for the mangled names among `symbols`, with as few c++filt
    calls as the command line allows."""
    mangled = sorted({n for n in symbols if n.startswith("_Z") and "\n" not in n})
    out = {}
    i = 0
    while i < len(mangled):
        batch, size = [], 0
        while i < len(mangled) and (not batch or size + len(mangled[i]) < 100_000):
            batch.append(mangled[i])
            size += len(mangled[i]) + 1
            i += 1
        lines = tools.lines(tools.run_tool([tools.tool("c++filt"), "--", *batch], "c++filt"))
        if len(lines) == len(batch):
            out.update(zip(batch, lines))
    return out


# ---------------------------------------------------------------------------------------------
# The outermost name of a mangled C++ symbol, read from the mangling (Itanium C++ ABI), which
# is exact where the demangled text is ambiguous (return types, template arguments,
# operators).
# ---------------------------------------------------------------------------------------------

_STD_ABBREVIATIONS = ("Sa", "Sb", "Ss", "Si", "So", "Sd")   # std::allocator, string, streams
GLOBAL_OPERATORS = {"nw": "operator new", "na": "operator new[]", "dl": "operator delete",
                    "da": "operator delete[]"}


class _Unreadable(Exception):
    pass


class _Mangled:
    """Reads just enough of a mangled name (after its _Z) to find its outermost name."""

    def __init__(self, text: str):
        self.s, self.i = text, 0

    def peek(self, n: int = 1) -> str:
        return self.s[self.i:self.i + n]

    def take(self, prefix: str) -> bool:
        if self.s.startswith(prefix, self.i):
            self.i += len(prefix)
            return True
        return False

    def number(self) -> int:
        self.take("n")                                     # negative
        start = self.i
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        if start == self.i:
            raise _Unreadable
        return int(self.s[start:self.i])

    def call_offset(self) -> None:
        if self.take("h"):
            self.number()
        elif self.take("v"):
            self.number()
            if not self.take("_"):
                raise _Unreadable
            self.number()
        else:
            raise _Unreadable
        if not self.take("_"):
            raise _Unreadable

    def encoding(self) -> str:
        for special in ("TV", "TT", "TI", "TS", "TC"):    # vtable, VTT, typeinfo (name), ctor vt
            if self.take(special):
                return self.type_outer()
        if self.take("Th") or self.take("Tv"):             # thunks: back up over h/v
            self.i -= 1
            self.call_offset()
            return self.encoding()
        if self.take("Tc"):                                # covariant thunk
            self.call_offset()
            self.call_offset()
            return self.encoding()
        for special in ("GTt", "GTn", "GA"):               # transaction clones, hidden alias
            if self.take(special):
                return self.encoding()
        for special in ("TH", "TW", "GV", "GR"):           # TLS init/wrapper, guard, temporary
            if self.take(special):
                return self.name()
        if self.peek() in ("T", "G"):
            raise _Unreadable
        return self.name()

    def name(self) -> str:
        if self.take("N"):                                 # nested: N [CV] [ref] prefix... E
            while self.peek() and self.peek() in "rVK":
                self.i += 1
            if self.peek() and self.peek() in "RO":
                self.i += 1
            return self.prefix()
        if self.take("Z"):                                 # local entity: its function's scope
            return self.encoding()
        return self.prefix()

    def prefix(self) -> str:
        """The first component of a (possibly nested) name."""
        if self.take("St") or self.peek(2) in _STD_ABBREVIATIONS:
            return "std"
        if self.take("Z"):
            return self.encoding()
        if self.peek() and self.peek() in "TD" and self.peek(2) != "DC":
            return ""                                      # template parameter, decltype
        self.take("L")                                     # internal linkage marker
        if self.peek().isdigit():
            n = self.number()
            name = self.s[self.i:self.i + n]
            if len(name) != n:
                raise _Unreadable
            return name
        if self.peek(2) in ("Ut", "Ul", "DC"):             # unnamed type, lambda, binding
            return ""
        code = self.peek(2)
        if code in GLOBAL_OPERATORS:
            return GLOBAL_OPERATORS[code]
        if len(code) == 2 and code.isalpha() and code.islower():
            return "operator"                              # any other global operator
        raise _Unreadable

    def type_outer(self) -> str:
        """The outermost name of a type (vtable, typeinfo of a class); built-in types and
        types made from them (int*, function types) have their RTTI in the C++ runtime."""
        while self.peek() and self.peek() in "PROKVr":     # pointer, reference, qualifiers
            self.i += 1
        if self.take("St") or self.peek(2) in _STD_ABBREVIATIONS:
            return "std"
        if self.peek() and (self.peek() in "NZL" or self.peek().isdigit()):
            return self.name()
        return "<built-in type>"


def outer_name(symbol: str) -> str | None:
    """The outermost name of a mangled C++ symbol: 'std' for std::vector<int>::push_back,
    'labkit' for labkit::run(), 'round_up' for round_up(int, int), 'operator new' for the
    global operator new, '' where there is none of its own (a lambda, a template parameter),
    '<built-in type>' for the RTTI of int*. None when it is not a mangled name we can read."""
    if not symbol.startswith("_Z"):
        return None
    base = re.split(r"[.@]", symbol[2:], maxsplit=1)[0]   # drop .cold, .constprop.0, @VERSION
    try:
        return _Mangled(base).encoding()
    except (_Unreadable, IndexError, ValueError, RecursionError):
        return None


_OPERATOR_TOKENS = re.compile(r"operator(?:<<=|>>=|<=>|<<|>>|<=|>=|->\*|->|<|>|\(\))")
_DEMANGLED_PREFIXES = re.compile(
    r"^(?:(?:vtable|VTT|typeinfo|typeinfo name|construction vtable|guard variable|"
    r"TLS init function|TLS wrapper function|transaction clone|reference temporary #\d+|"
    r"non-virtual thunk|virtual thunk|covariant return thunk) (?:for|to) )+")


def is_template_instance(demangled: str) -> bool:
    """True when a demangled name is (a member of) a template instantiation: a template
    argument list in its qualified name, not only in its parameter list
    ('std::vector<int>::push_back(int const&)', 'std::ctype<char>::do_widen(char) const',
    'int std::min<int>(...)'; not 'std::chrono::_V2::steady_clock::now()' nor
    'std::foo(std::vector<int>)'). Non-template functions have no return type in their
    mangling, so the name starts the text."""
    text = _DEMANGLED_PREFIXES.sub("", demangled)
    text = _OPERATOR_TOKENS.sub("operator@", text)
    text = re.sub(r"\boperator [^(]*", "operator@", text)    # conversion operators
    depth = 0
    for c in text:
        if c == "<":
            return True
        if c == "(" and depth == 0:
            return False                                     # the parameter list starts
        depth += c == "["
        depth -= c == "]"                                    # [abi:cxx11] tags
    return False
