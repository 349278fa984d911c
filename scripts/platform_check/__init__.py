"""The pieces of scripts/check-platforms: a by-construction check that every Swift and C
line the compiler would see on a platform names only what that platform has.

- platforms: what each platform is (its os(), which modules canImport, its C macros);
- conditions: `#if` conditions (Swift and C) parsed and evaluated per platform;
- source: comments and string contents blanked, and which platforms compile each line;
- tables: the Linux-only, Darwin-only and newer-than-some-platform APIs looked for;
- availability: the spans that `@available` and `#available` excuse;
- manifest: the minimums Package.swift declares;
- checks: the findings for one file or manifest;
- selftest: unit tests, run by `check-platforms --self-test`.
"""
