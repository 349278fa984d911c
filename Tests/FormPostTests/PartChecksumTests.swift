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

    @Test("the payload's name in the signature: UNSIGNED-PAYLOAD only over TLS for a body carrying its CRC32; else the body's SHA-256 (the empty body's without one)")
    func payloadHashRule() {
        let body = ByteBuffer(string: "part")
        let checksum: [SignatureV4.Field] = [("x-amz-checksum-crc32", S3Checksum.crc32(of: body))]
        // The SHA-256 of "part", as Python's hashlib gives it.
        let bodyHash = "37a680133bd09342f934afb8dd2c7d9e1b624da5f35e3a38adb103e37c055ed1"
        #expect(S3Client.payloadHash(of: body, fields: checksum, overTLS: true) == SignatureV4.unsignedPayload)
        #expect(S3Client.payloadHash(of: body, fields: checksum, overTLS: false) == bodyHash)
        #expect(S3Client.payloadHash(of: body, fields: [], overTLS: true) == bodyHash)
        #expect(S3Client.payloadHash(of: nil, fields: checksum, overTLS: true) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("on a store that keeps checksums, the multipart uploads of a 20 MiB form and of two 9 MiB tus uploads (one of deferred length, its multipart upload begun by an append) declare CRC32, each of their parts (3, 2 and 2) carries its own, checked by the store, and their completions name them; a tus final upload joining two partial uploads (parts the store copies) declares none; all are stored whole")
    func formParts() async throws {
        let store = try await MotoStore()
        let behind = try await ServeBehindProxy(store, proxy: "s3_checksum_proxy.py")
        guard let (serve, port) = try await behind.startServe(prefix: "crc") else { return }
        defer { serve.stop() }
        try await behind.sendFormAndTus(port: port, form: Data((0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }),
                                        tus: Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) }),
                                        parallel: Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }))
        let deferredBytes = Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })
        let deferred = behind.directory.path + "/deferred.bin"
        try deferredBytes.write(to: URL(fileURLWithPath: deferred))
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
        #expect(contents.objects.contains { $0.sha256 == sha256Hex(deferredBytes) && $0.size == 9 << 20 }, "\(contents.objects.map(\.key))")

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

    @Test("over TLS (the store's CA trusted through AWS_CA_BUNDLE), the parts of a 20 MiB form and of a 9 MiB tus upload go unsigned (UNSIGNED-PAYLOAD), each with its CRC32 checked by the store, as AWS's SDKs send them; the parts of a tus final upload, which carry no checksum, and every other request are signed over their bodies; all are stored whole")
    func unsignedOverTLS() async throws {
        let store = try await MotoStore()
        let behind = try await ServeBehindProxy(store, proxy: "s3_checksum_proxy.py", tls: try TLSFixtures())
        guard let (serve, port) = try await behind.startServe(prefix: "tls") else { return }
        defer { serve.stop() }
        try await behind.sendFormAndTus(port: port, form: Data((0..<(20 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 >> 12) }),
                                        tus: Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) }),
                                        parallel: Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ $0 >> 10) }))

        let lines = try await ServeBehindProxy.stop(serve)
        #expect(lines.contains("CRC32 checksums of parts"), "\(lines)")
        let log = try await behind.proxyLines().filter { !$0.contains(".formpost-probe-") }
        let parts = log.filter { $0.contains(" crc32=") }
        // The form's three parts and the tus upload's two, each with its CRC32, none signed.
        // (The parallel upload's partial uploads are under a part each, kept as objects.)
        let checksummed = parts.filter { !$0.contains("crc32=none") }
        #expect(checksummed.count == 5 && checksummed.allSatisfy { $0.contains("-> 200 crc32=") && $0.hasSuffix(" payload=unsigned") }, "\(parts)")
        // The final upload's parts, gathered by the receiver, carry no checksum: signed over TLS too.
        let unchecked = parts.filter { $0.contains("crc32=none") }
        #expect(!unchecked.isEmpty && unchecked.allSatisfy { $0.contains("-> 200 crc32=none") && $0.hasSuffix(" payload=signed") }, "\(parts)")
        // Nothing else unsigned: the proxy refuses a signed body whose SHA-256 is not the one signed.
        #expect(log.filter { $0.contains("payload=unsigned") }.count == 5, "\(log)")
        #expect(!log.contains { $0.contains("-> 400") }, "\(log)")
    }
}
