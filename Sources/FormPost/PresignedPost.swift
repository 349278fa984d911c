#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// An S3-compatible presigned POST: the URL and fields a service handed out. The fields
/// go first and the file last, as the service requires; 201 and 204 are success.
public struct PresignedPost: Sendable {
    /// The URL to post to.
    public let url: URL
    /// The signed fields, in the order given.
    public let fields: [(name: String, value: String)]

    /// Creates a presigned POST from the service's URL and fields.
    public init(url: URL, fields: [(name: String, value: String)]) {
        self.url = url
        self.fields = fields
    }

    /// The form: every signed field, then the file as `file`.
    public func form(fileAt path: String, filename: String? = nil, mimeType: String? = nil) throws -> MultipartForm {
        var form = MultipartForm()
        for field in fields { form.append(name: field.name, value: field.value) }
        try form.append(name: "file", fileAt: path, filename: filename, mimeType: mimeType)
        return form
    }

    #if os(watchOS)
    /// Uploads the file through `client` and checks the answer is 200, 201 or 204. (On
    /// watchOS FormPost has no default client: pass FormPostURLSession's `FormPostClient()`.)
    public func upload(fileAt path: String, with client: FormPostClient, progress: (@Sendable (UploadProgress) -> Void)? = nil) async throws -> UploadResponse {
        try await send(fileAt: path, with: client, progress: progress)
    }
    #else
    /// Uploads the file and checks the answer is 200, 201 or 204.
    public func upload(fileAt path: String, with client: FormPostClient = FormPostClient(), progress: (@Sendable (UploadProgress) -> Void)? = nil) async throws -> UploadResponse {
        try await send(fileAt: path, with: client, progress: progress)
    }
    #endif

    private func send(fileAt path: String, with client: FormPostClient, progress: (@Sendable (UploadProgress) -> Void)?) async throws -> UploadResponse {
        let response = try await client.upload(try form(fileAt: path), to: url, progress: progress)
        guard [200, 201, 204].contains(response.status) else {
            throw UploadError.unacceptableStatus(response.status, contentType: response.header("Content-Type"), bodyPrefix: response.bodyPrefix)
        }
        return response
    }
}
