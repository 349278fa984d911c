/// What one request to an `UploadServer` is, decided once by ``ReceiverRouter`` before
/// anything else looks at it: the router sends it on by this, and every gate (the signed
/// URL, the authorization hook, byte limits, admission) decides by this, so that no two
/// of them can take one request for different things.
enum ReceiverRoute: Equatable, Sendable {
    /// `GET` or `HEAD` of `/healthz` or `/readyz`.
    case health
    /// `GET` or `HEAD` of `/metrics`.
    case metrics
    /// `GET` or `HEAD` of `/`, the upload page.
    case page
    /// A request that begins an upload by `UploadProtocol`: a `POST` or `PUT` of a
    /// multipart form anywhere that is no other route's, a `POST` or `PUT` on the tus base
    /// path (with or without one trailing `/`), or one that asks for a resumable upload of
    /// the IETF draft outside its base path. Signed, authorized and held to its limits.
    case creation(UploadProtocol)
    /// A request on an existing upload of `UploadProtocol` (tus or the draft), `id`: it
    /// goes on with an upload allowed when it began (and, with signed URLs, must carry the
    /// upload's token).
    case upload(UploadProtocol, id: String)
    /// Any other request to a resumable receiver of `UploadProtocol`: `OPTIONS`, or a
    /// method the base path does not take. The receiver answers it; it begins nothing.
    case resumable(UploadProtocol)
    /// A path under the base path of a resumable receiver of `UploadProtocol` that names
    /// no upload: that receiver answers 404.
    case notFound(UploadProtocol)
    /// Anything else, answered by the multipart receiver (405 for a method it does not take).
    case other

    /// The resumable receiver that answers the request (`tus` or `ietf`), or nil when the
    /// request is not one for a resumable receiver.
    var resumableReceiver: UploadProtocol? {
        switch self {
        case .creation(let uploadProtocol), .upload(let uploadProtocol, _), .resumable(let uploadProtocol), .notFound(let uploadProtocol):
            uploadProtocol == .multipart ? nil : uploadProtocol
        case .health, .metrics, .page, .other:
            nil
        }
    }

    /// The protocol of the upload the request begins, or nil when it begins none.
    var beginning: UploadProtocol? {
        if case .creation(let uploadProtocol) = self { return uploadProtocol }
        return nil
    }
}
