@testable import FormPostReceiving
import Synchronization
import Testing

/// Who waits for whom on one resumable upload: a tus request waits out the receiver's own
/// background work on it (a sweep taking up a failed completion) and is refused at once
/// (423) while another request holds it.
@Suite("Locks on resumable uploads")
struct UploadLocksTests {
    @Test("a request waits while a sweep holds the upload, and takes it once the sweep gives it back")
    func requestWaitsOutBackground() async throws {
        let locks = UploadLocks()
        let sweep = try #require(locks.acquire("a", background: true))
        let taken = Mutex(false)
        let waiting = Task {
            let token = await locks.acquireAfterBackground("a")
            taken.withLock { $0 = true }
            return token
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!taken.withLock { $0 }, "the request did not wait while the sweep held the upload")
        locks.release("a", token: sweep)
        let token = await waiting.value
        #expect(token != nil, "the request was refused while only the sweep held the upload")
        #expect(locks.acquire("a") == nil, "the request's hold is not a hold")
    }

    @Test("a request is refused at once while another request holds the upload, and after its patience while a sweep holds it",
          .timeLimit(.minutes(1)))
    func refusals() async throws {
        let locks = UploadLocks()
        _ = try #require(locks.acquire("held"))
        #expect(await locks.acquireAfterBackground("held", patience: .seconds(3600)) == nil)
        _ = try #require(locks.acquire("swept", background: true))
        #expect(await locks.acquireAfterBackground("swept", patience: .milliseconds(50)) == nil)
        #expect(await locks.acquireAfterBackground("free") != nil)
    }
}
