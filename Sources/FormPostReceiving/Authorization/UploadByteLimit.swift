import HTTPTypes
import NIOCore
import ResumableHTTP

/// Holds a request that begins an upload to a byte limit known before its body is read —
/// a signed URL's (``UploadURLSigner``) or an authorization's (``UploadGrant/maxBytes``): a
/// declared length over it is answered 413 at once; a multipart body is cut off with 413
/// at the first byte past it (nothing is stored); a resumable creation must declare its
/// length (tus `Upload-Length`, so no deferred length and no final upload of a
/// concatenation; the draft's `Upload-Length`, or `Upload-Complete: ?1` with
/// `Content-Length`), which its receiver then holds the upload to.
struct UploadByteLimit: Sendable {
    /// The protocol the request begins its upload by (its ``ReceiverRoute/creation(_:)``).
    let beginning: UploadProtocol

    /// Nil when `request` may go on (its body then limited to `limit` bytes), else the
    /// answer that refuses it. `limitName` names the limit in the failure a body past it
    /// ends with; `setBy` says in the answer what sets it ("by its signed URL").
    func hold(_ request: inout ReceiverRequest, to limit: Int64, named limitName: ReceiverLimit, setBy: String) -> ReceiverResponse? {
        let tooLarge = "The upload exceeds the limit of \(limit) bytes set \(setBy)."
        if let length = request.headers[.contentLength].flatMap(Int64.init), length > limit {
            return EarlyRefusal.response(tooLarge, status: .contentTooLarge, request: request)
        }
        switch beginning {
        case .tus:
            // A deferred length, or a final upload's (the sum of its partial uploads), is
            // known only later: held to a limit, a creation declares it now.
            guard let length = request.headers[.uploadLength].flatMap(Int64.init) else {
                return EarlyRefusal.response("The upload is limited to \(limit) bytes, set \(setBy): declare its length (Upload-Length) when creating it; "
                                             + "a deferred length and a concatenation are not taken under a limit.",
                                             status: .lengthRequired, request: request)
            }
            return length > limit ? EarlyRefusal.response(tooLarge, status: .contentTooLarge, request: request) : nil
        case .ietf:
            let completes = DraftInterop.completes(request.headers, version: DraftInterop.version(of: request.headers)) == true
            let declared = StructuredField.integer(request.headers[.uploadLength]) ?? (completes ? request.headers[.contentLength].flatMap(Int64.init) : nil)
            guard let declared else {
                return EarlyRefusal.response("The upload is limited to \(limit) bytes, set \(setBy): declare its length (Upload-Length) when creating it.",
                                             status: .lengthRequired, request: request)
            }
            return declared > limit ? EarlyRefusal.response(tooLarge, status: .contentTooLarge, request: request) : nil
        case .multipart:
            request.body = ReceiverRequestBody(WatchedBody(base: request.body) { _, total in
                guard total <= limit else { throw ReceiverFailure.limitExceeded(limitName, value: limit) }
            })
            return nil
        }
    }
}
