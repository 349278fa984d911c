#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// Builds requests the AFNetworking way: default header fields, authorization, and
/// parameters in the URL's query for GET, HEAD and DELETE (configurable) or as the body
/// otherwise, encoded as ``parameterEncoding`` says.
///
///     var serializer = RequestSerializer(parameterEncoding: .json())
///     serializer.authorize(bearerToken: token)
///     let search = try serializer.request(.get, url, parameters: ["q": "swift", "tags": ["a", "b"]])
///     // GET /search?q=swift&tags%5B%5D=a&tags%5B%5D=b
///     let create = try serializer.request(.post, url, parameters: ["name": "Ann"])
///     // POST, Content-Type: application/json, body {"name":"Ann"}
public struct RequestSerializer: Sendable {
    /// Header fields added to every request unless the request sets the same name;
    /// `Accept-Language` and `User-Agent` by default (``StandardHeaders``).
    public var defaultHeaders: HTTPFields
    /// The methods whose parameters go in the URL's query.
    public var methodsEncodingParametersInURI: Set<RequestMethod> = [.get, .head, .delete]
    /// How parameters become a body for the other methods.
    public var parameterEncoding: ParameterEncoding

    /// Creates a serializer.
    public init(parameterEncoding: ParameterEncoding = .urlEncoded, defaultHeaders: HTTPFields = StandardHeaders.defaults) {
        self.parameterEncoding = parameterEncoding
        self.defaultHeaders = defaultHeaders
    }

    /// Sets (or with nil removes) a default header field.
    public mutating func setHeader(_ name: HTTPField.Name, to value: String?) {
        defaultHeaders[name] = value
    }

    /// Sends HTTP Basic credentials: `Authorization: Basic base64(username:password)`.
    public mutating func authorize(username: String, password: String) {
        setHeader(.authorization, to: "Basic " + Data("\(username):\(password)".utf8).base64EncodedString())
    }

    /// Sends a bearer token: `Authorization: Bearer token`.
    public mutating func authorize(bearerToken: String) {
        setHeader(.authorization, to: "Bearer " + bearerToken)
    }

    /// Stops sending an `Authorization` field.
    public mutating func removeAuthorization() {
        setHeader(.authorization, to: nil)
    }

    /// A request with `parameters` in the query or the body, as `method` says.
    ///
    /// A caller's `Content-Type` in `headers` replaces the encoding's own.
    /// - Throws: ``UploadError/invalidParameters(_:)`` for values the encoding cannot hold.
    public func request(
        _ method: RequestMethod, _ url: URL, parameters: [String: FormValue]? = nil, headers: HTTPFields = [:]
    ) throws -> FormPostRequest {
        guard let parameters else { return request(method, url, body: nil, headers: headers) }
        if methodsEncodingParametersInURI.contains(method) {
            return request(method, try Self.url(url, appendingQuery: URLEncodedForm.encode(parameters)), body: nil, headers: headers)
        }
        return encodedRequest(method, url, bytes: try parameterEncoding.encode(parameters), headers: headers)
    }

    /// A request with an `Encodable` value as its parameters: flattened into the query for
    /// the methods that take them there, otherwise encoded as ``parameterEncoding`` says.
    public func request(
        _ method: RequestMethod, _ url: URL, encoding value: some Encodable, headers: HTTPFields = [:]
    ) throws -> FormPostRequest {
        if methodsEncodingParametersInURI.contains(method) {
            let parameters = try ParameterEncoding.parameters(of: value)
            return request(method, try Self.url(url, appendingQuery: URLEncodedForm.encode(parameters)), body: nil, headers: headers)
        }
        return encodedRequest(method, url, bytes: try parameterEncoding.encode(value), headers: headers)
    }

    /// A `multipart/form-data` request: `parameters` first as text fields (flattened as
    /// `FormValue` says), then whatever `build` appends.
    ///
    /// - Throws: ``UploadError/methodCannotCarryBody(_:)`` for GET and HEAD, and any error of `build`.
    public func multipartRequest(
        _ method: RequestMethod = .post, _ url: URL, parameters: [String: FormValue]? = nil, headers: HTTPFields = [:],
        form build: (inout MultipartForm) throws -> Void = { _ in }
    ) throws -> FormPostRequest {
        var form = MultipartForm()
        if let parameters { form.append(parameters: parameters) }
        try build(&form)
        return try multipartRequest(method, url, form: form, headers: headers)
    }

    /// A `multipart/form-data` request for `form`; its `Content-Type` (with the boundary)
    /// always comes from the form.
    ///
    /// - Throws: ``UploadError/methodCannotCarryBody(_:)`` for GET and HEAD.
    public func multipartRequest(_ method: RequestMethod = .post, _ url: URL, form: MultipartForm, headers: HTTPFields = [:]) throws -> FormPostRequest {
        guard method != .get, method != .head else { throw UploadError.methodCannotCarryBody(method) }
        return request(method, url, body: try .form(form), headers: headers.filter { $0.name != .contentType })
    }

    /// A request with `body` as it is (raw bytes, a file, a stream, a form, or none).
    /// A caller's `Content-Type` in `headers` replaces the body's own.
    public func request(_ method: RequestMethod, _ url: URL, body: RequestBody?, headers: HTTPFields = [:]) -> FormPostRequest {
        var fields = defaultHeaders
        let overridden = Set(headers.map(\.name))
        fields.removeAll { overridden.contains($0.name) }
        fields.append(contentsOf: headers)
        var body = body
        if let contentType = fields[.contentType], let given = body {
            body = RequestBody(plan: given.plan, contentType: contentType)
        }
        if body != nil { fields[.contentType] = nil }
        return FormPostRequest(url: url, method: method, headers: fields, body: body)
    }

    private func encodedRequest(_ method: RequestMethod, _ url: URL, bytes: [UInt8], headers: HTTPFields) -> FormPostRequest {
        request(method, url, body: .bytes(bytes, contentType: parameterEncoding.contentType), headers: headers)
    }

    /// `url` with `query` appended to its query (after `&` when it has one already).
    static func url(_ url: URL, appendingQuery query: String) throws -> URL {
        guard !query.isEmpty else { return url }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { throw UploadError.invalidURL(url.absoluteString) }
        let existing = components.percentEncodedQuery ?? ""
        components.percentEncodedQuery = existing.isEmpty ? query : existing + "&" + query
        guard let result = components.url else { throw UploadError.invalidURL(url.absoluteString) }
        return result
    }
}
