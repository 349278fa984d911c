import Foundation
@testable import FormPostReceiving
import FormPostS3
import NIOCore
import Testing

/// The leases' requests on their own connections, each attempt short
/// (``ObjectStore/leaseTraffic``): a lease held through an append stays held while the
/// store is slow to take its parts, and a renewal lost on the way is sent again in time.
/// On moto behind a proxy that holds chosen requests (Tests/Interop/s3_hold_proxy.py).
@Suite("Object storage: lease traffic apart from parts", .timeLimit(.minutes(3)))
struct ObjectLeaseTrafficTests {
    /// How long the leases last, in seconds: short, for parts held up to outlast one.
    static let leaseSeconds = 3

    /// Runs `body` with tus uploads on moto behind s3_hold_proxy.py holding `hold`
    /// (`METHOD NEEDLE SECONDS [SKIP [COUNT]]`), leases of `lease` seconds; returns the
    /// proxy's lines.
    func throughHoldingProxy(_ hold: [String], lease: Int = leaseSeconds,
                             _ body: (ObjectStorage, ObjectUploadStore<TusUploadInfo>) async throws -> Void) async throws -> [String] {
        let moto = try await MotoStore()
        let port = try freePort()
        let proxy = try ChildProcess("python3", [Subprocess.interopScript("s3_hold_proxy.py"), String(port), String(moto.port)] + hold, stderr: .discard)
        defer { proxy.stop() }
        try await RawSocket.waitForListener(port: port)
        var storage = moto.storage(prefix: "traffic", through: port)
        storage.leaseDuration = .seconds(lease)
        try await storage.checkConditionalWrites()
        let uploads = ObjectUploadStore<TusUploadInfo>(store: storage, name: "tus", partSize: 8 << 20, leaseSeconds: Double(lease), events: nil)
        try await body(storage, uploads)
        let output = try await offPool { () -> Data in
            proxy.stop()
            return try proxy.finish().stdout
        }
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test("a lease stays held while parts fill every connection the store's client opens (each part taking 6 s, twice the lease)")
    func renewedBesideSlowParts() async throws {
        let lines = try await throughHoldingProxy(["PUT", "partNumber=", "6"]) { storage, uploads in
            let id = UploadStore.randomName()
            let key = storage.prefix + id
            let uploadID = try await storage.beginMultipartUpload(of: key, attributes: ObjectAttributes())
            let taken = Date().timeIntervalSince1970
            let expires = try await uploads.holdingLease(id) { held -> Double in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // More parts than AsyncHTTPClient's 8 connections to one host.
                    for number in 1...10 {
                        group.addTask {
                            _ = try await storage.sendPart(ByteBuffer(repeating: UInt8(number), count: 1024), number: number, of: key, uploadID: uploadID,
                                                           checksummed: false, timeout: .seconds(30))
                        }
                    }
                    try await Task.sleep(for: .milliseconds(Self.leaseSeconds * 1000 + 1500))
                    #expect(throws: Never.self, "the lease was lost while the parts were in flight: its renewals waited behind them") {
                        try held.check()
                    }
                    try await group.waitForAll()
                }
                return held.lease.expires
            }
            #expect(expires > taken + Double(Self.leaseSeconds) + 3, "the lease was not renewed while the parts were in flight")
            await storage.abortMultipartUpload(of: key, uploadID: uploadID, attempts: 1)
        }
        #expect(lines.filter { $0.hasSuffix(" held") }.count == 10, "the proxy did not hold the parts: \(lines)")
    }

    @Test("a tus upload whose every part takes 6 s to reach the store, twice the lease (--s3-lease 3): each part is waited for, not cut off at the lease, the lease renewed meanwhile; stored whole")
    func partsSlowerThanTheLease() async throws {
        let moto = try await MotoStore()
        let behind = try await ServeBehindProxy(moto, proxy: "s3_hold_proxy.py", ["PUT", "partNumber=", "6"], proxyErrors: .discard)
        guard let (serve, port) = try await behind.startServe(prefix: "slow", ["--s3-lease", String(Self.leaseSeconds)]) else { return }
        defer { serve.stop() }
        let directory = behind.directory
        // Two parts: 8 MiB with the append, the last 1 MiB at its completion.
        let file = directory.path + "/slow.bin"
        let bytes = Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 >> 12) })
        try bytes.write(to: URL(fileURLWithPath: file))
        let upload = try await offPool {
            try ChildProcess(formpostBinary, ["-sS", "--retry", "0", "--resumable", "tus", "-T", file, "http://127.0.0.1:\(port)/files"]).finish(timeout: 120)
        }
        #expect(upload.status == 0, "\(String(decoding: upload.stderr, as: UTF8.self))")
        let stored = try await moto.contents().objects.filter { !$0.key.hasPrefix("slow/.") }
        #expect(stored.count == 1 && stored.first?.sha256 == sha256Hex(bytes), "\(stored.map(\.key))")
        let lines = try await behind.proxyLines().filter { !$0.contains(".formpost-probe-") }
        // Each part sent once: none was cut off and sent again.
        #expect(lines.filter { $0.contains("partNumber=") && $0.hasSuffix(" held") }.count == 2, "\(lines)")
        #expect(lines.filter { $0.contains("partNumber=") && $0.hasSuffix("-> 200") }.count == 2, "\(lines)")
    }

    @Test("a renewal whose request is held on the way (a minute) is sent again within the lease (6 s, attempts of 1.5 s), and the lease stays held")
    func lostRenewalSentAgain() async throws {
        // The lease's second write is its first renewal: held; the take before it is not.
        let lines = try await throughHoldingProxy(["PUT", ".lease", "60", "1", "1"], lease: 6) { _, uploads in
            let id = UploadStore.randomName()
            try await uploads.holdingLease(id) { held in
                try await Task.sleep(for: .seconds(8))
                #expect(throws: Never.self, "the lease ran out while its first renewal hung") { try held.check() }
            }
        }
        #expect(lines.filter { $0.contains(".lease") && $0.hasSuffix(" held") }.count == 1, "the proxy did not hold the renewal: \(lines)")
        #expect(lines.filter { $0.contains("PUT ") && $0.contains(".lease") && $0.hasSuffix("-> 200") }.count >= 3,
                "the take, the renewal sent again and the next renewal should have reached the store: \(lines)")
    }
}
