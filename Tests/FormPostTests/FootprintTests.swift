#if os(Linux)
import Crypto
import Foundation
import FormPost
import Multipart
import Testing

/// A Hummingbird app that mounts FormPostServer (the package's `upload-receiver-app`)
/// loads only what receiving needs: FoundationEssentials, not Foundation with ICU, nor
/// FoundationNetworking with libcurl, nor FoundationXML with libxml2. Read from the
/// running process's /proc/PID/maps before and after it stored an upload. Linux only.
@Suite("Footprint")
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
        let directory = NSTemporaryDirectory() + "formpost-footprint-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let port = try freePort()
        let app = try ChildProcess(Self.receiverApp, [String(port), directory], stdout: .discard, stderr: .discard)
        defer { app.stop() }
        try RawSocket.waitForListenerBlocking(port: port)

        let before = try Self.mappedLibraries(pid: app.pid)
        #expect(before.contains { $0.hasPrefix("libFoundationEssentials.so") }, "FoundationEssentials is not mapped, so the check reads the wrong maps: \(before)")

        let content = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var form = MultipartForm()
        form.append(name: "note", value: "footprint")
        form.append(name: "file", bytes: content, filename: "content.bin", mimeType: "application/octet-stream")
        let response = try await FormPostClient().upload(form, to: URL(string: "http://127.0.0.1:\(port)/upload")!)
        #expect(response.status == 200, "\(response.text)")
        let receipt = try response.decode(Receipt.self)
        #expect(receipt.files.first?.sha256 == SHA256.hash(data: content).map { String(format: "%02x", $0) }.joined())

        let after = try Self.mappedLibraries(pid: app.pid)
        for library in before.union(after) {
            #expect(!Self.forbidden.contains { library.hasPrefix($0) }, "the receiver app maps \(library)")
        }
    }

    /// The file names of the shared objects mapped into process `pid`.
    static func mappedLibraries(pid: Int32) throws -> Set<String> {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        return Set(maps.split(separator: "\n").compactMap { line -> String? in
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).last, path.hasPrefix("/"), path.contains(".so") else { return nil }
            return String(path.split(separator: "/").last!)
        })
    }
}
#endif
