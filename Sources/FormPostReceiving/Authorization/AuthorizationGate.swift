import HTTPTypes
import NIOCore
import Logging

/// Asks `UploadServer/authorize` about each request that begins an upload (its
/// ``ReceiverRoute`` is a creation), before its body is read, and answers the refused ones.
struct AuthorizationGate: Sendable {
    let authorize: @Sendable (UploadAuthorizationRequest) async -> UploadAuthorization
    let logger: Logger

    /// The message a client gets when the authorization could not be decided.
    static let unavailableMessage = "The upload cannot be authorized now: the authorization service is unavailable. Try again later."

    /// Nil when `request` may go on (held to what was granted, which its
    /// ``ReceiverRequest/grant`` then carries); else the answer that refuses it.
    func check(_ request: inout ReceiverRequest, route: ReceiverRoute) async -> ReceiverResponse? {
        guard let uploadProtocol = route.beginning else { return nil }
        let question = UploadAuthorizationRequest(uploadProtocol: uploadProtocol, method: request.method.rawValue, path: request.path,
                                                  query: request.query ?? "", headerFields: request.headers, clientAddress: request.clientAddress)
        switch await authorize(question) {
        case .allow:
            return nil
        case .allowWith(let grant):
            request.grant = grant
            guard let limit = grant.maxBytes else { return nil }
            guard let refusal = UploadByteLimit(beginning: uploadProtocol).hold(&request, to: limit, named: .authorizedMaxBytes, setBy: "by its authorization") else { return nil }
            RequestLogLine().log(request, answered: refusal, details: ["refused": "larger than authorized"], to: logger)
            return refusal
        case .deny(let status, let message):
            let answered: HTTPResponse.Status = (400..<500).contains(status.code) ? status : .forbidden
            let response = EarlyRefusal.response(message, status: answered, request: request)
            RequestLogLine().log(request, answered: response, details: ["refused": "upload not authorized"], to: logger)
            return response
        case .unavailable(let cause):
            logger.error("\(request.method) \(request.loggedPath) 503 client=\(request.loggedClient): the upload could not be authorized: \(RequestLogLine.redacting("\(cause)"))")
            var response = EarlyRefusal.response(Self.unavailableMessage, status: .serviceUnavailable, request: request)
            response.headers[.retryAfter] = String(UploadAuthorization.retryAfterSeconds)
            RequestLogLine().log(request, answered: response, details: ["refused": "authorization unavailable"], to: logger)
            return response
        }
    }
}
