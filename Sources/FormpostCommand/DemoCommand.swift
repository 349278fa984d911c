#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPost
import FormPostServer
import Hummingbird
import Logging
import ServiceLifecycle
import Multipart

/// `formpost demo`: starts a receiver in-process, uploads a sample form to it with the
/// progress bar, and checks that every file arrived with the same size and SHA-256.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "demo", abstract: "Upload a sample form to a local receiver and verify every file.")

    @Option(name: .customLong("size-mib"), help: "The size of the large sample file in MiB.")
    var sizeMiB = 256

    func run() async throws {
        guard sizeMiB >= 0 else { throw fail(UsageError("--size-mib must be 0 or more")) }
        let root = FileManager.default.temporaryDirectory.path + "/formpost-demo-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            let samples = try SampleFiles.create(in: root + "/samples", largeSize: sizeMiB << 20)
            let verdict = try await demonstrate(samples: samples, storage: root + "/uploads")
            if !verdict { throw ExitCode(1) }
        } catch let code as ExitCode {
            throw code
        } catch {
            throw fail(error)
        }
    }

    private func demonstrate(samples: [SampleFiles.Sample], storage: String) async throws -> Bool {
        var quiet = Logger(label: "formpost.demo")
        quiet.logLevel = .warning
        let receiver = try UploadReceiver(configuration: ReceiverConfiguration(directory: storage), logger: quiet)
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = try UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical).application { port in portContinuation.yield(port) }
        // Stopped gracefully (the listening socket closes, the connections accepted are
        // served out): cancelling the server's task would let NIO trap on a connection the
        // client opens as it stops (apple/swift-nio#2813).
        var configuration = ServiceGroupConfiguration(services: [app], logger: quiet)
        configuration.maximumGracefulShutdownDuration = .seconds(5)
        let services = ServiceGroup(configuration: configuration)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await services.run()
                } catch {
                    portContinuation.finish()
                    throw error
                }
            }
            var iterator = ports.makeAsyncIterator()
            let outcome: Result<Bool, any Error>
            if let port = await iterator.next(), let url = URL(string: "http://127.0.0.1:\(port)/upload") {
                do {
                    outcome = .success(try await upload(samples: samples, to: url, port: port, storage: storage))
                } catch {
                    outcome = .failure(error)
                }
            } else {
                do {
                    while try await group.next() != nil {}  // the server's own error, when it did not start
                    outcome = .failure(UploadError.transport("the receiver did not start"))
                } catch {
                    outcome = .failure(error)
                }
            }
            await services.triggerGracefulShutdown()
            while let _ = try? await group.next() {}
            return try outcome.get()
        }
    }

    /// Uploads the samples to the receiver at `url` with a progress bar, prints the receipt,
    /// and says whether every file arrived intact.
    private func upload(samples: [SampleFiles.Sample], to url: URL, port: Int, storage: String) async throws -> Bool {
        print("Receiver listening on http://127.0.0.1:\(port)/, storing files in \(storage)")
        var form = MultipartForm()
        form.append(name: "title", value: "FormPost demo")
        form.append(name: "note", value: "Fields first, then files — with \"quotes\" and ünïcödé.")
        for sample in samples { try form.append(name: "files[]", fileAt: sample.path) }
        let total = form.contentLength ?? 0
        print("Uploading 2 fields and \(samples.count) files (\(ByteSize.format(total))) …")
        let bar = ProgressBar(enabled: true)
        let started = Date()
        let response = try await FormPostClient().upload(form, to: url) { bar.update($0) }
        let seconds = Date().timeIntervalSince(started)
        bar.finish(summary: "Sent \(ByteSize.format(total)) in \(NumberText.fixed(seconds, places: 2)) s (\(NumberText.fixed(Double(total) / max(seconds, 1e-9) / 1e6, places: 0)) MB/s); HTTP \(response.status)")
        print("Receiver answered HTTP \(response.status):")
        guard response.status == 200 else {
            print(response.text)
            print("Verdict: FAILED — the receiver refused the upload.")
            return false
        }
        let receipt = try response.decode(Receipt.self)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(receipt), as: UTF8.self))
        return Self.verdict(samples: samples, receipt: receipt, storage: storage)
    }

    static func verdict(samples: [SampleFiles.Sample], receipt: Receipt, storage: String) -> Bool {
        var failures: [String] = []
        if receipt.files.count != samples.count { failures.append("expected \(samples.count) files, the receiver stored \(receipt.files.count)") }
        for (sample, stored) in zip(samples, receipt.files) {
            if stored.filename != sample.filename { failures.append("\(sample.filename) arrived named \(stored.filename)") }
            if stored.size != sample.size { failures.append("\(sample.filename): sent \(sample.size) bytes, stored \(stored.size)") }
            if stored.sha256 != sample.sha256 { failures.append("\(sample.filename): SHA-256 differs (sent \(sample.sha256), stored \(stored.sha256))") }
            if let onDisk = try? SampleFiles.sha256(of: storage + "/" + stored.storedAs), onDisk != sample.sha256 {
                failures.append("\(sample.filename): the stored file's SHA-256 differs from the receipt")
            }
        }
        if failures.isEmpty {
            print("Verdict: OK — all \(samples.count) files arrived with matching sizes and SHA-256.")
            return true
        }
        print("Verdict: FAILED")
        for failure in failures { print("  - \(failure)") }
        return false
    }
}

/// The demo's sample files and their expected digests.
enum SampleFiles {
    struct Sample {
        let path: String
        let filename: String
        let size: Int64
        let sha256: String
    }

    static func create(in directory: String, largeSize: Int) throws -> [Sample] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let contents: [(String, [UInt8])] = [
            ("notes.txt", Array("FormPost demo\nline two\r\nline three\n".utf8)),
            ("data.json", Array(#"{"demo": true, "items": [1, 2, 3]}"#.utf8)),
            ("photo.bin", pseudoRandom(1 << 20, seed: 1)),
            ("empty.dat", []),
        ]
        var samples: [Sample] = []
        for (name, bytes) in contents {
            let path = directory + "/" + name
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            samples.append(Sample(path: path, filename: name, size: Int64(bytes.count), sha256: try sha256(of: path)))
        }
        let large = directory + "/large.bin"
        _ = FileManager.default.createFile(atPath: large, contents: nil)
        let handle = try Descriptor.open(large, flags: O_WRONLY | O_TRUNC)
        defer { handle.close() }
        var written = 0
        var seed: UInt64 = 2
        while written < largeSize {
            let chunk = pseudoRandom(min(8 << 20, largeSize - written), seed: seed)
            try handle.write(chunk)
            written += chunk.count
            seed += 1
        }
        samples.append(Sample(path: large, filename: "large.bin", size: Int64(largeSize), sha256: try sha256(of: large)))
        return samples
    }

    static func sha256(of path: String) throws -> String {
        let handle = try Descriptor.open(path, flags: O_RDONLY)
        defer { handle.close() }
        var hasher = SHA256Hasher()
        while case let chunk = try handle.read(upTo: 4 << 20), !chunk.isEmpty { chunk.withUnsafeBytes { hasher.update(bufferPointer: $0) } }
        return Hexadecimal.string(hasher.finalize())
    }

    static func pseudoRandom(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            for index in 0..<count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[index] = UInt8(truncatingIfNeeded: state >> 24)
            }
            initialized = count
        }
    }
}
