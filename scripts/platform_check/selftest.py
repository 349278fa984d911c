"""Unit tests of the checker (`check-platforms --self-test`), including what the line-
substring checker before it got wrong."""
import pathlib
import sys
import tempfile
import textwrap
import unittest

from . import availability, checks, dependencies
from . import conditions as C
from . import platforms as P
from .manifest import Manifest, manifest_findings
from .source import SourceFile, blank_swift

APPLE = set(P.APPLE)
EVERYWHERE = set(P.ALL)


class FakeManifest:
    """The parts of a Manifest the checks read, with every minimum declared but visionOS."""
    relative = "Package.swift"
    declared = {"macOS": P.version(15), "iOS": P.version(18), "tvOS": P.version(18), "watchOS": P.version(11)}
    minimums = dict(declared, visionOS=P.version(1))
    modules = frozenset({"Multipart"})
    tools_version = P.version(6)


def findings(text, language="swift", others=()):
    """The findings for `text` (with `others`, more files of the same package, indexed too)."""
    package = checks.Package(FakeManifest())
    models = package.swift_models if language == "swift" else package.c_models
    files = [SourceFile(f"Other{i}.swift", textwrap.dedent(t), "swift", models) for i, t in enumerate(others)]
    main = SourceFile("Main." + ("swift" if language == "swift" else "c"), textwrap.dedent(text), language, models)
    return checks.check(main, package, checks.declared_symbols(files + [main]))


def summary(text, **options):
    """{(line, category): set of platforms} for the findings in `text`."""
    return {(f.line, f.category): set(f.platforms) for f in findings(text, **options)}


def reach(condition, dialect="swift"):
    node = C.parse_swift(condition) if dialect == "swift" else C.parse_c(condition)
    models = {p: (C.SwiftModel(p) if dialect == "swift" else C.CModel(p)) for p in P.ALL}
    return set(C.reachable(node, models))


class ConditionTests(unittest.TestCase):
    def test_precedence(self):
        a, b, c = (("atom", "flag", n) for n in "abc")
        self.assertEqual(C.parse_swift("!a && b || c"), ("or", ("and", ("not", a), b), c))
        self.assertEqual(C.parse_swift("a && (b || c)"), ("and", a, ("or", b, c)))

    def test_modules(self):
        self.assertEqual(reach("canImport(Glibc)"), {"Linux"})
        self.assertEqual(reach("canImport(Darwin)"), APPLE)
        self.assertEqual(reach("!canImport(Darwin)"), {"Linux"})
        self.assertEqual(reach("canImport(Musl)"), set())
        self.assertEqual(reach("canImport(FoundationEssentials)"), EVERYWHERE)
        self.assertEqual(reach("!canImport(FoundationEssentials)"), APPLE)
        self.assertEqual(reach("canImport(Network) && !canImport(Darwin)"), set())
        self.assertEqual(reach("canImport(Darwin, _version: 1.2)"), APPLE)
        self.assertEqual(reach("canImport(Darwin.C)"), APPLE)

    def test_os_arch_and_versions(self):
        self.assertEqual(reach("os(macOS) || canImport(FoundationXML)"), {"macOS", "Linux"})
        self.assertEqual(reach("os(iOS) || os(tvOS)"), {"iOS", "tvOS"})
        self.assertEqual(reach("arch(arm64_32)"), {"watchOS"})
        self.assertEqual(reach("compiler(>=6.0) && swift(>=5.9)"), EVERYWHERE)
        self.assertEqual(reach("compiler(<6.0)"), set())
        self.assertEqual(reach("swift(>=6.1)"), EVERYWHERE)
        self.assertEqual(reach("targetEnvironment(simulator)"), set(P.IOS_FAMILY))
        self.assertEqual(reach("true && !false"), EVERYWHERE)

    def test_unknown_atoms_are_tried_both_ways(self):
        self.assertEqual(reach("DEBUG && !DEBUG"), set())
        self.assertEqual(reach("DEBUG || os(Linux)"), EVERYWHERE)
        self.assertEqual(reach("hasFeature(Embedded) && os(Linux)"), {"Linux"})

    def test_unreadable(self):
        for text in ("os(Linux) &&", "frobnicate(x)", "(os(Linux)", "os(Linux) os(macOS)"):
            with self.assertRaises(C.ConditionError):
                C.parse_swift(text)

    def test_c(self):
        self.assertEqual(reach("defined(__linux__) && defined(RWF_NOWAIT)", "c"), {"Linux"})
        self.assertEqual(reach("defined __APPLE__", "c"), APPLE)
        self.assertEqual(reach("__GLIBC__ >= 2", "c"), EVERYWHERE)
        self.assertEqual(reach("TARGET_OS_IPHONE", "c"), set(P.IOS_FAMILY))
        self.assertEqual(reach("!defined(__linux__) || 0", "c"), APPLE)


class BranchTests(unittest.TestCase):
    def test_else_of_a_glibc_branch_is_not_linux(self):
        # The old checker took any #if naming Glibc as a guard, #else included.
        self.assertEqual(summary("""\
            #if canImport(Glibc)
            import Glibc
            #else
            let n = Glibc.read(0, nil, 0)
            #endif
            """), {(4, "qualified"): APPLE})

    def test_not_can_import_darwin_is_not_a_darwin_guard(self):
        self.assertEqual(summary("""\
            #if !canImport(Darwin)
            let n = Darwin.read(0, nil, 0)
            #endif
            """), {(2, "qualified"): {"Linux"}})

    def test_elseif_chains_and_nesting(self):
        self.assertEqual(summary("""\
            #if canImport(Glibc)
            let a = Glibc.open("x", 0)
            #elseif canImport(Musl)
            let a = Musl.open("x", 0)
            #elseif canImport(Darwin)
            let a = Darwin.open("x", 0)
              #if os(macOS)
              let b = Darwin.x
              #else
              let c = XMLDocument()
              #endif
            #else
            #error("unsupported")
            #endif
            """), {(10, "partial-apple"): set(P.IOS_FAMILY)})

    def test_error_compiled_somewhere(self):
        self.assertEqual(summary("#if os(Linux)\n#else\n#error(\"Linux only\")\n#endif\n"), {(3, "directive"): APPLE})

    def test_unbalanced_and_unreadable(self):
        self.assertIn((1, "directive"), summary("#endif\n"))
        self.assertIn((1, "directive"), summary("#if os(Linux) &&\nlet x = 1\n#endif\n"))


class ImportTests(unittest.TestCase):
    def test_import_forms(self):
        for line in ("import Glibc", "@preconcurrency import Glibc", "public import Glibc",
                     "internal import Glibc", "package import Glibc", "@_exported import Glibc",
                     "@testable import Glibc", "import struct Glibc.stat", "import func Glibc.write",
                     "@preconcurrency public import Glibc", "import FoundationNetworking", "import FoundationXML"):
            self.assertEqual(summary(line + "\n"), {(1, "import"): APPLE}, line)
        self.assertEqual(summary("import Network\nimport Darwin.C\n"), {(1, "import"): {"Linux"}, (2, "import"): {"Linux"}})
        self.assertEqual(summary("import Foundation\nimport Multipart\nimport NIOCore\nimport Musl\n"),
                         {(4, "import"): EVERYWHERE})


class SymbolTests(unittest.TestCase):
    def test_comments_and_strings_are_not_code(self):
        self.assertEqual(summary("""\
            // sendfile(a, b, nil, 1) and "/proc/self"
            /* MSG_NOSIGNAL /* nested */ environ */
            let s = "sendfile MSG_NOSIGNAL Glibc.read"
            let t = #"raw "sendfile" environ"#
            let u = \"\"\"
                umount2 /proc/x
                \"\"\"
            """), {(6, "linux-only"): APPLE})

    def test_proc_in_strings_and_interpolated_code(self):
        self.assertEqual(summary("""\
            let status = try? String(contentsOfFile: "/proc/\\(pid)/status")
            let why = "failed: \\(Glibc.errno)"
            """), {(1, "linux-only"): APPLE, (2, "qualified"): APPLE})

    def test_linux_only_symbols(self):
        cases = {
            "send(s, p, n, Int32(MSG_NOSIGNAL))": "MSG_NOSIGNAL",
            "let d = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)": "SOCK_STREAM.rawValue",
            "let t = info.st_mtim": "st_mtim",
            "var actions = posix_spawn_file_actions_t()": "posix_spawn_file_actions_t()",
            "var attributes = posix_spawnattr_t()": "posix_spawnattr_t()",
            "guard mount(\"tmpfs\", path, \"tmpfs\", 0, nil) == 0 else { return }": "mount(",
            "umount2(path, Int32(MNT_DETACH))": "umount2",
            "posix_spawnp(&pid, p, nil, nil, argv, environ)": "environ",
            "let fd = epoll_create1(0)": "epoll_",
            "guard pipe2(&fds, O_CLOEXEC) == 0 else { return }": "pipe2",
            "_ = fdatasync(fd)": "fdatasync",
            "let n = get_nprocs()": "get_nprocs",
            "let size = malloc_usable_size(p)": "malloc_usable_size",
            "let t = try String(contentsOfFile: \"/sys/fs/cgroup/memory.max\")": "/sys/",
        }
        for line, label in cases.items():
            found = [f for f in findings(line + "\n") if f.category == "linux-only"]
            self.assertEqual(len(found) >= 1 and set(found[0].platforms), APPLE, line)
            self.assertTrue(any(f.message.startswith(label.rstrip("(")) for f in found), (line, found))

    def test_lookalikes_are_not_flagged(self):
        for line in ("let t = info.st_mtimespec_or_not", "func mount(_ router: Router) {}",
                     "router.mount(\"/a\", routes)", "let p = UnsafeMutablePointer<posix_spawn_file_actions_t>.allocate(capacity: 1)",
                     "let environment = ProcessInfo.processInfo.environment", "f(environ: 1)",
                     "final class ChildProcess {}", "let x = ProcessInfo.processInfo"):
            self.assertEqual(summary(line + "\n"), {}, line)

    def test_darwin_only_symbols_on_linux(self):
        self.assertEqual(summary("let t = info.st_mtimespec\nlet s = socket(AF_INET, SOCK_STREAM, 0)\n"
                                 "let e: NWError? = nil\nlet c = URLSessionConfiguration.background(withIdentifier: \"x\")\n"),
                         {(n, "darwin-only"): {"Linux"} for n in (1, 2, 3, 4)})

    def test_macos_only_foundation(self):
        self.assertEqual(summary("let h = FileManager.default.homeDirectoryForCurrentUser\n"),
                         {(1, "partial-apple"): set(P.IOS_FAMILY)})
        self.assertEqual(summary("#if os(macOS) || os(Linux)\nlet d = try XMLDocument(data: data)\n#endif\n"), {})

    def test_processes(self):
        self.assertEqual(summary("let p = Process()\nposix_spawn_file_actions_init(&actions)\n"),
                         {(1, "partial-apple"): set(P.IOS_FAMILY), (2, "partial-apple"): {"tvOS", "watchOS"}})

    def test_qualified_members_of_apple_only_types(self):
        self.assertEqual(summary("case let e as HTTPClient.NWPOSIXError: break\n"), {(1, "darwin-only"): {"Linux"}})

    def test_comment_markers_inside_strings(self):
        self.assertEqual(summary('let url = "http://host/*"; let n = sendfile(a, b, nil, 1) // x\n'),
                         {(1, "linux-only"): APPLE})
        self.assertEqual(summary("#if os(Linux) // only there\nlet n = sendfile(a, b, nil, 1)\n#endif\n"), {})

    def test_declared_only_types_and_members(self):
        declaration = """\
            #if os(macOS) || canImport(FoundationXML)
            public struct XMLDocumentResponseSerializer {}
            extension ResponseSerializer where Self == XMLDocumentResponseSerializer {
                public static var xmlDocument: XMLDocumentResponseSerializer { XMLDocumentResponseSerializer() }
            }
            #endif
            """
        use = "let a = try response.serialized(by: .xmlDocument)\nlet b = XMLDocumentResponseSerializer()\n"
        self.assertEqual(summary(use, others=[declaration]),
                         {(1, "declared-only"): set(P.IOS_FAMILY), (2, "declared-only"): set(P.IOS_FAMILY)})
        self.assertEqual(summary("#if os(macOS) || os(Linux)\n" + use + "#endif\n", others=[declaration]), {})

    def test_nested_and_redeclared_types_are_not_narrow(self):
        linux_only = "#if os(Linux)\nstruct Outer {\n    struct Inner {}\n}\nstruct Twice {}\n#endif\n"
        self.assertEqual(summary("let a = Inner()\nlet b = Twice()\nlet c = Outer()\n",
                                 others=[linux_only, "#if !os(Linux)\nstruct Twice {}\n#endif\n"]),
                         {(3, "declared-only"): APPLE})


class AvailabilityTests(unittest.TestCase):
    def test_undeclared_platform_default(self):
        self.assertEqual(summary("let m = Mutex(0)\nlet d: Duration = .seconds(1)\n"), {(1, "availability"): {"visionOS"}})

    def test_available_attribute_covers_its_declaration_only(self):
        # The old checker let one @available anywhere silence the whole file.
        self.assertEqual(summary("""\
            @available(visionOS 2, *)
            struct Guarded {
                let m = Mutex(0)
            }
            struct Unguarded {
                let m = Mutex(0)
            }
            @available(visionOS 2.0, *) let stored = Mutex(0)
            let after = Mutex(0)
            """), {(6, "availability"): {"visionOS"}, (9, "availability"): {"visionOS"}})

    def test_available_forms(self):
        self.assertEqual(availability.parse_arguments("macOS 15, iOS 18.1, *"),
                         {"macOS": P.version(15), "iOS": P.version("18.1")})
        self.assertEqual(availability.parse_arguments("visionOS, introduced: 2"), {"visionOS": P.version(2)})
        self.assertEqual(availability.parse_arguments("visionOS, unavailable"), {"visionOS": availability.UNAVAILABLE})
        self.assertEqual(set(availability.parse_arguments("*, unavailable")), APPLE)

    def test_if_and_guard_available(self):
        self.assertEqual(summary("""\
            func f() {
                if #available(visionOS 2, *) {
                    _ = Mutex(0)
                } else {
                    _ = Mutex(1)
                }
            }
            func g() {
                guard #available(visionOS 2, *) else { return }
                _ = Mutex(2)
            }
            let h = Mutex(3)
            """), {(5, "availability"): {"visionOS"}, (12, "availability"): {"visionOS"}})

    def test_regex_literals(self):
        self.assertEqual(blank_swift("let r = /ab+c/\n")[2], [8])
        self.assertEqual(blank_swift("let r = #/a/b/#\n")[2], [8])
        self.assertEqual(blank_swift("let x = a / b / c\nlet y = (4)/2/1\n")[2], [])


class CTests(unittest.TestCase):
    def test_linux_branches(self):
        self.assertEqual(summary("""\
            #include <sys/epoll.h>
            #if defined(__linux__) && defined(RWF_NOWAIT)
            #include <sys/sendfile.h>
            long r = preadv2(d, &v, 1, o, RWF_NOWAIT); /* preadv2 */
            #else
            long r = preadv2(d, &v, 1, o, 0); // preadv2
            #endif
            #ifdef __APPLE__
            #include <mach/mach_time.h>
            #endif
            """, language="c"), {(1, "linux-only"): APPLE, (6, "linux-only"): APPLE})


class DependencyTests(unittest.TestCase):
    def source(self, text, path="Sources/FormPost/Body.swift"):
        package = checks.Package(FakeManifest())
        return SourceFile(path, textwrap.dedent(text), "swift", package.swift_models)

    def rules(self, text, **options):
        return {(f.line, f.message.split(" -- ")[0]) for f in dependencies.findings(self.source(text, **options))}

    GATE_FILE = "Sources/FormPost/Transport/NetworkStack.swift"

    def test_file_region_only_inside_the_gate_type(self):
        # Naming NetworkStack (in code or a comment) decides nothing: the FileRegion must be
        # made inside the type only NetworkStack.swift can make a value of.
        for text in ("writer.write(.fileRegion(region))\n",
                     "let s = NetworkStack(loop) // NetworkStack\nwriter.write(.fileRegion(region))\n",
                     "let r = FileRegion(fileHandle: h, readerIndex: 0, endIndex: 1)\n"):
            lines = {line for line, _ in self.rules(text)}
            self.assertEqual(lines, {text.count("\n")}, text)
        self.assertEqual(self.rules("writer.write(.fileRegion(region))\n", path="Tests/T/Body.swift"), set())
        gate = textwrap.dedent("""\
            enum NetworkStack {
                struct PlaintextSocketConnection: Sendable {
                    fileprivate init() {}
                    func sendfileWrite(of h: NIOFileHandle) -> IOData { .fileRegion(FileRegion(fileHandle: h, readerIndex: 0, endIndex: 1)) }
                }
            }
            """)
        self.assertEqual(self.rules(gate, path=self.GATE_FILE), set())
        self.assertEqual({line for line, _ in self.rules(gate + "let r = FileRegion(fileHandle: h, readerIndex: 0, endIndex: 1)\n",
                                                         path=self.GATE_FILE)}, {7})
        # Outside its file, the same type decides nothing.
        self.assertEqual({line for line, _ in self.rules(gate, path="Sources/FormPost/Body.swift")}, {2, 4})

    def test_file_region_gate_is_made_only_in_its_file(self):
        internal = "struct PlaintextSocketConnection {\n    init() {}\n    func w() -> IOData { .fileRegion(r) }\n}\n"
        self.assertEqual({line for line, _ in self.rules(internal, path=self.GATE_FILE)}, {2})
        memberwise = "struct PlaintextSocketConnection {\n    let a: Int\n    func w() -> IOData { .fileRegion(r) }\n}\n"
        self.assertEqual({line for line, _ in self.rules(memberwise, path=self.GATE_FILE)}, {1})
        private = "struct PlaintextSocketConnection { private init() {}; func w() -> IOData { .fileRegion(r) } }\n"
        self.assertEqual(self.rules(private, path=self.GATE_FILE), set())
        calls = "struct PlaintextSocketConnection {\n    fileprivate init() { self.init(a: 1) }\n    func w() -> IOData { .fileRegion(r) }\n}\n"
        self.assertEqual(self.rules(calls, path=self.GATE_FILE), set())

    def test_watchos_default_transport(self):
        self.assertEqual(self.rules("let t = AsyncHTTPClientTransport.shared\n"), {(1, "default transport on watchOS")})
        self.assertEqual(self.rules("#if !os(watchOS)\nlet t = AsyncHTTPClientTransport.shared\n#endif\n"), set())
        self.assertEqual(self.rules("let c = FormPostClient()\n"), {(1, "client without a transport on watchOS")})
        self.assertEqual(self.rules("let c = FormPostClient(transport: t)\n"), set())
        # FormPost declares the defaults; a module that never builds for watchOS may use them.
        self.assertEqual(self.rules("let c = FormPostClient()\n", path="Sources/formpost/Demo.swift"), set())
        found = dependencies.findings(self.source("let t = AsyncHTTPClientTransport.shared\n"))
        self.assertEqual([f.platforms for f in found], [("watchOS",)])

    def test_client_and_group_choice(self):
        self.assertEqual(self.rules("let c = HTTPClient(eventLoopGroup: g, configuration: c)\n"), {(1, "HTTPClient made")})
        self.assertEqual(self.rules("let c = HTTPClient(configuration: c)\n"), {(1, "HTTPClient made")})
        self.assertEqual(self.rules("let c = HTTPClient.shared\n"), {(1, "HTTPClient made")})
        self.assertEqual(self.rules("let c = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: c)\n"), set())
        self.assertEqual(self.rules("let g = HTTPClient.defaultEventLoopGroup\n"), {(1, "default event loop group")})
        self.assertEqual(self.rules("let g = HTTPClient.defaultEventLoopGroup\n", path="Sources/FormPost/NetworkStack.swift"), set())

    def test_input_stream_subclass_only_off_darwin(self):
        self.assertEqual(self.rules("final class S: InputStream {}\n"), {(1, "InputStream subclass")})
        self.assertEqual(self.rules("#if !canImport(Darwin)\nfinal class S: InputStream {}\n#endif\n"), set())
        self.assertEqual(self.rules("let s = task.originalRequest?.httpBodyStream\n"), {(1, "body stream read back")})


class ManifestTests(unittest.TestCase):
    def test_minimums_and_defaults(self):
        with tempfile.TemporaryDirectory() as directory:
            root = pathlib.Path(directory)
            (root / "Package.swift").write_text(
                '// swift-tools-version:6.0\nlet package = Package(\n    name: "A",\n'
                '    platforms: [.macOS(.v10_15), .iOS("18.0"), .tvOS(.v18), .watchOS(.v11)], // not .visionOS(.v9)\n)\n')
            (root / "Sub").mkdir()
            (root / "Sub" / "Package.swift").write_text(
                '// swift-tools-version:6.0\nlet package = Package(name: "B", platforms: [.macOS(.v15), .iOS(.v18), '
                '.tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],\n  dependencies: [.package(path: "..")])\n')
            top, sub = Manifest(root, pathlib.Path("Package.swift")), Manifest(root, pathlib.Path("Sub/Package.swift"))
            self.assertEqual(top.minimums["macOS"], P.version("10.15"))
            self.assertEqual(top.minimums["iOS"], P.version(18))
            self.assertEqual(top.minimums["visionOS"], P.version(1))
            by_directory = {top.directory: top, sub.directory: sub}
            messages = [f.message for f in manifest_findings(top, by_directory)]
            self.assertEqual(messages, ["Package.swift declares no minimum for visionOS (SwiftPM assumes 1.0)"])
            self.assertEqual(manifest_findings(sub, by_directory), [])
            sub.minimums["iOS"] = P.version(17)
            self.assertEqual([f.platforms for f in manifest_findings(sub, by_directory)], [("iOS",)])
            (root / "Package.swift").write_text('// swift-tools-version:6.0\nlet package = Package(name: "C",\n'
                                                '    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(two)])\n')
            unread = manifest_findings(Manifest(root, pathlib.Path("Package.swift")), {})
            self.assertEqual([(f.line, f.platforms) for f in unread], [(3, ("visionOS",))])
            self.assertIn("cannot read", unread[0].message)


def run():
    """Runs the tests; returns the exit status."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    return 0 if result.wasSuccessful() else 1
