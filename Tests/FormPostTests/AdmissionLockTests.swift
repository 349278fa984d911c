import Foundation
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import Logging
import Testing

/// A resumable upload is its creating request's from the moment its files exist: a sweep
/// that runs before that request gets to append its first bytes (a loaded machine can take
/// longer than the idle expiry to get there) leaves it alone.
@Suite("Admission holds a new upload for its creating request")
struct AdmissionLockTests {
    @Test("a sweep between an upload's admission and its creating request's first bytes leaves it; once given back, an idle sweep removes it")
    func sweepSkipsAdmittedUpload() throws {
        let directory = try SampleDirectory()
        let store = try UploadStore(directory: directory.path + "/uploads", stateRoot: nil, name: "tus", fileMode: 0o644)
        let configuration = ReceiverConfiguration(directory: directory.path + "/uploads")
        let admission = UploadAdmission(configuration: configuration)
        // Idle at once: the first sweep would take any upload no request holds.
        let expiry = UploadExpiry(lifetime: .seconds(3600), idle: .milliseconds(1), kind: .tus)
        let (locks, digests) = (UploadLocks(), RunningDigests())
        let logger = Logger(label: "test")
        let created = Date().timeIntervalSince1970 - 60
        let info = TusUploadInfo(length: 10, metadata: nil, created: created, client: "127.0.0.1")
        let (id, token) = try admission.admit(info, created: created, client: "127.0.0.1", connection: nil, store: store, expiry: expiry,
                                              locks: locks, digests: digests, logger: logger)
        if let stray = locks.acquire(id) {
            Issue.record("the new upload is not held")
            locks.release(id, token: stray)
        }
        expiry.sweep(store, locks: locks, digests: digests, logger: logger)
        #expect(store.census.entry(id) != nil, "a sweep removed the upload its creating request holds")
        locks.release(id, token: token)
        expiry.sweep(store, locks: locks, digests: digests, logger: logger)
        #expect(store.census.entry(id) == nil, "the idle upload, no longer held, was kept")
    }

    @Test("the directory's creating(_:client:claim:_:) holds the new upload while its body runs: a sweep then leaves it; after, an idle sweep removes it")
    func creatingHoldsTheUpload() async throws {
        let directory = try SampleDirectory()
        let store = try UploadStore(directory: directory.path + "/uploads", stateRoot: nil, name: "tus", fileMode: 0o644)
        let configuration = ReceiverConfiguration(directory: directory.path + "/uploads")
        let expiry = UploadExpiry(lifetime: .seconds(3600), idle: .milliseconds(1), kind: .tus)
        let (locks, digests) = (UploadLocks(), RunningDigests())
        let logger = Logger(label: "test")
        let uploads = DirectoryUploads<TusUploadInfo>(store: store, locks: locks, digests: digests, unverified: UnverifiedAppends(),
                                                      retries: CompletionRetries(), lifetime: expiry, admission: UploadAdmission(configuration: configuration),
                                                      threadPool: .singleton, basePath: "/files", logger: logger)
        let info = TusUploadInfo(length: 10, metadata: nil, created: Date().timeIntervalSince1970 - 60, client: "127.0.0.1")
        let id = try await uploads.creating(info, client: "127.0.0.1", claim: .refusedWhileHeld) { id, _ in
            if let stray = locks.acquire(id) {
                Issue.record("the new upload is not held while the creating request runs")
                locks.release(id, token: stray)
            }
            expiry.sweep(store, locks: locks, digests: digests, logger: logger)
            #expect(store.census.entry(id) != nil, "a sweep removed the upload its creating request holds")
            return id
        }
        expiry.sweep(store, locks: locks, digests: digests, logger: logger)
        #expect(store.census.entry(id) == nil, "the idle upload, no longer held, was kept")
    }
}
