import Foundation
@testable import FormPostReceiving
@testable import FormPostS3
import NIOCore
import Testing

/// Requests to the store are sent again as AWS's standard retry mode sends them: transient
/// answers retried with backoff, `Retry-After` honoured, a 200 with an error in its body
/// retried, a skewed clock corrected, redirects never followed. Faults are answered by a
/// proxy in front of moto (Tests/Interop/s3_retry_proxy.py).
@Suite struct S3RetryTests {
    /// What the proxy logged: `SECONDS METHOD TARGET -> STATUS`.
    struct Line {
        let time: Double
        let text: Substring
    }

    /// Runs `body` with storage on moto behind s3_retry_proxy.py in `mode` (`MOTO` in
    /// `argument` is moto's own address); returns its result and the proxy's lines.
    func throughProxy<T: Sendable>(_ mode: String, count: Int = 1, method: String = "-", needle: String = "/", argument: String? = nil,
                                   _ body: (ObjectStorage, MotoStore) async throws -> T) async throws -> (T, [Line]) {
        let store = try await MotoStore()
        let port = try freePort()
        let proxy = try ChildProcess("python3", [Subprocess.interopScript("s3_retry_proxy.py"), String(port), String(store.port), mode, String(count),
                                                 method, needle] + (argument.map { [$0.replacingOccurrences(of: "MOTO", with: store.endpoint)] } ?? []))
        defer { proxy.stop() }
        try await RawSocket.waitForListener(port: port)
        let result = try await body(store.storage(through: port), store)
        let output = try await offPool { () -> Data in
            proxy.stop()
            return try proxy.finish().stdout
        }
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line -> Line? in
            guard let space = line.firstIndex(of: " "), let time = Double(line[..<space]) else { return nil }
            return Line(time: time, text: line[line.index(after: space)...])
        }
        return (result, lines)
    }

    @Test("429 with Retry-After: the request waits as long as asked, and is sent again until it is taken")
    func retryAfterHonoured() async throws {
        let (_, lines) = try await throughProxy("status:429:SlowDown", count: 2, method: "PUT", needle: "retried", argument: "2") { storage, _ in
            _ = try await S3Client(storage: storage).send(.PUT, key: "uploads/retried", body: ByteBuffer(string: "hello"), what: "a test write")
        }
        let attempts = lines.filter { $0.text.hasPrefix("PUT ") }
        #expect(attempts.map { $0.text.split(separator: " ").last ?? "" } == ["429", "429", "200"], "\(attempts.map(\.text))")
        for (earlier, later) in zip(attempts, attempts.dropFirst()) {
            #expect(later.time - earlier.time >= 1.9, "an attempt came \(later.time - earlier.time) s after the one before: Retry-After: 2 was not honoured")
        }
    }

    @Test("SlowDown (503), RequestTimeout (a 400) and InternalError are sent again; the third failure is the request's", arguments: [
        "status:503:SlowDown", "status:400:RequestTimeout", "status:500:InternalError",
    ])
    func transientAnswersRetried(mode: String) async throws {
        let (_, twice) = try await throughProxy(mode, count: 2, method: "PUT", needle: "twice") { storage, _ in
            _ = try await S3Client(storage: storage).send(.PUT, key: "uploads/twice", body: ByteBuffer(string: "hello"), what: "a test write")
        }
        let status = String(mode.split(separator: ":")[1])
        let statuses = twice.filter { $0.text.hasPrefix("PUT ") }.map { String($0.text.split(separator: " ").last ?? "") }
        #expect(statuses == [status, status, "200"], "\(statuses)")
        let (failure, lines) = try await throughProxy(mode, count: 3, method: "PUT", needle: "thrice") { storage, _ -> ObjectStorageError? in
            do {
                _ = try await S3Client(storage: storage).send(.PUT, key: "uploads/thrice", body: ByteBuffer(string: "hello"), what: "a test write")
                return nil
            } catch let error as ObjectStorageError {
                return error
            }
        }
        #expect(failure?.isTransient == true, "\(String(describing: failure))")
        #expect(lines.filter { $0.text.hasPrefix("PUT ") }.count == 3, "three attempts in all: \(lines.map(\.text))")
    }

    @Test("a store that throttles everything: retries stop once the bucket's quota is spent (100 retries of 5 tokens), not 2 per request")
    func quotaSpent() async throws {
        let (failures, lines) = try await throughProxy("status:503:SlowDown", count: 1_000_000, method: "PUT", needle: "busy") { storage, _ in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<60 {
                    group.addTask {
                        do {
                            _ = try await S3Client(storage: storage).send(.PUT, key: "uploads/busy-\(index)", body: ByteBuffer(string: "x"), what: "a test write")
                            return false
                        } catch {
                            return true
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
        }
        #expect(failures == 60)
        #expect(lines.filter { $0.text.hasPrefix("PUT ") }.count == 160, "60 first attempts and 100 retries: \(lines.count)")
    }

    @Test("a completion answered 200 with an error in its body is sent again, and the object is whole")
    func errorInA200Retried() async throws {
        let (contents, lines) = try await throughProxy("error-in-200", count: 1, method: "POST", needle: "uploadId=") { storage, store in
            let client = S3Client(storage: storage)
            let id = try await client.beginMultipartUpload(of: "uploads/whole", fields: [])
            let part = try await client.sendPart(ByteBuffer(repeating: 7, count: 1000), number: 1, of: "uploads/whole", uploadID: id)
            try await client.completeMultipartUpload(of: "uploads/whole", uploadID: id, parts: [part])
            return try await store.contents()
        }
        let completions = lines.filter { $0.text.hasPrefix("POST ") && $0.text.contains("uploadId=") }
        #expect(completions.count == 2, "\(completions.map(\.text))")
        #expect(contents.objects.map(\.key) == ["uploads/whole"] && contents.objects.first?.size == 1000)
    }

    @Test("a store whose clock is an hour ahead: its Date is adopted for the signatures after one refusal")
    func skewCorrected() async throws {
        let (_, lines) = try await throughProxy("skew", argument: "3600") { storage, _ in
            // The check begins with a HEAD, whose refusal has no body: the Date alone says why.
            try await storage.check()
            _ = try await S3Client(storage: storage).send(.PUT, key: "uploads/later", body: ByteBuffer(string: "hello"), what: "a test write")
            #expect(abs(storage.clockOffset.current.components.seconds - 3600) < 5, "\(storage.clockOffset.current)")
        }
        let refused = lines.filter { $0.text.hasSuffix("-> 403") }
        #expect(refused.count == 1 && refused.first?.text.hasPrefix("HEAD ") == true, "\(lines.map(\.text))")
        #expect(lines.filter { $0.text.hasSuffix("-> 200") || $0.text.hasSuffix("-> 204") }.count == 5, "the HEAD, the probe written, tagged and removed, the write: \(lines.map(\.text))")
    }

    @Test("eight writes refused at once for an hour's skew adopt one offset of an hour, not eight")
    func concurrentSkewDoesNotCompound() async throws {
        let (offset, lines) = try await throughProxy("skew", argument: "3600") { storage, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        _ = try await S3Client(storage: storage).send(.PUT, key: "uploads/at-once-\(index)", body: ByteBuffer(string: "x"), what: "a test write")
                    }
                }
                try await group.waitForAll()
            }
            return storage.clockOffset.current
        }
        #expect(abs(offset.components.seconds - 3600) < 5, "\(offset)")
        #expect(lines.filter { $0.text.hasSuffix("-> 200") }.count == 8, "\(lines.map(\.text))")
    }

    @Test("a redirect is not followed: the request fails, saying the bucket's region, and nothing reaches the address it named")
    func redirectNotFollowed() async throws {
        let ((failure, contents), lines) = try await throughProxy("redirect", count: 1, method: "PUT", needle: "moved", argument: "MOTO") { storage, store in
            let failure: ObjectStorageError?
            do {
                _ = try await S3Client(storage: storage).send(.PUT, key: "uploads/moved", body: ByteBuffer(string: "hello"), what: "a test write")
                failure = nil
            } catch let error as ObjectStorageError {
                failure = error
            }
            return (failure, try await store.contents())
        }
        #expect(failure?.status == 301, "\(String(describing: failure))")
        #expect(failure?.description.contains("the bucket is in the region eu-west-1") == true, "\(String(describing: failure))")
        #expect(contents.objects.isEmpty, "the redirect was followed: \(contents.objects.map(\.key))")
        #expect(lines.filter { $0.text.hasPrefix("PUT ") }.count == 1, "\(lines.map(\.text))")
    }

    @Test("backoff with full jitter, doubled per attempt from 1 s after throttling and 50 ms otherwise, at most 20 s; Retry-After at most 5 s more; the last attempt fails")
    func decisions() {
        let busy = ObjectStorageError.refused(what: "w", status: 503, code: "SlowDown", message: nil)
        let failing = ObjectStorageError.refused(what: "w", status: 500, code: "InternalError", message: nil)
        let now = Date()
        func delay(_ attempt: Int, random: Double, retryAfter: Duration? = nil, after failure: ObjectStorageError = busy) -> Duration? {
            guard case .retry(let delay, _) = S3RetryStrategy.decide(after: failure, attempt: attempt, of: 10, retryAfter: retryAfter, serverDate: nil,
                                                                     signedAt: now, random: random) else { return nil }
            return delay
        }
        #expect(delay(1, random: 0.5) == .milliseconds(500))
        #expect(delay(3, random: 0.5) == .seconds(2))
        #expect(delay(3, random: 0) == .zero)
        #expect(delay(9, random: 1) == .seconds(20))
        #expect(delay(1, random: 1, after: failing) == .milliseconds(50))
        #expect(delay(3, random: 1, after: failing) == .milliseconds(200))
        #expect(delay(1, random: 0.1, retryAfter: .seconds(3)) == .seconds(3))
        #expect(delay(1, random: 0.1, retryAfter: .seconds(600)) == .milliseconds(5100))
        #expect(S3RetryStrategy.decide(after: busy, attempt: 1, of: 3, retryAfter: nil, serverDate: nil, signedAt: now, random: 0) == .retry(after: .zero, isThrottling: true))
        #expect(S3RetryStrategy.decide(after: failing, attempt: 1, of: 3, retryAfter: nil, serverDate: nil, signedAt: now, random: 0) == .retry(after: .zero, isThrottling: false))
        #expect(S3RetryStrategy.decide(after: busy, attempt: 3, of: 3, retryAfter: nil, serverDate: nil, signedAt: now, random: 0) == .fail)
        let denied = ObjectStorageError.refused(what: "w", status: 403, code: "AccessDenied", message: nil)
        #expect(S3RetryStrategy.decide(after: denied, attempt: 1, of: 3, retryAfter: nil, serverDate: now, signedAt: now, random: 0) == .fail)
        let skewed = ObjectStorageError.refused(what: "w", status: 403, code: "RequestTimeTooSkewed", message: nil)
        #expect(S3RetryStrategy.decide(after: skewed, attempt: 1, of: 3, retryAfter: nil, serverDate: now.addingTimeInterval(-1200), signedAt: now,
                                       random: 0) == .correctClock(offset: .seconds(-1200)))
        #expect(S3RetryStrategy.decide(after: skewed, attempt: 1, of: 3, retryAfter: nil, serverDate: now.addingTimeInterval(10), signedAt: now,
                                       random: 0) == .fail, "a skew within a minute is no skew to correct")
        let dated = Date(timeIntervalSince1970: 784_111_777)
        #expect(S3RetryStrategy.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == dated)
        #expect(S3RetryStrategy.retryAfter("Sun, 06 Nov 1994 08:49:40 GMT", now: dated) == .seconds(3))
        #expect(S3RetryStrategy.retryAfter("7", now: dated) == .seconds(7))
        #expect(S3RetryStrategy.retryAfter("soon", now: dated) == nil)
        #expect(S3RetryStrategy.retryAfter(milliseconds: "1500", "7", now: dated) == .milliseconds(1500))
    }

    @Test("the retry quota: 14 tokens a retry, 5 after throttling, none when too few are left, given back on success")
    func quota() {
        let quota = S3RetryQuota()
        var taken = 0
        while quota.takeRetry(afterThrottling: false) != nil { taken += 1 }
        #expect(taken == 35 && quota.available == 10)
        #expect(quota.takeRetry(afterThrottling: true) == 5)
        #expect(quota.takeRetry(afterThrottling: false) == nil)
        quota.succeeded(lastRetryCost: 14)
        #expect(quota.available == 19)
        quota.succeeded(lastRetryCost: nil)
        #expect(quota.available == 20)
    }
}
