import HTTPTypes

/// What the receivers need of the connection (on HTTP/2, the stream) a request came on,
/// beyond the request itself. A server adapter gives one where it can; without one, a
/// receiver sends no interim answer and cannot end another request that holds an upload.
public protocol ReceiverConnection: Sendable {
    /// Whether the request is one stream of an HTTP/2 connection (then its body's end is
    /// the stream's, with or without `Content-Length`).
    var isMultiplexedStream: Bool { get }

    /// Writes an interim (1xx) answer before the final one — the IETF draft's `104 Upload
    /// Resumption Supported`, `100 Continue` — where the server can; a connection that is
    /// gone is no error.
    func sendInterim(_ status: HTTPResponse.Status, fields: HTTPFields) async

    /// Ends the request's exchange now: closes the connection (on HTTP/2, the stream), so
    /// that a request reading its body sees it end. Used to end a request that holds an
    /// upload a newer request of the same client wants.
    func end()
}
