import HTTPTypes
import Logging
import NIOCore
import Synchronization

/// The health endpoints of an `UploadServer`, for load balancers and orchestrators:
///
/// - `GET /healthz` — liveness: `200 {"status":"ok"}` while the server answers at all.
/// - `GET /readyz` — readiness: `200 {"status":"ok"}` when the storage directory is
///   writable (and object storage's bucket answers, when files go there) and the server is
///   not stopping; otherwise `503 {"status":"unavailable"}`. Why is written to the log
///   (at warning, once each time the reason changes), never to the client: the answer tells
///   whoever asks nothing of the storage's path or the system's errors.
///
/// Writable is found out for real: a probe file is created in the directory and removed
/// again, on NIO's thread pool; the outcome is kept for `probeInterval` (a second by
/// default), so a flood of probes costs one file creation a second. Call
/// ``beginStopping()`` when the server begins to stop (`formpost serve` does on SIGTERM
/// and SIGINT): from then on `/readyz` answers 503, while requests in flight finish.
/// Both answer `HEAD` too, and `Cache-Control: no-store`.
public final class ServerHealth: Sendable {
    /// The directory whose writability `/readyz` checks.
    public let directory: String
    private let probe: DirectoryProbe
    private let stopping = Atomic<Bool>(false)
    private let logger: Logger
    /// The reason last logged for not being ready, nil while ready.
    private let loggedProblem = Mutex<String?>(nil)

    /// The path of the liveness endpoint.
    public static let livenessPath = "/healthz"
    /// The path of the readiness endpoint.
    public static let readinessPath = "/readyz"

    /// Health endpoints checking `directory` (normally the receiver's
    /// ``ReceiverConfiguration/directory``) and, with `objectStorage` (the receiver's
    /// ``ReceiverConfiguration/objectStorage``), that its bucket answers a `HEAD`; probed at
    /// most once every `probeInterval`. Why the server is not ready goes to `logger`.
    public init(directory: String, objectStorage: (any ObjectStore)? = nil, probeInterval: Duration = .seconds(1),
                logger: Logger = Logger(label: "formpost.health")) {
        self.directory = directory
        self.logger = logger
        probe = DirectoryProbe(directory: directory, objectStorage: objectStorage, maxAge: probeInterval)
    }

    /// From now on `/readyz` answers 503: the server is stopping. It cannot be undone.
    public func beginStopping() {
        stopping.store(true, ordering: .releasing)
    }

    /// Whether ``beginStopping()`` was called.
    public var isStopping: Bool {
        stopping.load(ordering: .acquiring)
    }

    /// The answer to `request` when it is one of the health endpoints'; nil for any other.
    func response(to request: ReceiverRequest) async -> ReceiverResponse? {
        guard request.method == .get || request.method == .head else { return nil }
        switch request.path {
        case Self.livenessPath:
            return Self.answer(.ok, Status(status: "ok"), head: request.method == .head)
        case Self.readinessPath:
            let problem = isStopping ? "the server is stopping" : await probe.problem()
            note(problem)
            return Self.answer(problem == nil ? .ok : .serviceUnavailable, Status(status: problem == nil ? "ok" : "unavailable"),
                               head: request.method == .head)
        default:
            return nil
        }
    }

    /// Logs `problem` when it is not the one logged last; nil is ready again.
    private func note(_ problem: String?) {
        let changed = loggedProblem.withLock { logged in
            defer { logged = problem }
            return logged != problem
        }
        guard changed else { return }
        if let problem {
            logger.warning("not ready: \(problem)")
        } else {
            logger.notice("ready again")
        }
    }

    /// What the endpoints answer as JSON.
    private struct Status: Encodable {
        let status: String
    }

    private static func answer(_ status: HTTPResponse.Status, _ body: Status, head: Bool) -> ReceiverResponse {
        var response = UploadReceiver.json(body, status: status)
        response.headers[.cacheControl] = "no-store"
        return head ? response.forHead() : response
    }
}
