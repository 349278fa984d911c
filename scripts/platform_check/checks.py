"""The findings for one source file, given the package it belongs to."""
import re

from . import availability
from . import dependencies
from . import conditions as C
from . import platforms as P
from . import tables as T
from .findings import Finding

_MODIFIERS = r"(?:@\w+(?:\([^()]*\))?|public|package|internal|fileprivate|private|open|final|indirect|nonisolated)"
_IMPORT = re.compile(r"^\s*(?:" + _MODIFIERS + r"\s+)*import\s+"
                     r"(?:(?:typealias|struct|class|enum|protocol|let|var|func|actor)\s+)?([A-Za-z_]\w*)")
_TYPE_DECLARATION = re.compile(r"^\s*(?:" + _MODIFIERS + r"\s+)*(?:struct|class|enum|protocol|actor|typealias)\s+"
                               r"(?!(?:var|let|func|subscript|init)\b)([A-Za-z_]\w*)")
_STATIC_DECLARATION = re.compile(r"^\s*(?:" + _MODIFIERS + r"\s+)*(?:static|class)\s+(?:\w+\s+)*?(?:var|let|func)\s+"
                                 r"([A-Za-z_]\w*)(.*)$")
# Modules that some platform lacks, looked for as `Module.name` ("os" is too common a word).
_QUALIFIABLE = sorted(m for m, row in P.SYSTEM_MODULES.items() if False in row.values() and m != "os")
_QUALIFIED = re.compile(r"(?<![\w.$])(" + "|".join(_QUALIFIABLE) + r")\s*\.\s*([A-Za-z_]\w*)")
_DECLARING = re.compile(r"\b(?:func|var|let|case|typealias|struct|class|enum)\s*$")


class Package:
    """A manifest and the per-platform models its sources are evaluated with."""

    def __init__(self, manifest):
        self.manifest = manifest
        self.swift_models = {p: C.SwiftModel(p, manifest.modules, manifest.tools_version) for p in P.ALL}
        self.c_models = {p: C.CModel(p) for p in P.ALL}


def _is_label_or_declaration(line, start, end):
    """Whether the name at line[start:end] is being declared, or is an argument label."""
    before, after = line[:start].rstrip(), line[end:].lstrip()
    if _DECLARING.search(before):
        return True
    return after.startswith(":") and not after.startswith("::") and before.endswith(("(", ","))


def _finding(source, number, platforms, category, message):
    return Finding(source.path, number, tuple(P.platform_list(platforms)), category, message,
                   source.lines[number - 1].strip())


def declared_symbols(sources):
    """[(name, use pattern, platforms, (path, line))] for the project's own top-level types,
    and the static members yielding them (used as `.name`), compiled on fewer than all
    platforms. A nested type is reached through its parent, checked in its stead; a name
    also declared elsewhere (at any depth) counts as declared wherever any of them is."""
    found, tracked = {}, set()

    def note(key, platforms, where):
        known = found.get(key)
        found[key] = (platforms | known[0], known[1]) if known else (platforms, where)

    swift = [s for s in sources if s.language == "swift"]
    for source in swift:
        depth = 0
        for number, line in enumerate(source.code_lines, 1):
            match = _TYPE_DECLARATION.match(line)
            if match:
                key = ("type", match.group(1))
                note(key, source.reach[number], (source.path, number))
                if depth == 0:
                    tracked.add(key)
            depth += line.count("{") - line.count("}")
    everywhere = frozenset(P.ALL)
    narrow = sorted(name for (kind, name), (platforms, _) in found.items()
                    if (kind, name) in tracked and platforms != everywhere)
    if narrow:
        yields_narrow = re.compile(r"\b(?:" + "|".join(narrow) + r")\b")
        for source in swift:
            for number, line in enumerate(source.code_lines, 1):
                match = _STATIC_DECLARATION.match(line)
                if match and yields_narrow.search(match.group(2)):
                    key = ("member", match.group(1))
                    note(key, source.reach[number], (source.path, number))
                    tracked.add(key)
    return [(name, re.compile((r"\b" if kind == "type" else r"\.\s*") + name + r"\b"), platforms, where)
            for (kind, name), (platforms, where) in sorted(found.items())
            if (kind, name) in tracked and platforms != everywhere]


def _any_of(symbols):
    return re.compile("|".join(f"(?:{s.pattern.pattern})" for s in symbols))


# One search per line and view first: most lines name none of the symbols.
_ANY_IN_CODE = _any_of([s for s in T.ABSENT_SYMBOLS if s.view == "code"])
_ANY_IN_STRINGS = _any_of([s for s in T.ABSENT_SYMBOLS if s.view == "strings"])


def _symbol_findings(source, number, reach):
    if not (_ANY_IN_CODE.search(source.code_lines[number - 1]) or _ANY_IN_STRINGS.search(source.string_lines[number - 1])):
        return []
    findings = []
    for symbol in T.ABSENT_SYMBOLS:
        bad = reach & symbol.absent_on
        if not bad or source.language not in symbol.languages:
            continue
        line = (source.string_lines if symbol.view == "strings" else source.code_lines)[number - 1]
        match = next((m for m in symbol.pattern.finditer(line)
                      if not _is_label_or_declaration(line, m.start(), m.end())), None)
        if match:
            findings.append(_finding(source, number, bad, T.category(symbol),
                                     f"{match.group(0).lstrip('.->').strip()} -- {symbol.reason}"))
    return findings


def _module_findings(source, number, reach, package_modules):
    findings = []
    line = source.code_lines[number - 1]
    imported = set()
    for statement in line.split(";"):
        match = _IMPORT.match(statement)
        if match:
            module = match.group(1)
            imported.add(module)
            bad = {p for p in reach if P.can_import(module, p, package_modules) is False}
            if bad:
                findings.append(_finding(source, number, bad, "import", f"import {module} -- no module {module} there"))
    for match in _QUALIFIED.finditer(line):
        module = match.group(1)
        bad = {p for p in reach if P.SYSTEM_MODULES[module][p] is False}
        if bad and module not in imported:
            findings.append(_finding(source, number, bad, "qualified",
                                     f"{module}.{match.group(2)} -- no module {module} there"))
            break
    return findings


def _declared_only_findings(source, number, reach, narrow):
    findings = []
    line = source.code_lines[number - 1]
    for name, pattern, declared, (path, line_number) in narrow:
        bad = reach - declared
        if bad and pattern.search(line):
            where = ", ".join(P.platform_list(declared)) or "no platform"
            findings.append(_finding(source, number, bad, "declared-only",
                                     f"{name} -- declared only for {where} ({path}:{line_number})"))
    return findings


def _availability_findings(source, number, reach, package, spans):
    findings = []
    manifest = package.manifest
    uses = [(api, m.start()) for api in T.NEWER_APIS for m in api.pattern.finditer(source.code_lines[number - 1])]
    uses += [(T.REGEX_LITERAL, offset - source.line_starts[number - 1])
             for offset in source.regexes if source.line_of(offset) == number]
    reported = set()
    for api, column in uses:
        offset = source.line_starts[number - 1] + column
        bad = [p for p in P.platform_list(reach & set(P.APPLE))
               if manifest.minimums[p] < api.first[p]
               and not availability.excused(spans, offset, p, api.first[p])]
        if bad and api.label not in reported:
            reported.add(api.label)
            needs = ", ".join(f"{p} {P.version_text(api.first[p])}" for p in bad)
            allows = ", ".join(f"{p} {P.version_text(manifest.minimums[p])}" + ("" if p in manifest.declared else " (undeclared)")
                               for p in bad)
            findings.append(_finding(source, number, bad, "availability",
                                     f"{api.label} -- needs {needs}; {manifest.relative} allows {allows}"))
    return findings


def _directive_findings(source):
    findings = [_finding(source, number, source.reach[number] or frozenset(P.ALL), "directive", message)
                for number, message in source.problems]
    findings += [_finding(source, number, source.reach[number], "directive", "#error is compiled here")
                 for number in source.errors if source.reach[number]]
    for number, (kind, rest) in source.directives.items():
        if kind not in ("include", "import"):
            continue
        for headers, absent_on, category in ((T.LINUX_ONLY_HEADERS, P.APPLE, "linux-only"),
                                             (T.DARWIN_ONLY_HEADERS, (P.LINUX,), "darwin-only")):
            header = headers.search(rest)
            bad = source.reach[number] & set(absent_on)
            if header and bad:
                findings.append(_finding(source, number, bad, category, f"{header.group(0)} -- a {category} header"))
    return findings


def check(source, package, narrow):
    """Every finding in `source` (a SourceFile of `package`); `narrow` from declared_symbols."""
    findings = _directive_findings(source) + dependencies.findings(source)
    spans = availability.excusing_spans(source.code) if source.language == "swift" else []
    for number in range(1, len(source.lines) + 1):
        reach = source.reach[number]
        if not reach or number in source.directives:
            continue
        findings += _symbol_findings(source, number, reach)
        if source.language == "swift":
            findings += _module_findings(source, number, reach, package.manifest.modules)
            findings += _declared_only_findings(source, number, reach, narrow)
            findings += _availability_findings(source, number, reach, package, spans)
    return findings
