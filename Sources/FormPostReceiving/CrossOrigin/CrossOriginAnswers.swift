import HTTPTypes

/// How ``UploadRoutes`` applies a ``CrossOriginPolicy`` to a request and its answer.
struct CrossOriginAnswers: Sendable {
    let policy: CrossOriginPolicy

    static let origin = HTTPField.Name("Origin")!
    static let requestMethod = HTTPField.Name("Access-Control-Request-Method")!
    static let allowOrigin = HTTPField.Name("Access-Control-Allow-Origin")!
    static let allowMethods = HTTPField.Name("Access-Control-Allow-Methods")!
    static let allowHeaders = HTTPField.Name("Access-Control-Allow-Headers")!
    static let exposeHeaders = HTTPField.Name("Access-Control-Expose-Headers")!
    static let maxAge = HTTPField.Name("Access-Control-Max-Age")!
    static let vary = HTTPField.Name("Vary")!
    /// Every method the receivers take.
    static let methods = "POST, PUT, PATCH, HEAD, GET, DELETE, OPTIONS"

    /// The answer to `request` when it is a preflight (an `OPTIONS` with `Origin` and
    /// `Access-Control-Request-Method`): 204 with the policy's fields for an allowed origin,
    /// 403 with none for another. Nil for any other request.
    func preflight(_ request: ReceiverRequest) -> ReceiverResponse? {
        guard request.method == .options, let origin = request.headers[Self.origin], request.headers[Self.requestMethod] != nil else { return nil }
        guard let allowed = policy.allowOrigin(origin) else {
            return ReceiverResponse(status: .forbidden, headers: [Self.vary: "Origin"])
        }
        return ReceiverResponse(status: .noContent, headers: [
            Self.allowOrigin: allowed, Self.allowMethods: Self.methods, Self.allowHeaders: policy.allowedHeaders.joined(separator: ", "),
            Self.maxAge: String(policy.maxAge.components.seconds), Self.vary: "Origin",
        ])
    }

    /// `response` to `request`, with `Access-Control-Allow-Origin` and the exposed fields
    /// when the request came from an allowed origin.
    func answer(_ response: ReceiverResponse, to request: ReceiverRequest) -> ReceiverResponse {
        guard let origin = request.headers[Self.origin] else { return response }
        var answered = response
        answered.headers.append(HTTPField(name: Self.vary, value: "Origin"))
        guard let allowed = policy.allowOrigin(origin) else { return answered }
        answered.headers[Self.allowOrigin] = allowed
        answered.headers[Self.exposeHeaders] = policy.exposedHeaders.joined(separator: ", ")
        return answered
    }
}
