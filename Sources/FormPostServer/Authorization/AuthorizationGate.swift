import HTTPTypes
import Hummingbird
import Logging

/// Asks ``UploadServer/authorize`` about each request that can begin an upload, before its
/// body is read, and answers the refused ones.
struct AuthorizationGate: Sendable {
    let beginning: UploadBeginning
    let authorize: @Sendable (UploadAuthorizationRequest) async -> UploadAuthorization
    let logger: Logger

    /// The message a client gets when the authorization could not be decided.
    static let unavailableMessage = "The upload cannot be authorized now: the authorization service is unavailable. Try again later."

    /// Nil when `request` may go on (held to what was granted, which `context` then
    /// carries); else the answer that refuses it.
    func check(_ request: inout Request, context: inout ReceiverRequestContext) async -> Response? {
        guard let uploadProtocol = beginning.uploadProtocol(of: request) else { return nil }
        let question = UploadAuthorizationRequest(uploadProtocol: uploadProtocol, method: request.method.rawValue, path: request.uri.path,
                                                  query: request.uri.query ?? "", headerFields: request.headers, clientAddress: context.clientAddress)
        let client = ClientAddress.logged(context)
        switch await authorize(question) {
        case .allow:
            return nil
        case .allowWith(let grant):
            context.grant = grant
            guard let limit = grant.maxBytes else { return nil }
            guard let refusal = UploadByteLimit(beginning: beginning).hold(&request, to: limit, named: .authorizedMaxBytes, setBy: "by its authorization",
                                                                          channel: context.channel) else { return nil }
            RequestLogLine().log(request, answered: refusal, client: client, details: ["refused": "larger than authorized"], to: logger)
            return refusal
        case .deny(let status, let message):
            let answered: HTTPResponse.Status = (400..<500).contains(status.code) ? status : .forbidden
            let response = EarlyRefusal.response(message, status: answered, request: request, channel: context.channel)
            RequestLogLine().log(request, answered: response, client: client, details: ["refused": "upload not authorized"], to: logger)
            return response
        case .unavailable(let cause):
            logger.error("\(request.method) \(request.uri.path) 503 client=\(client): the upload could not be authorized: \(cause)")
            var response = EarlyRefusal.response(Self.unavailableMessage, status: .serviceUnavailable, request: request, channel: context.channel)
            response.headers[.retryAfter] = String(UploadAuthorization.retryAfterSeconds)
            RequestLogLine().log(request, answered: response, client: client, details: ["refused": "authorization unavailable"], to: logger)
            return response
        }
    }
}
