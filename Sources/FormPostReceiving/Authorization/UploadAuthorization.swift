import HTTPTypes

/// The answer of `UploadServer/authorize` about one request that can begin an upload:
/// allow it as it is, allow it with a tighter limit and metadata of the application's
/// (``UploadGrant``), or refuse it.
public enum UploadAuthorization: Sendable, Equatable {
    /// The upload goes on to its receiver.
    case allow
    /// The upload goes on to its receiver, held to ``UploadGrant/maxBytes`` (413 past it,
    /// nothing stored) and carrying ``UploadGrant/metadata`` in its events.
    case allowWith(UploadGrant)
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
