import Multipart

/// A request's body: a plan of segments and its content type. A multipart form, raw
/// bytes, a file or a stream are all plans, so every body is sent, re-sent on a retry or
/// a redirect, and checked the same way.
public struct RequestBody: Sendable {
    /// The body's segments.
    public let plan: BodyPlan
    /// The `Content-Type` to send.
    public let contentType: String

    /// Creates a body from a plan.
    public init(plan: BodyPlan, contentType: String) {
        self.plan = plan
        self.contentType = contentType
    }

    /// The exact length when known; nil means chunked transfer.
    public var contentLength: Int64? { plan.contentLength }

    /// Raw bytes as the whole body.
    public static func bytes(_ bytes: [UInt8], contentType: String = MIMEType.octetStream) -> RequestBody {
        RequestBody(plan: BodyPlan(boundary: .random(), segments: [.bytes(bytes)]), contentType: contentType)
    }

    /// A file as the whole body; checked now, its size recorded, its content read when sent.
    /// The content type defaults to the file name's MIME type.
    public static func file(path: String, contentType: String? = nil) throws -> RequestBody {
        var form = MultipartForm()
        try form.append(name: "file", fileAt: path)
        guard let region = try form.plan().segments.compactMap({ segment -> FileRegion? in
            if case .file(let region) = segment { return region }
            return nil
        }).first else { throw MultipartError.fileNotFound(path: path) }
        let type = contentType ?? MIMEType.forFilename(path)
        return RequestBody(plan: BodyPlan(boundary: .random(), segments: [.file(region)]), contentType: type)
    }

    /// A multipart form.
    public static func form(_ form: MultipartForm) throws -> RequestBody {
        let plan = try form.plan()
        return RequestBody(plan: plan, contentType: plan.contentType)
    }
}
