"""What a Package.swift declares: deployment minimums, its modules, local dependencies.

`platforms:` entries are read in both spellings, `.macOS(.v15)` / `.macOS(.v10_15)` and
`.macOS("15.0")`. A platform the manifest leaves out gets SwiftPM's oldest default, and
is a finding of its own.
"""
import re

from . import platforms as P
from .findings import Finding
from .source import blank_swift

_ENTRY = re.compile(r"\.(macOS|iOS|tvOS|watchOS|visionOS)\s*\(\s*(?:\.v(\d+)(?:_(\d+))?(?:_(\d+))?|\"(\d+(?:\.\d+)*)\")\s*\)")
_ANY_ENTRY = re.compile(r"\.(macOS|iOS|tvOS|watchOS|visionOS)\s*\(")
_MODULE = re.compile(r"\.(?:target|executableTarget|testTarget|systemLibrary|binaryTarget|macro|plugin|product)"
                     r"\s*\(\s*name\s*:\s*\"([^\"]+)\"")
_PATH_DEPENDENCY = re.compile(r"\.package\s*\((?:\s*name\s*:\s*\"[^\"]*\"\s*,)?\s*path\s*:\s*\"([^\"]+)\"")


class Manifest:
    """One Package.swift: `minimums` holds every Apple platform (declared or default)."""

    def __init__(self, root, relative):
        """Reads root/relative (pathlib paths); `relative` is how findings name it."""
        self.relative = str(relative)
        self.directory = (root / relative).parent.resolve()
        text = (root / relative).read_text()
        self.lines = text.split("\n")
        _, readable, _ = blank_swift(text)
        tools = re.search(r"swift-tools-version\s*:\s*(\d+(?:\.\d+)*)", self.lines[0])
        self.tools_version = P.version(tools.group(1) if tools else "5.0")
        self.declared, self.unreadable = {}, []
        self.platforms_line = self._line(readable, readable.find("Package("))
        start = re.search(r"\bplatforms\s*:\s*\[", readable)
        if start:
            self.platforms_line = self._line(readable, start.start())
            end = readable.find("]", start.end())
            for match in _ENTRY.finditer(readable, start.end(), end):
                name, major, minor, patch, quoted = match.groups()
                self.declared[name] = P.version(quoted or ".".join(p for p in (major, minor, patch) if p))
            self.unreadable = [name for name in _ANY_ENTRY.findall(readable, start.end(), end)
                               if name not in self.declared]
        self.minimums = {p: self.declared.get(p, P.SWIFTPM_DEFAULT_MINIMUMS[p]) for p in P.APPLE}
        self.modules = frozenset(_MODULE.findall(readable))
        self.path_dependencies = [((self.directory / m.group(1)).resolve(), self._line(readable, m.start()))
                                  for m in _PATH_DEPENDENCY.finditer(readable)]

    def _line(self, text, offset):
        return text.count("\n", 0, max(offset, 0)) + 1

    def describe(self):
        """"macOS 15.0, iOS 18.0, ..." with undeclared platforms marked."""
        return ", ".join(f"{p} {P.version_text(v)}" + ("" if p in self.declared else " (default)")
                         for p, v in self.minimums.items())


def manifest_findings(manifest, manifests_by_directory):
    """Undeclared minimums, and minimums below those of a local path dependency."""
    findings = []
    code = manifest.lines[manifest.platforms_line - 1].strip()
    for platform in P.APPLE:
        default = P.version_text(P.SWIFTPM_DEFAULT_MINIMUMS[platform])
        if platform in manifest.unreadable:
            message = f"cannot read the {platform} minimum in {manifest.relative} (SwiftPM's {default} is assumed)"
        elif platform not in manifest.declared:
            message = f"{manifest.relative} declares no minimum for {platform} (SwiftPM assumes {default})"
        else:
            continue
        findings.append(Finding(manifest.relative, manifest.platforms_line, (platform,), "manifest", message, code))
    for directory, line in manifest.path_dependencies:
        dependency = manifests_by_directory.get(directory)
        if dependency is None:
            continue
        for platform in P.APPLE:
            mine, theirs = manifest.minimums[platform], dependency.minimums[platform]
            if mine < theirs:
                findings.append(Finding(
                    manifest.relative, line, (platform,), "manifest",
                    f"{platform} minimum {P.version_text(mine)} is below the {P.version_text(theirs)} that "
                    f"{dependency.relative} declares: SwiftPM rejects the dependency when building for {platform}",
                    manifest.lines[line - 1].strip()))
    return findings
