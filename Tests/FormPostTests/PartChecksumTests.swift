import Foundation
@testable import FormPostS3
import FormPostServer
import Multipart
import NIOCore
import Testing

/// CRC32 checksums of parts, as AWS's SDKs send them, on a store that keeps them: a proxy in
/// front of moto that checks each part's `x-amz-checksum-crc32` as S3 does
/// (Tests/Interop/s3_checksum_proxy.py), where moto keeps them unchecked.
@Suite struct PartChecksumTests {
    @Test("S3's CRC32 of a part: zlib's CRC32 (ISO-HDLC), four bytes big-endian, in base64")
    func crc32() {
        // The check value of CRC-32/ISO-HDLC is 0xCBF43926.
        #expect(S3Checksum.crc32(of: ByteBuffer(string: "123456789")) == "y/Q5Jg==")
        #expect(S3Checksum.crc32(of: ByteBuffer()) == "AAAAAA==")
        // 10 KiB of every byte value, as Python's zlib.crc32 computes it.
        #expect(S3Checksum.crc32(of: ByteBuffer(bytes: Array(repeating: Array(0...255), count: 40).flatMap { $0 })) == "u847nQ==")
    }

    @Test("on a store that keeps checksums, the multipart uploads of a 20 MiB form and of two 9 MiB tus uploads (one of deferred length, its multipart upload begun by an append) declare CRC32, each of their parts (3, 2 and 2) carries its own, checked by the store, and their completions name them; a tus final upload joining two partial uploads (parts the store copies) declares none; all are stored whole")
    func formParts() async throws {
        let store = try await MotoStore()
        let behind = try await ServeBehindProxy(store, proxy: "s3_checksum_proxy.py")
        guard let (serve, port) = try await behind.startServe(prefix: "crc") else { return }
        defer { serve.stop() }
        let directory = behind.directory
        let form = directory.path + "/form.bin", tus = directory.path + "/tus.bin", parallel = directory.path + "/parallel.bin"
        try Data((0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }).write(to: URL(fileURLWithPath: form))
        try Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) }).write(to: URL(fileURLWithPath: tus))
        try Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }).write(to: URL(fileURLWithPath: parallel))
        let deferred = directory.path + "/deferred.bin"
        try Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }).write(to: URL(fileURLWithPath: deferred))

        let answer = try await offPool { try Subprocess.run("curl", ["-sS", "-F", "file=@\(form)", "http://127.0.0.1:\(port)/"]) }
        let file = try #require(try? JSONDecoder().decode(Receipt.self, from: Data(answer.utf8)).files.first, "\(answer)")
        let upload = try await offPool {
            try ChildProcess(formpostBinary, ["-sS", "--retry", "0", "--resumable", "tus", "--chunk-size", "4M", "-T", tus, "http://127.0.0.1:\(port)/files"]).finish(timeout: 120)
        }
        #expect(upload.status == 0, "\(String(decoding: upload.stderr, as: UTF8.self))")
        let joined = try await offPool {
            try ChildProcess(formpostBinary, ["-sS", "--retry", "0", "--resumable", "tus", "--parallel", "2", "-T", parallel, "http://127.0.0.1:\(port)/files"])
                .finish(timeout: 120)
        }
        #expect(joined.status == 0, "\(String(decoding: joined.stderr, as: UTF8.self))")
        // Its length deferred: the multipart upload begun by the first append, which saves
        // that it declared CRC32; the last part is sent by the append declaring the length.
        let (tusField, dataField) = (TusCreationExtensionTests.tus, TusCreationExtensionTests.data)
        let created = try await TusCreationExtensionTests.curl(tusField + ["-X", "POST", "-H", "Upload-Defer-Length: 1", "http://127.0.0.1:\(port)/files"])
        let url = "http://127.0.0.1:\(port)" + (try #require(created.headers["location"], "\(created.status) \(created.body)"))
        let appended = try await TusCreationExtensionTests.curl(tusField + dataField + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "@" + deferred, url])
        #expect(appended.status == 204, "\(appended.status) \(appended.body)")
        let declared = try await TusCreationExtensionTests.curl(tusField + dataField + ["-X", "PATCH", "-H", "Upload-Offset: \(9 << 20)", "-H", "Upload-Length: \(9 << 20)", url])
        #expect(declared.status == 204, "\(declared.status) \(declared.body)")

        let contents = try await store.contents()
        let stored = Dictionary(contents.objects.filter { !$0.key.contains(".tus/") }.map { ($0.sha256, $0) }) { first, _ in first }
        #expect(stored[sha256Hex(try Data(contentsOf: URL(fileURLWithPath: form)))]?.key == file.storedAs, "\(contents.objects.map(\.key))")
        #expect(stored[sha256Hex(try Data(contentsOf: URL(fileURLWithPath: tus)))]?.size == 9 << 20, "\(contents.objects.map(\.key))")
        #expect(stored[sha256Hex(try Data(contentsOf: URL(fileURLWithPath: parallel)))]?.size == 9 << 20, "\(contents.objects.map(\.key))")
        #expect(stored[sha256Hex(try Data(contentsOf: URL(fileURLWithPath: deferred)))]?.size == 9 << 20, "\(contents.objects.map(\.key))")

        let lines = try await ServeBehindProxy.stop(serve)
        #expect(lines.contains("CRC32 checksums of parts"), "\(lines)")
        // The start-up probe's own multipart upload (one part, checksummed) left out.
        let log = try await behind.proxyLines().filter { !$0.contains(".formpost-probe-") }
        let (begun, parts, completed) = (log.filter { $0.contains(" algorithm=") }, log.filter { $0.contains(" crc32=") }, log.filter { $0.contains(" parts=") })
        // The form's and the two tus uploads': a multipart upload each declaring CRC32, three,
        // two and two parts (8 MiB, then the last 1 MiB at completion) with theirs, all taken.
        #expect(begun.filter { $0.hasSuffix("-> 200 algorithm=CRC32") }.count == 3, "\(begun)")
        #expect(parts.filter { $0.contains("-> 200 crc32=") && !$0.contains("crc32=none") }.count == 7, "\(parts)")
        // Over plain HTTP, each part's payload is signed (its SHA-256), as AWS's SDKs sign it.
        #expect(!parts.isEmpty && parts.allSatisfy { $0.hasSuffix(" payload=signed") }, "\(parts)")
        #expect(completed.filter { $0.hasSuffix("-> 200 parts=3 checksums=3") }.count == 1, "\(completed)")
        #expect(completed.filter { $0.hasSuffix("-> 200 parts=2 checksums=2") }.count == 2, "\(completed)")
        // The final upload's (two partial uploads of 4.5 MiB, under a part each, gathered
        // into parts sent from the receiver): none declared, none sent.
        #expect(completed.filter { $0.contains("-> 200 parts=") && $0.hasSuffix(" checksums=0") }.count == 1, "\(completed)")
        #expect(parts.contains { $0.contains("-> 200 crc32=none ") }, "\(parts)")
        #expect(!log.contains { $0.contains("-> 400") }, "\(log)")
    }

    @Test("over TLS (the store's CA trusted through AWS_CA_BUNDLE), the parts of a 20 MiB form and of a 9 MiB tus upload go unsigned (UNSIGNED-PAYLOAD), each with its CRC32 checked by the store, as AWS's SDKs send them; every other request is signed over its body; both are stored whole")
    func unsignedOverTLS() async throws {
        let store = try await MotoStore()
        let behind = try await ServeBehindProxy(store, proxy: "s3_checksum_proxy.py", tls: try TLSFixtures())
        guard let (serve, port) = try await behind.startServe(prefix: "tls") else { return }
        defer { serve.stop() }
        try await behind.sendFormAndTus(port: port, form: Data((0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 >> 12) }),
                                        tus: Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) }))

        let lines = try await ServeBehindProxy.stop(serve)
        #expect(lines.contains("CRC32 checksums of parts"), "\(lines)")
        let log = try await behind.proxyLines().filter { !$0.contains(".formpost-probe-") }
        let parts = log.filter { $0.contains(" crc32=") }
        // The form's three parts and the tus upload's two, each with its CRC32, none signed.
        #expect(parts.filter { $0.contains("-> 200 crc32=") && !$0.contains("crc32=none") && $0.hasSuffix(" payload=unsigned") }.count == 5, "\(parts)")
        #expect(!parts.contains { $0.hasSuffix(" payload=signed") }, "\(parts)")
        // Nothing else unsigned: the proxy refuses a signed body whose SHA-256 is not the one signed.
        #expect(log.filter { $0.contains("payload=unsigned") }.count == 5, "\(log)")
        #expect(!log.contains { $0.contains("-> 400") }, "\(log)")
    }
}
