import FormPost
import Foundation

/// Cancels the upload it is given from a progress handler, which runs elsewhere.
final class Halfway: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<ResumableUploadResult, any Error>?
    private var reached = false

    func set(_ task: Task<ResumableUploadResult, any Error>) {
        lock.withLock {
            self.task = task
            if reached { task.cancel() }
        }
    }

    func cancel() {
        lock.withLock {
            reached = true
            task?.cancel()
        }
    }
}
