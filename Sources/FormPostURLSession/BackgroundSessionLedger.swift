import FormPost
import Foundation

/// What a background transport knows about its session, and what follows from each event:
/// which body files are in use, which tasks finished with no caller waiting (and the
/// results they leave), which files to remove, and when the system's completion handlers
/// may be called. It performs no I/O: the transport feeds it the session's events and does
/// what it answers.
///
/// - Body files: a temporary body file is *reserved* from before it is written until its
///   task completes (or its request ends without a task). Its name travels with the task as
///   its `taskDescription` (``taskDescription(bodyFile:)``), which a background session
///   keeps across relaunches, so a run of the app that did not start a task still removes
///   its file when it completes. ``sweep(present:liveTaskDescriptions:)`` names the files no
///   task of the session and no request of this run uses: those a run that ended left.
/// - Orphaned tasks: a task that completes with no caller waiting (started by an earlier
///   run of the app) leaves a ``BackgroundUploadResult``, held until the consumer of
///   ``URLSessionTransport/finishedUploads`` takes it. Its answer's bytes are kept as they
///   come, up to `maxResponseBytes`.
/// - The system's completion handlers (``handEvents(handler:)``) are called once the
///   session has finished delivering its events (``eventsFinished()``) — in that order or
///   the other — and every result delivered by then has been handled: the consumer has
///   come back for the next one. A finish claimed by handlers is used up: a later handler
///   waits for the next finish.
///
/// `Waiter` is whatever resumes a consumer waiting for the next result (a continuation in
/// the transport, a plain value in tests); handlers are named by number.
struct BackgroundSessionLedger<Waiter> {
    /// What the transport does when a task completes.
    struct Completion {
        /// The body file to remove (a name in the session's body directory).
        var removeFile: String?
        /// The waiting consumer to resume with the result of a task no caller waited for.
        var resume: (waiter: Waiter, result: BackgroundUploadResult)?
    }

    /// What the consumer's request for the next result comes to.
    enum Next {
        /// The next result, at once.
        case result(BackgroundUploadResult)
        /// Nothing yet: the consumer waits; the handlers named are to be called now (the
        /// consumer having handled every result).
        case wait(callHandlers: [Int])
        /// Another iteration is waiting already: this one ends.
        case busy
    }

    /// The answer of a task no caller waits for, as it comes.
    private struct OrphanAnswer {
        var body: [UInt8] = []
        var tooLarge = false
    }

    /// The prefix of a task's description that names its body file.
    static var bodyFileTag: String { "formpost-body:" }
    /// How the names of body files end.
    static var bodyFileExtension: String { ".body" }

    /// The most bytes of an orphaned task's answer that are kept.
    let maxResponseBytes: Int
    private var reserved: Set<String> = []
    private var orphanAnswers: [Int: OrphanAnswer] = [:]
    private var results: [BackgroundUploadResult] = []
    private var waiter: Waiter?
    /// Whether a result was taken and the consumer has not come back for the next one.
    private var resultOutstanding = false
    /// Whether the session finished delivering events and no handler has claimed it yet.
    private var finished = false
    private var handlers: [Int] = []

    init(maxResponseBytes: Int) {
        self.maxResponseBytes = maxResponseBytes
    }

    // MARK: - Body files

    /// A task description naming `bodyFile`.
    static func taskDescription(bodyFile: String) -> String { bodyFileTag + bodyFile }

    /// The body file a task's description names, if it names one that can be a body file
    /// of this directory: a plain name (no path) ending in ``bodyFileExtension``. Anything
    /// else — a description set by someone else, a path — names none, so nothing outside
    /// the directory is ever removed.
    static func bodyFile(fromTaskDescription description: String?) -> String? {
        guard let description, description.hasPrefix(bodyFileTag) else { return nil }
        let name = String(description.dropFirst(bodyFileTag.count))
        return isBodyFileName(name) ? name : nil
    }

    /// Whether `name` can be a body file's name: no path, ending in ``bodyFileExtension``,
    /// and more than that.
    static func isBodyFileName(_ name: String) -> Bool {
        name.count > bodyFileExtension.count && name.hasSuffix(bodyFileExtension) && !name.contains("/") && !name.hasPrefix(".")
    }

    /// Records that `name` is about to be written for a request of this run.
    mutating func reserve(_ name: String) {
        reserved.insert(name)
    }

    /// Records that the request `name` was written for ends without a task (its writing
    /// failed, or it was not needed): the transport removes it.
    mutating func release(_ name: String) {
        reserved.remove(name)
    }

    /// The files of `present` (the body directory's listing) to remove: body files that no
    /// request of this run is writing or sending and that no task of the session
    /// (`liveTaskDescriptions`: its tasks' descriptions) names. Files that cannot be body
    /// files are never named.
    func sweep(present: [String], liveTaskDescriptions: [String?]) -> [String] {
        let live = Set(liveTaskDescriptions.compactMap(Self.bodyFile(fromTaskDescription:)))
        return present.filter { Self.isBodyFileName($0) && !reserved.contains($0) && !live.contains($0) }.sorted()
    }

    // MARK: - Tasks

    /// Keeps the bytes of the answer of task `task`, which no caller waits for, up to
    /// `maxResponseBytes`; past them the result is `UploadError.responseTooLarge`.
    mutating func orphanReceived(task: Int, bytes: some Collection<UInt8>) {
        var answer = orphanAnswers[task] ?? OrphanAnswer()
        if !answer.tooLarge {
            if answer.body.count + bytes.count <= maxResponseBytes {
                answer.body.append(contentsOf: bytes)
            } else {
                answer.tooLarge = true
                answer.body = []
            }
        }
        orphanAnswers[task] = answer
    }

    /// A task completed. `description` is its task description; `hasCaller` whether a
    /// request of this run waits for it (it then gets the answer itself). For a task without
    /// a caller: `request` is the request as the task was made, `response` the answer's
    /// status and fields (nil: none came), `error` the error it ended with (already
    /// translated for users).
    mutating func taskCompleted(task: Int, description: String?, hasCaller: Bool, request: (url: URL, method: RequestMethod, headers: HTTPFields),
                                response: (status: Int, headers: HTTPFields)?, error: (any Error)?) -> Completion {
        var completion = Completion()
        if let file = Self.bodyFile(fromTaskDescription: description) {
            reserved.remove(file)
            completion.removeFile = file
        }
        let answer = orphanAnswers.removeValue(forKey: task) ?? OrphanAnswer()
        guard !hasCaller else { return completion }
        let outcome: Result<UploadResponse, any Error>
        if let error {
            outcome = .failure(error)
        } else if answer.tooLarge {
            outcome = .failure(UploadError.responseTooLarge(limit: maxResponseBytes))
        } else if let response {
            outcome = .success(UploadResponse(status: response.status, headers: response.headers, body: answer.body, url: request.url, method: request.method))
        } else {
            outcome = .failure(UploadError.transport("no HTTP response"))
        }
        let result = BackgroundUploadResult(url: request.url, method: request.method, requestHeaders: request.headers, outcome: outcome)
        if let waiter {
            self.waiter = nil
            resultOutstanding = true
            completion.resume = (waiter, result)
        } else {
            results.append(result)
        }
        return completion
    }

    // MARK: - The consumer

    /// The consumer asks for the next result (and so has handled the one before).
    mutating func next(waiter: Waiter) -> Next {
        guard self.waiter == nil else { return .busy }
        resultOutstanding = false
        if !results.isEmpty {
            resultOutstanding = true
            return .result(results.removeFirst())
        }
        self.waiter = waiter
        return .wait(callHandlers: readyHandlers())
    }

    /// The waiting consumer stops waiting (its task was cancelled): the waiter to resume
    /// with the end, if one waits.
    mutating func stopWaiting() -> Waiter? {
        defer { waiter = nil }
        return waiter
    }

    // MARK: - The system's completion handlers

    /// The system handed in completion handler `handler` for the session's events: the
    /// handlers to call now (when the session finished its events before and every result
    /// is handled), or none.
    mutating func handEvents(handler: Int) -> [Int] {
        handlers.append(handler)
        return readyHandlers()
    }

    /// The session finished delivering its events: the handlers to call now.
    mutating func eventsFinished() -> [Int] {
        finished = true
        return readyHandlers()
    }

    /// The handlers that may be called: all, once the session finished its events, a
    /// handler waits and no result is unhandled; the finish is then used up.
    private mutating func readyHandlers() -> [Int] {
        guard finished, !handlers.isEmpty, results.isEmpty, !resultOutstanding else { return [] }
        finished = false
        defer { handlers = [] }
        return handlers
    }
}
