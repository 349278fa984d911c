#if os(Linux)
import Foundation
import FormPost
import FormPostServer
import Multipart
import Testing

/// The receiver on a file system that fills up: a tmpfs of 1 MiB the test mounts (Linux only,
/// as ``TmpfsMount``).
@Suite("A full disk")
struct FullDiskTests {
    @Test("an upload larger than the room left answers 507 and leaves nothing; the next one that fits is stored")
    func fullDisk() async throws {
        let disk = try TmpfsMount(kibibytes: 1024)
        let samples = try SampleDirectory()
        let large = try samples.file("large.bin", size: 3_000_000, seed: 8)
        let small = try samples.file("small.bin", size: 20_000, seed: 9)
        let server = try TestServer()
        let (refused, stored, leftAfterRefusal) = try await server.run(configuration: ReceiverConfiguration(directory: disk.path)) { base in
            let url = base.appendingPathComponent("upload")
            var tooLarge = MultipartForm()
            try tooLarge.append(name: "big", fileAt: large)
            let refused = try await FormPostClient().upload(tooLarge, to: url, strategy: .streaming)
            let left = try FileManager.default.contentsOfDirectory(atPath: disk.path)
            var fits = MultipartForm()
            try fits.append(name: "small", fileAt: small)
            let stored = try await FormPostClient().upload(fits, to: url).validate().decode(Receipt.self)
            return (refused, stored, left)
        }
        #expect(refused.status == 507, "\(refused.text)")
        #expect(refused.text.contains("no room left"), "\(refused.text)")
        #expect(leftAfterRefusal.isEmpty, "the refused upload left \(leftAfterRefusal)")
        #expect(stored.files.map(\.sha256) == [sha256Hex(try Data(contentsOf: URL(fileURLWithPath: small)))])
        #expect(stored.files.first.map { FileManager.default.fileExists(atPath: disk.path + "/" + $0.storedAs) } == true)
    }
}
#endif
