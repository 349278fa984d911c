#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
        single(try PartBody.file(path: path), contentType: contentType ?? MIMEType.forFilename(path))
    }

    /// The file at a `file:` URL as the whole body, as ``file(path:contentType:)``.
    public static func file(url: URL, contentType: String? = nil) throws -> RequestBody {
        try file(path: url.path, contentType: contentType)
    }

    /// A stream as the whole body; `makeStream` is called anew each time the body is sent.
    /// Without a `length` the body goes chunked; with one, a stream that yields more or
    /// fewer bytes stops the upload.
    public static func stream<S: AsyncSequence & Sendable>(
        length: Int64?, contentType: String = MIMEType.octetStream, _ makeStream: @escaping @Sendable () -> S
    ) -> RequestBody where S.Element == [UInt8] {
        single(.stream(length: length, makeStream), contentType: contentType)
    }

    /// A body made of one file's or stream's content, without multipart framing: the
    /// plan of a one-part form, less its delimiter and header bytes.
    package static func single(_ content: PartBody, contentType: String) -> RequestBody {
        var form = MultipartForm()
        form.append(headers: [], body: content)
        let segments = (try? form.plan().segments) ?? []
        let body = segments.filter { if case .bytes = $0 { return false } else { return true } }
        return RequestBody(plan: BodyPlan(boundary: form.boundary, segments: body), contentType: contentType)
    }

    /// A multipart form.
    public static func form(_ form: MultipartForm) throws -> RequestBody {
        let plan = try form.plan()
        return RequestBody(plan: plan, contentType: plan.contentType)
    }
}
