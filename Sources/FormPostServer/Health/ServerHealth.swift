import HTTPTypes
import NIOCore
import Synchronization

/// The health endpoints of an ``UploadServer``, for load balancers and orchestrators:
///
/// - `GET /healthz` — liveness: `200 {"status":"ok"}` while the server answers at all.
/// - `GET /readyz` — readiness: `200 {"status":"ok"}` when the storage directory is
///   writable (and object storage's bucket answers, when files go there) and the server is
///   not stopping; otherwise
///   `503 {"status":"unavailable","reason":"…"}` saying why.
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

    /// The path of the liveness endpoint.
    public static let livenessPath = "/healthz"
    /// The path of the readiness endpoint.
    public static let readinessPath = "/readyz"

    /// Health endpoints checking `directory` (normally the receiver's
    /// ``ReceiverConfiguration/directory``) and, with `objectStorage` (the receiver's
    /// ``ReceiverConfiguration/objectStorage``), that its bucket answers a `HEAD`; probed at
    /// most once every `probeInterval`.
    public init(directory: String, objectStorage: ObjectStorage? = nil, probeInterval: Duration = .seconds(1)) {
        self.directory = directory
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
            if isStopping {
                return Self.answer(.serviceUnavailable, Status(status: "unavailable", reason: "the server is stopping"), head: request.method == .head)
            }
            if let problem = await probe.problem() {
                return Self.answer(.serviceUnavailable, Status(status: "unavailable", reason: problem), head: request.method == .head)
            }
            return Self.answer(.ok, Status(status: "ok"), head: request.method == .head)
        default:
            return nil
        }
    }

    /// What the endpoints answer as JSON.
    private struct Status: Encodable {
        let status: String
        var reason: String?
    }

    private static func answer(_ status: HTTPResponse.Status, _ body: Status, head: Bool) -> ReceiverResponse {
        var response = UploadReceiver.json(body, status: status)
        response.headers[.cacheControl] = "no-store"
        return head ? response.forHead() : response
    }
}
