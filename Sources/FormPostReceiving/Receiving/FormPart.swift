import Multipart

/// One part of a form read by ``FormParts``: its headers, and its content as a stream.
public struct FormPart {
    /// The part's headers, with its form-data name and filename decoded.
    public let head: PartHead
    /// The content, as the buffers arrive; read it before asking for the next part.
    public let body: FormPartBody

    /// The field name.
    public var name: String { head.name }
    /// The filename, for a file part.
    public var filename: String? { head.filename }
    /// The `Content-Type` header's value, if any.
    public var contentType: String? { head.contentType }
}
