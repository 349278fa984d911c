#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import NIOCore
import ResumableHTTP

/// What an ``UploadServer`` with an ``UploadURLSigner`` asks of each request before the
/// receivers see it. Every request that can begin an upload — a `POST` or `PUT` anywhere
/// but on an existing upload resource (`tusBasePath/ID`, `resumableBasePath/ID`): a
/// multipart form, a tus creation, a creation of the IETF draft — must carry a valid
/// signature for its method and path: without one it is answered 401, with one that does
/// not hold 403, before its body is read (and before a `100 Continue`). A signed limit
/// is held to: a declared length over it is answered 413 at once; a multipart body is
/// cut off with 413 at the first byte past it (nothing is stored); a resumable creation
/// must declare its length (tus `Upload-Length`; the draft's `Upload-Length`, or
/// `Upload-Complete: ?1` with `Content-Length`), which its receiver then holds the
/// upload to.
///
/// Requests on an existing upload resource (append, offset, cancel) are not signed: the
/// resource's URL, with its 128-bit random ID, is given only to the creator whose request
/// was authorized, and is the capability to go on with that upload, as tusd treats it.
/// Everything else (the upload page, the health endpoints, `OPTIONS`) stays open.
struct SignatureGate: Sendable {
    let signer: UploadURLSigner
    let clockSkew: Int64
    /// Which requests can begin an upload: those must be signed.
    let beginning: UploadBeginning

    /// Whether `request` must be signed.
    func requiresSignature(_ request: ReceiverRequest) -> Bool {
        beginning.uploadProtocol(of: request) != nil
    }

    /// Nil when `request` may go on (its body then limited as signed); else the answer
    /// that refuses it, which closes the connection when a body may follow unread.
    func check(_ request: inout ReceiverRequest, now: Int64 = Int64(Date().timeIntervalSince1970)) -> ReceiverResponse? {
        guard requiresSignature(request) else { return nil }
        let grant: SignedUploadGrant
        do {
            grant = try signer.verify(method: request.method.rawValue, target: request.target, now: now, clockSkew: clockSkew)
        } catch {
            var response = refusal(error.description, status: error == .missing ? .unauthorized : .forbidden, request: request)
            if error == .missing { response.headers[.wwwAuthenticate] = "FormPost-Signed-URL" }
            return response
        }
        guard let limit = grant.maxBytes else { return nil }
        return UploadByteLimit(beginning: beginning).hold(&request, to: limit, named: .signedMaxBytes,
                                                          setBy: "by its signed URL (\(UploadURLSigner.maxBytesParameter))")
    }

    private func refusal(_ message: String, status: HTTPResponse.Status, request: ReceiverRequest) -> ReceiverResponse {
        EarlyRefusal.response(message, status: status, request: request)
    }
}
