import FormPostReceiving

/// The JSON an ``UploadAuthorizationHook`` posts about one request:
/// `{"type":"pre-create","upload":{"protocol":…,"method":…,"path":…,"query":…,"client":…,"headers":{name:[values]}}}`.
struct HookRequestBody: Encodable {
    /// What the upload's field `upload` holds.
    struct Upload: Encodable {
        let `protocol`: UploadProtocol
        let method: String
        let path: String
        let query: String
        let client: String?
        let headers: [String: [String]]
    }

    let type = "pre-create"
    let upload: Upload

    /// The body about `request`: header names lowercased, each name's values in the order sent.
    init(_ request: UploadAuthorizationRequest) {
        var headers: [String: [String]] = [:]
        for field in request.headerFields { headers[field.name.canonicalName, default: []].append(field.value) }
        upload = Upload(protocol: request.uploadProtocol, method: request.method, path: request.path, query: request.query,
                        client: request.clientAddress?.ipAddress, headers: headers)
    }
}
