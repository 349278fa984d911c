#if os(Linux)
import Crypto
import Foundation
import FormPost
import Multipart
import Testing

/// A Hummingbird app that mounts FormPostServer (the package's `upload-receiver-app`),
/// `formpost serve` and an upload by `formpost` load only FoundationEssentials: not
/// Foundation with ICU, nor FoundationNetworking with libcurl, nor FoundationXML with
/// libxml2. Read from the running process's /proc/PID/maps. Linux only.
@Suite("Footprint", .serialized)
struct FootprintTests {
    /// Libraries a receiver must not map: full Foundation and ICU's data, URLSession's
    /// libcurl (and what it drags in), the XML parser.
    static let forbidden = [
        "libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so",
        "libFoundationNetworking.so", "libFoundationXML.so", "libcurl", "libxml2", "libicu",
    ]

    /// The built `upload-receiver-app`, beside `formpost`.
    static let receiverApp = URL(fileURLWithPath: formpostBinary).deletingLastPathComponent().appendingPathComponent("upload-receiver-app").path

    @Test("a receiver app maps no Foundation, ICU, libcurl or libxml2, and stores what it is sent")
    func receiverAppLoadsOnlyFoundationEssentials() async throws {
        try await Self.checkReceiver(Self.receiverApp) { port, directory in [String(port), directory] }
    }

    @Test("formpost serve maps no Foundation, ICU, libcurl or libxml2, and stores what it is sent")
    func formpostServeLoadsOnlyFoundationEssentials() async throws {
        try await Self.checkReceiver(formpostBinary) { port, directory in ["serve", "--port", String(port), "--dir", directory] }
    }

    @Test("formpost maps none of them while it uploads; with --transport urlsession it hands over to formpost-urlsession, which maps libcurl")
    func formpostUploadLoadsOnlyFoundationEssentials() async throws {
        let directory = NSTemporaryDirectory() + "formpost-footprint-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/upload.bin"
        try Data(repeating: 7, count: 600_000).write(to: URL(fileURLWithPath: file))
        // A peer that takes the connection and the body and never answers: the upload stays
        // running, with its transport loaded, for as long as the maps take to read.
        let port = try freePort()
        let silent = try ChildProcess("python3", ["-c", Self.silentServer, String(port)], stdout: .discard, stderr: .discard)
        defer { silent.stop() }
        try await RawSocket.waitForListener(port: port)

        for transport in ["ahc", "urlsession"] {
            let upload = try ChildProcess(formpostBinary, ["-s", "--max-time", "30", "--transport", transport, "-F", "file=@\(file)", "http://127.0.0.1:\(port)/upload"],
                                          stdout: .discard, stderr: .discard)
            defer { upload.stop() }
            try await Task.sleep(for: .seconds(2))
            let mapped = try Self.mappedLibraries(pid: upload.pid)
            #expect(mapped.contains { $0.hasPrefix("libFoundationEssentials.so") }, "FoundationEssentials is not mapped, so the check reads the wrong maps: \(mapped)")
            if transport == "ahc" {
                for library in mapped { #expect(!Self.forbidden.contains { library.hasPrefix($0) }, "formpost maps \(library)") }
            } else {
                #expect(mapped.contains { $0.hasPrefix("libcurl") }, "formpost-urlsession should map libcurl: \(mapped)")
            }
            try await offPool { upload.stop() }
        }
        try await offPool { silent.stop() }
    }

    /// A TCP server on 127.0.0.1:argv[1] that reads what each connection sends and never answers.
    static let silentServer = """
    import socket, sys, threading
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(sys.argv[1])))
    server.listen(16)
    def drain(connection):
        while connection.recv(65536):
            pass
    while True:
        connection, _ = server.accept()
        threading.Thread(target=drain, args=(connection,), daemon=True).start()
    """

    /// Starts `program` as a receiver (arguments from its port and storage directory), checks
    /// its maps, sends it a form and checks the receipt and its maps again.
    static func checkReceiver(_ program: String, arguments: (Int, String) -> [String]) async throws {
        let directory = NSTemporaryDirectory() + "formpost-footprint-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = try freePort()
        let app = try ChildProcess(program, arguments(port, directory), stdout: .discard, stderr: .discard)
        defer { app.stop() }
        try await RawSocket.waitForListener(port: port)

        let before = try mappedLibraries(pid: app.pid)
        #expect(before.contains { $0.hasPrefix("libFoundationEssentials.so") }, "FoundationEssentials is not mapped, so the check reads the wrong maps: \(before)")

        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var form = MultipartForm()
        form.append(name: "note", value: "footprint")
        form.append(name: "file", bytes: content, filename: "content.bin", mimeType: "application/octet-stream")
        let response = try await FormPostClient().upload(form, to: URL(string: "http://127.0.0.1:\(port)/upload")!)
        #expect(response.status == 200, "\(response.text)")
        let receipt = try response.decode(Receipt.self)
        #expect(receipt.files.first?.sha256 == sha256Hex(content))

        let after = try mappedLibraries(pid: app.pid)
        for library in before.union(after) {
            #expect(!forbidden.contains { library.hasPrefix($0) }, "\(program) maps \(library)")
        }
        try await offPool { app.stop() }
    }

    /// The file names of the shared objects mapped into process `pid`.
    static func mappedLibraries(pid: Int32) throws -> Set<String> {
        // Read to the end: /proc files have no size, and a read sized by `stat` gets a part.
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { throw Subprocess.Failure(description: "no process \(pid)") }
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        return Set(maps.split(separator: "\n").compactMap { line -> String? in
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last, path.hasPrefix("/"), path.contains(".so") else { return nil }
            return String(path.split(separator: "/").last!)
        })
    }
}
#endif
