import FormPostDigests
import Multipart

/// Tokens that bind the later requests of a resumable upload to the upload that a signed
/// URL began: with signing on, the `Location` a tus or IETF-draft creation answers carries
/// two query parameters,
///
/// | parameter | value |
/// | --- | --- |
/// | `X-FormPost-Upload-Expires` | the Unix time (seconds) after which the token is refused: the upload's creation plus its receiver's expiry |
/// | `X-FormPost-Upload-Signature` | HMAC-SHA256, under the signing key, of `FORMPOST-UPLOAD-HMAC-SHA256\nID\nEXPIRES`, 64 lowercase hex digits |
///
/// and every later request on the upload (`HEAD`, `PATCH`, `GET`, `DELETE`, `OPTIONS`)
/// must carry them: without them it is answered 401, with a token that is not this upload's
/// or has expired 403. So the upload's URL alone (its ID, written in a log or guessed) is
/// not enough to go on with it, read it or end it.
extension UploadURLSigner {
    /// The query parameter of an upload token's expiry, in Unix seconds.
    public static let uploadExpiresParameter = "X-FormPost-Upload-Expires"
    /// The query parameter of an upload token's code: 64 lowercase hex digits.
    public static let uploadSignatureParameter = "X-FormPost-Upload-Signature"
    /// The first line of every upload token's string to sign.
    public static let uploadScheme = "FORMPOST-UPLOAD-HMAC-SHA256"

    /// The exact string signed for the upload `id` until `expires`.
    public static func uploadStringToSign(id: String, expires: Int64) -> String {
        [uploadScheme, id, String(expires)].joined(separator: "\n")
    }

    /// `location` (the upload's path, `/files/ID`) with the token of the upload `id` until
    /// `expires` appended as its query.
    public func uploadLocation(_ location: String, id: String, expires: Int64) -> String {
        let code = Hexadecimal.string(authenticationCode(for: Self.uploadStringToSign(id: id, expires: expires)))
        let separator = location.contains("?") ? "&" : "?"
        return location + separator + "\(Self.uploadExpiresParameter)=\(expires)&\(Self.uploadSignatureParameter)=\(code)"
    }

    /// Verifies that `target` (a request's path and query, as sent) carries a token of the
    /// upload `id` that has not expired at `now` by more than `clockSkew` seconds.
    ///
    /// - Throws: ``UploadSignatureRefusal/uploadTokenMissing`` without a token;
    ///   ``UploadSignatureRefusal/uploadTokenInvalid`` for one that does not hold (altered,
    ///   another upload's, expired); ``UploadSignatureRefusal/malformed(_:)`` for a
    ///   parameter given twice.
    public func verifyUpload(id: String, target: String, now: Int64, clockSkew: Int64 = defaultClockSkew) throws(UploadSignatureRefusal) {
        let (_, values) = try Self.parameters(of: target, named: [Self.uploadExpiresParameter, Self.uploadSignatureParameter])
        guard let codeText = values[Self.uploadSignatureParameter] else { throw .uploadTokenMissing }
        guard let code = Self.bytes(hex: codeText), let expiresText = values[Self.uploadExpiresParameter],
              let expires = Self.decimal(expiresText) else { throw .uploadTokenInvalid }
        guard isValid(code, for: Self.uploadStringToSign(id: id, expires: expires)) else { throw .uploadTokenInvalid }
        guard now <= expires || now - expires <= clockSkew else { throw .uploadTokenInvalid }
    }
}
