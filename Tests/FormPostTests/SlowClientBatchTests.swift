import Foundation
@testable import FormPostReceiving
import NIOCore
import NIOPosix
import Testing

/// The file writers of the receiver write what a slow client sent within about a second,
/// not once a whole batch has come: each read of a slow client is a buffer of its own with
/// room to spare, so a batch gathered at 1 KiB/s would hold twice its size for minutes.
@Suite struct SlowClientBatchTests {
    /// A new file at `path`, open for writing.
    static func create(_ path: String) throws -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0, "cannot create \(path)")
        return descriptor
    }

    /// The size of the file at `path` on the disk now.
    static func size(_ path: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    @Test("a form's file: 1 KiB, then 1 KiB more 1.2 s later, are in the file before it completes (a batch is 128 KiB)")
    func formFileWrittenByAge() async throws {
        let directory = try SampleDirectory()
        let path = directory.path + "/.partial-slow"
        let descriptor = try Self.create(path)
        var sink = FileSink(descriptor: descriptor, partialPath: path, directory: directory.path, storedName: "slow", mode: 0o600)
        try await sink.write(ByteBuffer(repeating: 1, count: 1024))
        #expect(try Self.size(path) == 0, "a KiB alone was written at once: the batch is not gathered")
        try await Task.sleep(for: .milliseconds(1200))
        try await sink.write(ByteBuffer(repeating: 2, count: 1024))
        #expect(try Self.size(path) == 2048, "the bytes of a slow client are held past a second")
        _ = try await sink.complete()
        #expect(try Self.size(directory.path + "/slow") == 2048)
    }

    @Test("an append: 1 KiB, then 1 KiB more 1.2 s later, are in the file while the append goes on")
    func appendWrittenByAge() async throws {
        let directory = try SampleDirectory()
        let path = directory.path + "/append"
        let descriptor = try Self.create(path)
        defer { close(descriptor) }
        var writer = PipelinedFileWriter(descriptor: descriptor, threadPool: .singleton, digest: nil)
        #expect(await writer.write(ByteBuffer(repeating: 1, count: 1024)))
        try await Task.sleep(for: .milliseconds(1200))
        #expect(await writer.write(ByteBuffer(repeating: 2, count: 1024)))
        // The batch goes on in a job of its own: it lands within a moment.
        var written = 0
        for _ in 0..<100 where written < 2048 {
            written = try Self.size(path)
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(written == 2048, "the bytes of a slow append are held past a second")
        #expect(await writer.finish().bytes == 2048)
    }
}
