import Foundation
import FormPostServer
import Multipart
import Testing

/// `formpost serve`'s upload page in a real browser: Debian's Chromium, headless, driven by
/// Selenium from Tests/Interop/browser_upload.py (against an ``UploadServer`` on 127.0.0.1,
/// and a Vapor app on FormPostVapor, ``ReceiverAdapter/vapor``) and
/// Tests/Interop/browser_resume.py (against `formpost serve` and the Vapor app, behind a proxy
/// that counts the bytes the browser sends, under faults).
/// Chromium, chromedriver and Python's selenium are peers as nginx and curl are: when one is
/// missing the test fails, naming it (scripts/test installs them). On Linux only: macOS
/// runners have neither Debian's Chromium nor its chromedriver.
@Suite("Upload page in Chromium", .serialized, .enabled(if: Platform.isLinux, "needs Debian's Chromium and chromedriver, which macOS runners lack"))
struct BrowserTests {
    /// What browser_upload.py prints.
    struct Run: Decodable {
        /// A file the script sent, as it made it.
        struct Made: Decodable {
            let filename: String
            let size: Int64
            let sha256: String
        }

        /// The files each receipt must list, in order.
        struct Sent: Decodable {
            let xhr: [Made]
            let plain: [Made]
        }

        let browser: String
        let made: Sent
        let xhr: Receipt?
        let plain: Receipt?
    }

    /// What browser_resume.py prints.
    struct Resumed: Decodable {
        let scenario: String
        /// The files the receipt must list, as the script made them.
        let made: [Run.Made]
        let receipt: Receipt?
        /// The bytes the browser sent (for `different`: since the other file was chosen).
        let sent: Int64
    }

    /// The largest file the server takes in this test; the script sends one byte more to see the page show a 413.
    static let maxFileSize: Int64 = 2 << 20

    /// What the test needs and does not find: chromium and chromedriver on PATH, selenium for python3.
    static func missingPeers() throws -> [String] {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        var missing: [String] = []
        for (command, package) in [("chromium", "chromium"), ("chromedriver", "chromium-driver")]
        where !path.contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/\(command)") }) {
            missing.append("\(command) (apt-get install \(package))")
        }
        if try Subprocess.status("python3", ["-c", "import selenium"]) != 0 {
            missing.append("selenium for python3 (pip install selenium)")
        }
        return missing
    }

    /// Who serves the page: an ``UploadServer`` in this process that takes resumable uploads
    /// or not, or an adapter's server (which takes them).
    enum PageServer: Sendable, CustomTestStringConvertible {
        case uploadServer(resumable: Bool)
        case adapter(ReceiverAdapter)

        var testDescription: String {
            switch self {
            case .uploadServer(let resumable): "UploadServer, \(resumable ? "resumable uploads" : "one request each form")"
            case .adapter(let adapter): "\(adapter), resumable uploads"
            }
        }

        /// Runs `body` with the page's URL while the server runs, storing into `storage`.
        func whileServing<T: Sendable>(storage: String, _ body: @Sendable (URL) async throws -> T) async throws -> T {
            switch self {
            case .uploadServer(let resumable):
                let configuration = ReceiverConfiguration(directory: storage, maxFileSize: BrowserTests.maxFileSize)
                return try await withPageServer(configuration, resumable: resumable, body)
            case .adapter(let adapter):
                try FileManager.default.createDirectory(atPath: storage, withIntermediateDirectories: true)
                let server = try await adapter.start(directory: storage, maxFileSize: BrowserTests.maxFileSize)
                defer { server.stop() }
                return try await body(URL(string: server.base + adapter.pagePath)!)
            }
        }
    }

    @Test("Chromium uploads odd filenames through the page (resumable uploads, or one XMLHttpRequest where the server takes none; progress, a dropped file) and the plain form; names, sizes and SHA-256 match, on disk too",
          arguments: [PageServer.uploadServer(resumable: true), .uploadServer(resumable: false), .adapter(.vapor)])
    func chromium(server: PageServer) async throws {
        let missing = try await offPool { try BrowserTests.missingPeers() }
        try #require(missing.isEmpty, "the browser test needs \(missing.joined(separator: ", ")); scripts/test installs them")
        let work = try SampleDirectory()
        let files = work.path + "/files", storage = work.path + "/uploads", screenshot = work.path + "/upload-page.png"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        let finished = try await server.whileServing(storage: storage) { base in
            try await offPool {
                try ChildProcess("python3", [Subprocess.interopScript("browser_upload.py"), base.absoluteString, files, screenshot, String(Self.maxFileSize)]).finish()
            }
        }
        let stderr = String(decoding: finished.stderr, as: UTF8.self)
        #expect(finished.status == 0, "browser_upload.py exited \(finished.status): \(stderr)")
        let run = try JSONDecoder().decode(Run.self, from: finished.stdout)
        let xhr = try #require(run.xhr, "no receipt from the page's upload: \(stderr)")
        let plain = try #require(run.plain, "no receipt from the plain form: \(stderr)")
        for (receipt, made) in [(xhr, run.made.xhr), (plain, run.made.plain)] {
            #expect(receipt.files.map(\.filename) == made.map(\.filename))
            #expect(receipt.files.map(\.size) == made.map(\.size))
            #expect(receipt.files.map(\.sha256) == made.map(\.sha256))
            for file in receipt.files {
                let stored = try Data(contentsOf: URL(fileURLWithPath: storage + "/" + file.storedAs))
                #expect(Int64(stored.count) == file.size && sha256Hex(stored) == file.sha256, "\(file.filename) stored as \(file.storedAs)")
            }
        }
        #expect(xhr.files.count == 6 && plain.files.count == 5)
        // What the receipts list and nothing else: the refused upload left no file (removed
        // once its refusal is answered: looked at for up to 10 s).
        let expected = Set((xhr.files + plain.files).map(\.storedAs))
        var stored = Set(try storedFiles(in: storage))
        for _ in 0..<100 where stored != expected {
            try await Task.sleep(for: .milliseconds(100))
            stored = Set(try storedFiles(in: storage))
        }
        #expect(stored == expected, "stored \(stored.subtracting(expected)) beyond the receipts, missing \(expected.subtracting(stored))")
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "the screenshot is not a PNG")
        Attachment.record(Array(png), named: "upload-page.png")
    }

    /// The files stored in `directory` (not the hidden directories of resumable uploads in progress).
    func storedFiles(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { !$0.hasPrefix(".") }
    }

    /// Every fault against `formpost serve`; against the Vapor app, those that reach the
    /// server (a pause ends the append in flight, a cut one of three, the network gone, the
    /// receiver killed, the tab reloaded) — not `different`, which the page decides alone,
    /// nor the reload through a proxy that holds bodies, which the page's appends decide.
    static let faults = ["pause", "offline", "killed", "reload", "reload-buffered", "three", "different"].map { (ReceiverAdapter.hummingbird, $0) }
        + ["pause", "offline", "killed", "reload", "three"].map { (ReceiverAdapter.vapor, $0) }

    @Test("The page resumes each file under a fault, throttled by DevTools: paused and resumed; offline for 4 s; the receiver killed and started again; the tab reloaded, also through a proxy that holds each body until it is whole; three files, one cut; another file of the same name, size and time after a reload (uploaded anew); the stored file's SHA-256 is the file's, and the bytes sent stay close to its size",
          arguments: faults)
    func resumes(adapter: ReceiverAdapter, scenario: String) async throws {
        let missing = try await offPool { try BrowserTests.missingPeers() }
        try #require(missing.isEmpty, "the browser test needs \(missing.joined(separator: ", ")); scripts/test installs them")
        let work = try SampleDirectory()
        let receiver = try await adapter.command(port: "{port}", directory: "{dir}")
        let finished = try await offPool {
            try ChildProcess("python3", [Subprocess.interopScript("browser_resume.py"), work.path, scenario, adapter.pagePath] + receiver).finish()
        }
        let stderr = String(decoding: finished.stderr, as: UTF8.self)
        #expect(finished.status == 0, "browser_resume.py \(scenario) exited \(finished.status): \(stderr)")
        let run = try JSONDecoder().decode(Resumed.self, from: finished.stdout)
        let receipt = try #require(run.receipt, "no receipt: \(stderr)")
        #expect(receipt.files.map(\.filename) == run.made.map(\.filename))
        #expect(receipt.files.map(\.sha256) == run.made.map(\.sha256))
        let storage = work.path + "/uploads"
        for file in receipt.files {
            let stored = try Data(contentsOf: URL(fileURLWithPath: storage + "/" + file.storedAs))
            #expect(Int64(stored.count) == file.size && sha256Hex(stored) == file.sha256, "\(file.filename) stored as \(file.storedAs)")
        }
        // Nothing else stored: no file completed from another's bytes.
        #expect(Set(try storedFiles(in: storage)) == Set(receipt.files.map(\.storedAs)))
        let total = run.made.reduce(0) { $0 + $1.size }
        #expect(run.sent <= total + total / 10 + 256 << 10, "the browser sent \(run.sent) bytes for \(total) bytes of files")
    }
}
