import HTTPTypes

/// The answer of ``UploadServer/authorize`` about one request that can begin an upload.
///
/// It allows or refuses the upload as it is; it does not change the upload's limits or
/// metadata.
public enum UploadAuthorization: Sendable, Equatable {
    /// The upload goes on to its receiver.
    case allow
    /// The upload is refused, unread and with nothing stored: answered `status` with the
    /// JSON body `{"error": message}`. A status outside 400–499 is answered 403.
    case deny(status: HTTPResponse.Status, message: String)
    /// Whether to allow the upload could not be decided (the service that decides is down,
    /// slow or answered nonsense): answered 503 with `Retry-After:` ``retryAfterSeconds``
    /// and a message that the authorization service is unavailable, nothing stored;
    /// `cause` is logged at error level and not shown to the client.
    case unavailable(cause: String)

    /// The seconds a client is told to wait (`Retry-After`) before trying again after
    /// ``unavailable(cause:)``.
    public static let retryAfterSeconds = 5
}
