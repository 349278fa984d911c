import FormPost
import Foundation
import Synchronization

/// A background transport's ledger (``BackgroundSessionLedger``) and body directory, with
/// what carries out the ledger's answers: files removed, a waiting consumer resumed, the
/// system's completion handlers called.
final class BackgroundSessionState: Sendable {
    typealias Waiter = CheckedContinuation<BackgroundUploadResult?, Never>

    /// Where the session's temporary body files are.
    let directory: BackgroundBodyDirectory
    private let ledger: Mutex<BackgroundSessionLedger<Waiter>>

    init(directory: BackgroundBodyDirectory, maxResponseBytes: Int) {
        self.directory = directory
        ledger = Mutex(BackgroundSessionLedger(maxResponseBytes: maxResponseBytes))
    }

    /// A name for a new body file, reserved (the directory made if missing).
    func reserveBodyFile() -> String {
        directory.prepare()
        let name = directory.newBodyFileName()
        ledger.withLock { $0.reserve(name) }
        return name
    }

    /// The request `name` was reserved for ends without a task: the file goes.
    func releaseBodyFile(_ name: String) {
        ledger.withLock { $0.release(name) }
        directory.remove(name)
    }

    /// Removes the body files that no task of the session (`liveTaskDescriptions`) and no
    /// request of this run uses; their names.
    @discardableResult
    func sweep(liveTaskDescriptions: [String?]) -> [String] {
        let present = directory.fileNames()
        let removed = ledger.withLock { $0.sweep(present: present, liveTaskDescriptions: liveTaskDescriptions) }
        for name in removed { directory.remove(name) }
        return removed
    }

    /// Keeps bytes of the answer of a task no caller waits for.
    func orphanReceived(task: Int, bytes: Data) {
        ledger.withLock { $0.orphanReceived(task: task, bytes: bytes) }
    }

    /// A task completed: its body file is removed and, with no caller waiting, its result
    /// goes to the consumer of the finished uploads.
    func taskCompleted(task: Int, description: String?, hasCaller: Bool, request: (url: URL, method: RequestMethod, headers: HTTPFields),
                       response: (status: Int, headers: HTTPFields)?, error: (any Error)?) {
        let completion = ledger.withLock {
            $0.taskCompleted(task: task, description: description, hasCaller: hasCaller, request: request, response: response, error: error)
        }
        if let file = completion.removeFile { directory.remove(file) }
        if let (waiter, result) = completion.resume { waiter.resume(returning: result) }
    }

    /// The next finished upload no caller waited for; nil when the waiting task is
    /// cancelled or another iteration is waiting already.
    func next() async -> BackgroundUploadResult? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: Waiter) in
                switch ledger.withLock({ $0.next(waiter: waiter) }) {
                case .result(let result):
                    waiter.resume(returning: result)
                case .busy:
                    waiter.resume(returning: nil)
                case .wait(let handlers):
                    BackgroundEventHandlers.call(handlers)
                    if Task.isCancelled { ledger.withLock { $0.stopWaiting() }?.resume(returning: nil) }
                }
            }
        } onCancel: {
            ledger.withLock { $0.stopWaiting() }?.resume(returning: nil)
        }
    }

    /// The system handed in a completion handler for the session's events.
    @MainActor func handEvents(completionHandler: @escaping () -> Void) {
        let number = BackgroundEventHandlers.keep(completionHandler)
        BackgroundEventHandlers.call(ledger.withLock { $0.handEvents(handler: number) })
    }

    /// The session finished delivering its events.
    func eventsFinished() {
        BackgroundEventHandlers.call(ledger.withLock { $0.eventsFinished() })
    }
}
