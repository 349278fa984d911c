"""Compilation conditions (`#if` in Swift, the preprocessor's `#if` in C) as boolean
expressions, and their value on one platform.

A condition is a tree of tuples: ("const", bool), ("atom", kind, argument),
("not", x), ("and", a, b), ("or", a, b). An atom's value on a platform is True, False or
None (unknown). `can_be_true` tries every assignment of the unknown atoms, so
`DEBUG && !DEBUG` is never true while `canImport(FoundationEssentials)` on macOS leaves
both branches of its `#if` compiled.
"""
import itertools
import re

from . import platforms as P

TRUE = ("const", True)
FALSE = ("const", False)

SWIFT_FUNCTIONS = {"os", "arch", "canImport", "targetEnvironment", "compiler", "swift",
                   "hasFeature", "hasAttribute", "_endian", "_pointerBitWidth", "_runtime",
                   "_hasAtomicBitWidth", "_ptrauth"}
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_C_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_C_COMPARISON = re.compile(r"==|!=|>=|<=|<|>")


class ConditionError(ValueError):
    """A condition this parser cannot read."""


def negate(node):
    return ("not", node)


def conjoin(nodes):
    """The conjunction of `nodes` (TRUE for none)."""
    result = TRUE
    for node in nodes:
        result = node if result == TRUE else ("and", result, node)
    return result


class _Parser:
    """Recursive descent over `!`, `&&`, `||` and parentheses; atoms depend on the dialect."""

    def __init__(self, text, dialect):
        self.text, self.dialect, self.at = text, dialect, 0

    def fail(self, why):
        raise ConditionError(f"{why} at column {self.at + 1} of `{self.text.strip()}`")

    def skip_space(self):
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def peek(self, token):
        self.skip_space()
        return self.text.startswith(token, self.at)

    def take(self, token):
        if self.peek(token):
            self.at += len(token)
            return True
        return False

    def parse(self):
        node = self.disjunction()
        self.skip_space()
        if self.at < len(self.text):
            self.fail("unexpected text")
        return node

    def disjunction(self):
        node = self.conjunction()
        while self.take("||"):
            node = ("or", node, self.conjunction())
        return node

    def conjunction(self):
        node = self.unary()
        while self.take("&&"):
            node = ("and", node, self.unary())
        return node

    def unary(self):
        if self.peek("!") and not self.peek("!="):
            self.at += 1
            return negate(self.unary())
        self.skip_space()
        start = self.at
        node = self.primary()
        self.skip_space()
        if self.dialect == "c" and _C_COMPARISON.match(self.text, self.at):
            return self.c_comparison(start)
        return node

    def primary(self):
        if self.take("("):
            node = self.disjunction()
            if not self.take(")"):
                self.fail("missing )")
            return node
        if self.dialect == "c":
            number = _C_NUMBER.match(self.text, self.at)
            if number:
                self.at = number.end()
                return TRUE if int(number.group(1), 0) else FALSE
        name = _IDENTIFIER.match(self.text, self.at)
        if not name:
            self.fail("expected a condition")
        self.at = name.end()
        name = name.group(0)
        if self.dialect == "c" and name == "defined":
            parenthesised = self.take("(")
            self.skip_space()
            macro = _IDENTIFIER.match(self.text, self.at)
            if not macro:
                self.fail("expected a macro name")
            self.at = macro.end()
            if parenthesised and not self.take(")"):
                self.fail("missing )")
            return ("atom", "defined", macro.group(0))
        if self.peek("("):
            arguments = self.balanced()
            if self.dialect == "swift" and name not in SWIFT_FUNCTIONS:
                self.fail(f"unknown condition {name}()")
            if self.dialect == "c":
                return ("atom", "unknown", f"{name}({arguments})")
            return ("atom", name, arguments)
        if self.dialect == "swift":
            return {"true": TRUE, "false": FALSE}.get(name, ("atom", "flag", name))
        return ("atom", "macro", name)

    def balanced(self):
        """The text inside the parentheses at the cursor, whitespace removed."""
        start, depth = self.at, 0
        for index in range(self.at, len(self.text)):
            depth += {"(": 1, ")": -1}.get(self.text[index], 0)
            if depth == 0:
                self.at = index + 1
                return re.sub(r"\s+", "", self.text[start + 1:index])
        self.fail("missing )")

    def c_comparison(self, start):
        """`__GLIBC__ >= 2` and the like, from `start`: an unknown atom."""
        self.at = _C_COMPARISON.match(self.text, self.at).end()
        self.primary()
        return ("atom", "unknown", re.sub(r"\s+", "", self.text[start:self.at]))


def parse_swift(text):
    """The condition of a Swift `#if`/`#elseif`; ConditionError if it cannot be read."""
    return _Parser(text, "swift").parse()


def parse_c(text):
    """The condition of a C `#if`/`#elif`; ConditionError if it cannot be read."""
    return _Parser(text, "c").parse()


def _atoms(node, found):
    if node[0] == "atom":
        found.add(node)
    elif node[0] != "const":
        for child in node[1:]:
            _atoms(child, found)
    return found


def _evaluate(node, values):
    kind = node[0]
    if kind == "const":
        return node[1]
    if kind == "atom":
        return values[node]
    if kind == "not":
        return not _evaluate(node[1], values)
    if kind == "and":
        return _evaluate(node[1], values) and _evaluate(node[2], values)
    return _evaluate(node[1], values) or _evaluate(node[2], values)


def can_be_true(node, value_of):
    """Whether `node` is true for some value of the atoms `value_of` answers None for."""
    values, unknown = {}, []
    for atom in _atoms(node, set()):
        values[atom] = value_of(atom)
        if values[atom] is None:
            unknown.append(atom)
    for assignment in itertools.product((True, False), repeat=len(unknown)):
        values.update(zip(unknown, assignment))
        if _evaluate(node, values):
            return True
    return False


def _version_test(argument, known_minimum):
    """`>=6.0` or `<6.1` given that the version is at least `known_minimum`."""
    match = re.fullmatch(r"(>=|<)(\d+(?:\.\d+)*)", argument)
    if not match:
        raise ConditionError(f"cannot read version test `{argument}`")
    wanted = P.version(match.group(2))
    settled = wanted <= known_minimum
    if match.group(1) == ">=":
        return True if settled else None
    return False if settled else None


class SwiftModel:
    """What `#if` atoms are on one platform, for one package."""

    def __init__(self, platform, package_modules=frozenset(), swift_version=(6, 0, 0)):
        self.platform, self.package_modules, self.swift_version = platform, package_modules, swift_version

    def __call__(self, atom):
        _, kind, argument = atom
        platform = self.platform
        if kind == "os":
            return argument in P.OS_NAMES[platform]
        if kind == "canImport":
            module = argument.split(",")[0].split(".")[0]
            answer = P.can_import(module, platform, self.package_modules)
            return None if answer and "," in argument else answer
        if kind == "arch":
            return None if argument in P.ARCHITECTURES[platform] else False
        if kind in ("compiler", "swift"):
            return _version_test(argument, self.swift_version)
        if kind == "targetEnvironment":
            if argument == "simulator":
                return None if platform in P.IOS_FAMILY else False
            return None if (argument, platform) == ("macCatalyst", "iOS") else False
        if kind == "_endian":
            return argument == "little"
        if kind == "_runtime":
            return (platform in P.APPLE) == (argument == "_ObjC")
        return None  # flags (DEBUG), hasFeature, hasAttribute, _pointerBitWidth, ...


class CModel:
    """What preprocessor atoms are on one platform."""

    def __init__(self, platform):
        self.platform = platform

    def __call__(self, atom):
        _, kind, argument = atom
        if kind == "defined":
            if argument in P.C_DEFINED[self.platform]:
                return True
            return False if argument in P.C_UNDEFINED[self.platform] else None
        if kind == "macro":
            if argument in P.C_DEFINED[self.platform]:
                return bool(P.C_DEFINED[self.platform][argument])
            return False if argument in P.C_UNDEFINED[self.platform] else None
        return None


def reachable(node, models):
    """The platforms (keys of `models`) on which `node` can be true."""
    return frozenset(platform for platform, model in models.items() if can_be_true(node, model))
