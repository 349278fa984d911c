import Foundation
import FormPostServer
import Multipart
import Testing

/// `formpost serve`'s upload page in a real browser: Debian's Chromium, headless, driven by
/// Selenium from Tests/Interop/browser_upload.py, against an ``UploadServer`` on 127.0.0.1.
/// Chromium, chromedriver and Python's selenium are peers as nginx and curl are: when one is
/// missing the test fails, naming it (scripts/test installs them). On Linux only: macOS
/// runners have neither Debian's Chromium nor its chromedriver.
@Suite("Upload page in Chromium", .enabled(if: Platform.isLinux, "needs Debian's Chromium and chromedriver, which macOS runners lack"))
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

    @Test("Chromium uploads odd filenames through the page (XMLHttpRequest, progress, a dropped file) and the plain form; names, sizes and SHA-256 match, on disk too")
    func chromium() async throws {
        let missing = try await offPool { try BrowserTests.missingPeers() }
        try #require(missing.isEmpty, "the browser test needs \(missing.joined(separator: ", ")); scripts/test installs them")
        let work = try SampleDirectory()
        let files = work.path + "/files", storage = work.path + "/uploads", screenshot = work.path + "/upload-page.png"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        let configuration = ReceiverConfiguration(directory: storage, maxFileSize: Self.maxFileSize)
        let finished = try await withPageServer(configuration) { base in
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
        // What the receipts list and nothing else: the refused upload left no file.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: storage)) == Set((xhr.files + plain.files).map(\.storedAs)))
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "the screenshot is not a PNG")
        Attachment.record(Array(png), named: "upload-page.png")
    }
}
