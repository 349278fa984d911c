import CoreMetrics
import Metrics
import HTTPTypes

/// What the receivers count, through swift-metrics: nothing is recorded unless the
/// application bootstraps a metrics backend (`formpost serve --metrics` bootstraps
/// swift-prometheus). The names, with their labels:
///
/// - `formpost_requests_total{method, status}` — requests answered; `method` one of
///   `GET`, `HEAD`, `POST`, `PUT`, `PATCH`, `DELETE`, `OPTIONS`, else `other`;
/// - `formpost_request_duration_seconds{method}` — how long each took to answer (a timer);
/// - `formpost_received_bytes_total` — bytes of request bodies read;
/// - `formpost_uploads_total{protocol, outcome}` — `protocol` `multipart`, `tus` or `ietf`;
///   `outcome` `created` (resumable), `completed`, `failed` (multipart) or `expired`
///   (resumable, removed unfinished or once its time was up);
/// - `formpost_open_connections` — connections open now;
/// - `formpost_uploads_in_progress{protocol}` — uploads begun and not complete: multipart
///   forms being received now, resumable uploads kept unfinished (those of this receiver's
///   state directory, as of the last scrape; tus uploads in object storage are not counted);
/// - `formpost_hook_calls_total{event, outcome}` — calls to the HTTP hooks
///   (`UploadAuthorizationHook`, `UploadEventHook`): `event` `pre-create` with
///   `outcome` `allowed`, `denied` or `failed` (no usable answer), or `post-finish` /
///   `post-terminate` with `delivered` or `failed` (offered again later);
/// - `formpost_events_dead_lettered_total{event}` — events given up on after their last
///   attempt (``UploadEventDelivery/maxAttempts``, ``UploadEventDelivery/maxAge``) and moved
///   to the outbox's `dead/` directory: `event` `post-finish` or `post-terminate`.
package enum ReceiverMetrics {
    /// What became of an upload, as the `outcome` label says it.
    enum Outcome: String, Sendable {
        case created
        case completed
        case failed
        case expired
    }

    /// Counts one upload of `kind` reaching `outcome`.
    static func upload(_ kind: UploadProtocol, _ outcome: Outcome) {
        Counter(label: "formpost_uploads_total", dimensions: [("protocol", kind.rawValue), ("outcome", outcome.rawValue)]).increment()
    }

    /// Sets the uploads of `kind` in progress to `count` (resumable uploads, when scraped).
    static func inProgress(_ kind: UploadProtocol, _ count: Int) {
        Meter(label: "formpost_uploads_in_progress", dimensions: [("protocol", kind.rawValue)]).set(count)
    }

    /// A multipart form began (`+1`) or ended (`-1`).
    static func form(began: Bool) {
        if began { formsInProgress.increment() } else { formsInProgress.decrement() }
    }

    /// Counts a call to a hook about `event` that ended with `outcome`.
    package static func hookCall(_ event: String, _ outcome: String) {
        Counter(label: "formpost_hook_calls_total", dimensions: [("event", event), ("outcome", outcome)]).increment()
    }

    /// Counts an event of type `event` given up on.
    static func deadLettered(_ event: String) {
        Counter(label: "formpost_events_dead_lettered_total", dimensions: [("event", event)]).increment()
    }

    /// Counts a request of `method` answered with `status` after `duration`. The method is
    /// labelled from a fixed set (``methodLabel(_:)``), so that a client sending methods of
    /// its own cannot make a new series with each.
    static func request(method: HTTPRequest.Method, status: Int, duration: Duration) {
        let method = methodLabel(method)
        Counter(label: "formpost_requests_total", dimensions: [("method", method), ("status", String(status))]).increment()
        Timer(label: "formpost_request_duration_seconds", dimensions: [("method", method)]).record(duration: duration)
    }

    /// The methods labelled by name; every other is `other`.
    static let labelledMethods: Set<HTTPRequest.Method> = [.get, .head, .post, .put, .patch, .delete, .options]

    /// The `method` label of `method`: its name when it is one of ``labelledMethods``, else `other`.
    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        labelledMethods.contains(method) ? method.rawValue : "other"
    }

    /// Made on first use, from the backend bootstrapped by then (the labelled metrics above
    /// are looked up on each use instead).
    private static let receivedBytes = Counter(label: "formpost_received_bytes_total")
    private static let openConnections = Meter(label: "formpost_open_connections")
    private static let formsInProgress = Meter(label: "formpost_uploads_in_progress", dimensions: [("protocol", UploadProtocol.multipart.rawValue)])

    /// Counts `count` bytes of a request body read.
    static func received(_ count: Int) {
        receivedBytes.increment(by: count)
    }

    /// A connection opened (`+1`) or closed (`-1`).
    package static func connection(opened: Bool) {
        if opened { openConnections.increment() } else { openConnections.decrement() }
    }
}
