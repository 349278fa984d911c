"""The platforms checked and what the compiler knows about each.

A platform's answer to `canImport(M)` is True, False or None (unknown: both branches of
an `#if` on it must build). Modules not in SYSTEM_MODULES are unknown everywhere, except
the package's own targets and the products it depends on, which build everywhere.
"""
import re

LINUX = "Linux"
APPLE = ("macOS", "iOS", "tvOS", "watchOS", "visionOS")
ALL = (LINUX,) + APPLE
IOS_FAMILY = ("iOS", "tvOS", "watchOS", "visionOS")



def version(text):
    """"15", "15.0" or "10_15" -> (15, 0, 0) / (10, 15, 0): three parts, so they compare."""
    parts = [int(part) for part in re.findall(r"\d+", str(text))][:3]
    return tuple(parts + [0] * (3 - len(parts)))


def version_text(parts):
    """(15, 0, 0) -> "15.0", (10, 15, 4) -> "10.15.4"."""
    shown = list(parts)
    while len(shown) > 2 and shown[-1] == 0:
        shown.pop()
    return ".".join(str(part) for part in shown)


# SwiftPM's oldest deployment targets (tools 6.0), used for a platform a manifest omits.
SWIFTPM_DEFAULT_MINIMUMS = {p: version(v) for p, v in
                            {"macOS": "10.13", "iOS": "12", "tvOS": "12", "watchOS": "4", "visionOS": "1"}.items()}


def _on(*platforms, unknown=()):
    """A canImport row: True on `platforms`, None on `unknown`, False elsewhere."""
    return {p: (True if p in platforms else None if p in unknown else False) for p in ALL}


# Module -> {platform: canImport answer}. Glibc stands for Linux with glibc; Musl (static
# Linux SDK) is modelled as absent everywhere, so a `canImport(Musl)` branch is never
# compiled and an unguarded `import Musl` is a finding. FoundationEssentials ships with
# Swift 6 on Linux and with newer Apple SDKs only: unknown on Apple platforms.
SYSTEM_MODULES = {
    "Swift": _on(*ALL), "_Concurrency": _on(*ALL), "_StringProcessing": _on(*ALL),
    "RegexBuilder": _on(*ALL), "Synchronization": _on(*ALL), "Dispatch": _on(*ALL),
    "Foundation": _on(*ALL), "Testing": _on(*ALL), "XCTest": _on(*ALL),
    "Observation": _on(*ALL), "Distributed": _on(*ALL),
    "FoundationEssentials": _on(LINUX, unknown=APPLE),
    "FoundationInternationalization": _on(LINUX, unknown=APPLE),
    "Glibc": _on(LINUX), "FoundationNetworking": _on(LINUX), "FoundationXML": _on(LINUX),
    "Musl": _on(), "Bionic": _on(), "Android": _on(), "WinSDK": _on(), "ucrt": _on(),
    "WASILibc": _on(), "CRT": _on(),
    "Darwin": _on(*APPLE), "ObjectiveC": _on(*APPLE), "CoreFoundation": _on(*APPLE, unknown=(LINUX,)),
    "Network": _on(*APPLE), "Security": _on(*APPLE), "os": _on(*APPLE), "Combine": _on(*APPLE),
    "CFNetwork": _on(*APPLE), "CryptoKit": _on(*APPLE), "SystemConfiguration": _on(*APPLE, unknown=("watchOS",)),
    "AppKit": _on("macOS"), "UIKit": _on("iOS", "tvOS", "visionOS", unknown=("watchOS",)),
    "WatchKit": _on("watchOS"),
}

# Architectures each platform may be built for; arch() of anything else is False.
ARCHITECTURES = {
    LINUX: {"x86_64", "arm64", "i386", "arm", "powerpc64le", "s390x", "riscv64"},
    "macOS": {"x86_64", "arm64"},
    "iOS": {"arm64", "x86_64"},
    "tvOS": {"arm64", "x86_64"},
    "watchOS": {"arm64_32", "arm64", "armv7k", "x86_64", "i386"},
    "visionOS": {"arm64"},
}

# os() names (xrOS is visionOS's earlier spelling).
OS_NAMES = {LINUX: {"Linux"}, "macOS": {"macOS", "OSX"}, "iOS": {"iOS"}, "tvOS": {"tvOS"},
            "watchOS": {"watchOS"}, "visionOS": {"visionOS", "xrOS"}}

# C preprocessor: macros a platform defines (name -> value) and ones it certainly does
# not; anything else is unknown. TARGET_OS_* come from TargetConditionals.h.
_TARGET = ("TARGET_OS_OSX", "TARGET_OS_IPHONE", "TARGET_OS_IOS", "TARGET_OS_TV",
           "TARGET_OS_WATCH", "TARGET_OS_VISION", "TARGET_OS_MAC")
_LINUX_MACROS = ("__linux__", "__linux", "linux", "__gnu_linux__", "__GLIBC__", "__ELF__")
_APPLE_MACROS = ("__APPLE__", "__MACH__")


def _apple_macros(*target_flags):
    values = {m: 1 for m in _APPLE_MACROS}
    values.update({t: int(t in target_flags or t == "TARGET_OS_MAC") for t in _TARGET})
    return values


C_DEFINED = {
    LINUX: {m: 1 for m in _LINUX_MACROS + ("__unix__", "__unix")},
    "macOS": _apple_macros("TARGET_OS_OSX"),
    "iOS": _apple_macros("TARGET_OS_IPHONE", "TARGET_OS_IOS"),
    "tvOS": _apple_macros("TARGET_OS_IPHONE", "TARGET_OS_TV"),
    "watchOS": _apple_macros("TARGET_OS_IPHONE", "TARGET_OS_WATCH"),
    "visionOS": _apple_macros("TARGET_OS_IPHONE", "TARGET_OS_VISION"),
}
C_UNDEFINED = {
    LINUX: set(_APPLE_MACROS) | set(_TARGET) | {"_WIN32", "__FreeBSD__"},
    **{p: set(_LINUX_MACROS) | {"_WIN32", "__FreeBSD__"} for p in APPLE},
}


def can_import(module, platform, package_modules=frozenset()):
    """True, False or None (unknown) for `canImport(module)` on `platform`."""
    if module in SYSTEM_MODULES:
        return SYSTEM_MODULES[module][platform]
    return True if module in package_modules else None


def platform_list(platforms):
    """`platforms` in the fixed order Linux, macOS, iOS, tvOS, watchOS, visionOS."""
    return [p for p in ALL if p in platforms]
