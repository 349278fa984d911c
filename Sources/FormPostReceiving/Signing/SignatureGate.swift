#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import NIOCore

/// What an `UploadServer` with an ``UploadURLSigner`` asks of each request before the
/// receivers see it, by the request's ``ReceiverRoute``:
///
/// - A request that begins an upload (a multipart form, a tus creation, a creation of the
///   IETF draft) must carry a valid signature for its method and path: without one it is
///   answered 401, with one that does not hold 403, before its body is read (and before a
///   `100 Continue`). A signed limit is held to: a declared length over it is answered
///   413 at once; a multipart body is cut off with 413 at the first byte past it (nothing
///   is stored); a resumable creation must declare its length (tus `Upload-Length`; the
///   draft's `Upload-Length`, or `Upload-Complete: ?1` with `Content-Length`), which its
///   receiver then holds the upload to.
/// - A resumable upload so begun is answered a `Location` (in the `201`, in the draft's
///   `104`, and in every later answer that names it) that carries the upload's token
///   (``UploadURLSigner/uploadLocation(_:id:expires:)``), valid for the receiver's expiry
///   or 7 days, whichever is longer, from the answer; every later request on it must carry
///   such a token: 401 without, 403 with one that does not hold.
///
/// Everything else (the upload page, the health endpoints, `OPTIONS` of a base path, a
/// 404) needs no signature.
struct SignatureGate: Sendable {
    let signer: UploadURLSigner
    let clockSkew: Int64

    /// Nil when `request`, of `route`, may go on (its body then limited as signed); else
    /// the answer that refuses it, which closes the connection when a body may follow unread.
    func check(_ request: inout ReceiverRequest, route: ReceiverRoute, now: Int64 = Int64(Date().timeIntervalSince1970)) -> ReceiverResponse? {
        switch route {
        case .creation(let uploadProtocol):
            let grant: SignedUploadGrant
            do {
                grant = try signer.verify(method: request.method.rawValue, target: request.target, now: now, clockSkew: clockSkew)
            } catch {
                return refusal(error, request: request)
            }
            guard let limit = grant.maxBytes else { return nil }
            return UploadByteLimit(beginning: uploadProtocol).hold(&request, to: limit, named: .signedMaxBytes,
                                                                   setBy: "by its signed URL (\(UploadURLSigner.maxBytesParameter))")
        case .upload(_, let id):
            do {
                try signer.verifyUpload(id: id, target: request.target, now: now, clockSkew: clockSkew)
                return nil
            } catch {
                return refusal(error, request: request)
            }
        case .health, .metrics, .page, .resumable, .notFound, .other:
            return nil
        }
    }

    /// `response`, an answer of a resumable receiver, with the token of the upload its
    /// `Location` names (valid `lifetime` from now) in that `Location`; and `request` with
    /// a connection that adds it to the `Location` of an interim answer.
    func bindingLocations(of request: inout ReceiverRequest, lifetime: Duration) -> @Sendable (ReceiverResponse) -> ReceiverResponse {
        let expires = Int64(Date().timeIntervalSince1970) + lifetime.components.seconds + 1
        let signer = self.signer
        let bind: @Sendable (String) -> String = { location in
            guard let id = location.split(separator: "/").last.map(String.init), UploadStore.isValidID(id[...]) else { return location }
            return signer.uploadLocation(location, id: id, expires: expires)
        }
        if let connection = request.connection { request.connection = LocationBindingConnection(base: connection, bind: bind) }
        return { response in
            var bound = response
            bound.headers = LocationBindingConnection.binding(response.headers, with: bind)
            return bound
        }
    }

    private func refusal(_ error: UploadSignatureRefusal, request: ReceiverRequest) -> ReceiverResponse {
        let missing = error == .missing || error == .uploadTokenMissing
        var response = EarlyRefusal.response(error.description, status: missing ? .unauthorized : .forbidden, request: request)
        if missing { response.headers[.wwwAuthenticate] = "FormPost-Signed-URL" }
        return response
    }
}
