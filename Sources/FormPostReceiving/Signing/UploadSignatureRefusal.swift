/// Why a request's signed upload URL is refused: a request with no signature is answered
/// 401, one with a signature that does not hold 403.
public enum UploadSignatureRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL carries no `X-FormPost-Signature`.
    case missing
    /// A parameter of the signature is not as the scheme writes it; the text says which.
    case malformed(String)
    /// The signature is not that of this method, path, expiry and limit under the key:
    /// forged, altered, or made for another path or method.
    case mismatch
    /// The URL expired at `expires`, more than the clock skew allowed before `now` (Unix seconds).
    case expired(expires: Int64, now: Int64)
    /// The URL expires at `expires`, further from `now` than ``UploadURLSigner/maxLifetime``.
    case tooLong(expires: Int64, now: Int64)
    /// A request on a resumable upload begun with a signed URL carries no
    /// `X-FormPost-Upload-Signature`: only the URL its creation answered (`Location`) does.
    case uploadTokenMissing
    /// The upload's token is not this upload's under the key, or has expired.
    case uploadTokenInvalid

    /// The refusal as a sentence a client can act on.
    public var description: String {
        switch self {
        case .missing:
            "This upload needs a signed URL: the request has no \(UploadURLSigner.signatureParameter) query parameter."
        case .malformed(let detail):
            "The signed URL is malformed: \(detail)."
        case .mismatch:
            "The signature does not match this method, path, expiry and limit: the URL was altered or signed for another request."
        case .expired(let expires, let now):
            "The signed URL expired \(now - expires) seconds ago (at Unix time \(expires))."
        case .tooLong(let expires, let now):
            "The signed URL expires \(expires - now) seconds from now: a signed URL lives at most \(UploadURLSigner.maxLifetime) seconds (7 days)."
        case .uploadTokenMissing:
            "This upload goes on only at the URL its creation answered (Location): the request has no \(UploadURLSigner.uploadSignatureParameter) query parameter."
        case .uploadTokenInvalid:
            "The upload's token does not hold: it was altered, belongs to another upload, or has expired."
        }
    }
}
