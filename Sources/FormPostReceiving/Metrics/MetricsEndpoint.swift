import HTTPTypes
import NIOCore

/// `GET /metrics` of an `UploadServer`: what `render` gives (the text a metrics backend
/// exports, Prometheus's by default), answered with `contentType` and `Cache-Control:
/// no-store`. With it the server also counts what `UploadServer` documents under
/// metrics, through swift-metrics, for whichever backend the application bootstrapped.
///
/// The endpoint answers whoever reaches the server's port: behind a reverse proxy, keep
/// `/metrics` from the outside there.
public struct MetricsEndpoint: Sendable {
    /// The path it answers.
    public static let path = "/metrics"
    /// The content type of the answer.
    public let contentType: String
    /// The answer's body, made anew for each request.
    public let render: @Sendable () -> [UInt8]

    /// An endpoint answering what `render` gives, as `contentType` (Prometheus's text
    /// exposition format, version 0.0.4, unless told otherwise).
    public init(contentType: String = "text/plain; version=0.0.4; charset=utf-8", render: @escaping @Sendable () -> [UInt8]) {
        self.contentType = contentType
        self.render = render
    }

    /// The answer to `request` when it asks for the metrics; nil for any other.
    func response(to request: ReceiverRequest) -> ReceiverResponse? {
        guard request.path == Self.path, request.method == .get || request.method == .head else { return nil }
        let body = ByteBuffer(bytes: render())
        let response = ReceiverResponse(status: .ok, headers: [.contentType: contentType, .cacheControl: "no-store"], body: body)
        return request.method == .head ? response.forHead() : response
    }
}
