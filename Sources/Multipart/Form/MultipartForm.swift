#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `multipart/form-data` form: parts in the order they were appended, and a boundary.
///
/// Appending records what the body will contain; it reads no file content. Call
/// ``plan()`` for the body's segments and encoders. With boundary `B`, a form with a
/// field `a=1` and a file `f.txt` holding `hi` produces exactly:
///
///     --B\r\n
///     Content-Disposition: form-data; name="a"\r\n
///     \r\n
///     1\r\n
///     --B\r\n
///     Content-Disposition: form-data; name="file"; filename="f.txt"\r\n
///     Content-Type: text/plain\r\n
///     \r\n
///     hi\r\n
///     --B--\r\n
public struct MultipartForm: Sendable {
    /// The boundary; a random one may be replaced when appended content contains its
    /// delimiter. Setting it changes only the delimiter lines of the body (a resumed upload
    /// sets the one of the run it resumes, ``Boundary/init(resuming:)``, to produce the same bytes).
    public var boundary: Boundary
    /// The parts, in the order appended.
    public private(set) var parts: [Part] = []

    /// Creates an empty form with a random boundary, or with `boundary`.
    public init(boundary: Boundary = .random()) {
        self.boundary = boundary
    }

    /// The request's `Content-Type`: `multipart/form-data; boundary=…`.
    public var contentType: String { boundary.contentType }

    /// The exact byte count of the encoded body, or nil when a stream part has no declared length.
    public var contentLength: Int64? {
        // CRLF `--B` CRLF opens each part but the first, which lacks the leading CRLF;
        // CRLF `--B--` CRLF closes, without its CRLF when the form is empty. Either way the
        // closing line and the first part's missing CRLF add up to `--B--` CRLF.
        let boundaryLength = Int64(boundary.value.utf8.count)
        var total = boundaryLength + 6
        for part in parts {
            guard let length = part.body.length else { return nil }
            total += boundaryLength + 6 + Int64(part.headerBlock.count) + length
        }
        return total
    }

    /// Appends a part with caller-supplied `headers` and `body`, written exactly as given.
    ///
    ///     --B\r\n
    ///     <each header>\r\n
    ///     \r\n
    ///     <body>
    public mutating func append(headers: [HeaderField], body: PartBody) {
        parts.append(Part(headers: headers, body: body))
        if case .bytes(let bytes) = body.storage, boundary.isRandom, Self.contains(bytes, delimiter: boundary.delimiter) {
            pickBoundaryAbsentFromContent()
        }
    }

    /// Appends a text field. `append(name: "title", value: "Hi")` writes:
    ///
    ///     Content-Disposition: form-data; name="title"\r\n
    ///     \r\n
    ///     Hi
    public mutating func append(name: String, value: String) {
        append(headers: Self.headers(name: name, filename: nil, mimeType: nil, extra: []), body: .bytes(Array(value.utf8)))
    }

    /// Appends bytes as a part. With a `filename`, the part is a file part and its type
    /// defaults to the filename's MIME type; without one, `Content-Type` is written only
    /// when `mimeType` is given. `append(name: "d", bytes: [1], filename: "a.bin")` writes:
    ///
    ///     Content-Disposition: form-data; name="d"; filename="a.bin"\r\n
    ///     Content-Type: application/octet-stream\r\n
    ///     \r\n
    ///     \u{01}
    public mutating func append(name: String, bytes: [UInt8], filename: String? = nil, mimeType: String? = nil, headers extra: [HeaderField] = []) {
        let type = mimeType ?? filename.map(MIMEType.forFilename)
        append(headers: Self.headers(name: name, filename: filename, mimeType: type, extra: extra), body: .bytes(bytes))
    }

    /// Appends `data` as a part (copied once); otherwise as ``append(name:bytes:filename:mimeType:headers:)``.
    public mutating func append(name: String, data: some DataProtocol, filename: String? = nil, mimeType: String? = nil, headers extra: [HeaderField] = []) {
        append(name: name, bytes: Array(data), filename: filename, mimeType: mimeType, headers: extra)
    }

    /// Appends the file at `path`. The filename defaults to the path's last component and
    /// the type to that name's MIME type. The file is checked now and its size recorded;
    /// its content is read only when the body is produced.
    /// `append(name: "doc", fileAt: "/tmp/r.pdf")` writes:
    ///
    ///     Content-Disposition: form-data; name="doc"; filename="r.pdf"\r\n
    ///     Content-Type: application/pdf\r\n
    ///     \r\n
    ///     <the file's bytes>
    ///
    /// - Throws: ``MultipartError/fileNotFound(path:)``, ``MultipartError/notARegularFile(path:)``,
    ///   ``MultipartError/fileNotReadable(path:errno:)``.
    public mutating func append(name: String, fileAt path: String, filename: String? = nil, mimeType: String? = nil, headers extra: [HeaderField] = []) throws {
        let body = try PartBody.file(path: path)
        let filename = filename ?? Self.lastComponent(of: path)
        let type = mimeType ?? MIMEType.forFilename(filename)
        append(headers: Self.headers(name: name, filename: filename, mimeType: type, extra: extra), body: body)
    }

    /// Appends the file at a `file:` URL, as ``append(name:fileAt:filename:mimeType:headers:)``.
    public mutating func append(name: String, fileURL: URL, filename: String? = nil, mimeType: String? = nil, headers extra: [HeaderField] = []) throws {
        try append(name: name, fileAt: fileURL.path, filename: filename ?? fileURL.lastPathComponent, mimeType: mimeType, headers: extra)
    }

    /// Appends a stream part whose content `makeStream` produces anew each time the body is
    /// produced. With a `filename`, the type defaults to its MIME type; without either,
    /// no `Content-Type` is written. A nil `length` makes the form's length unknown.
    public mutating func append<S: AsyncSequence & Sendable>(
        name: String, length: Int64?, filename: String? = nil, mimeType: String? = nil, headers extra: [HeaderField] = [],
        stream makeStream: @escaping @Sendable () -> S
    ) where S.Element == [UInt8] {
        let type = mimeType ?? filename.map(MIMEType.forFilename)
        append(headers: Self.headers(name: name, filename: filename, mimeType: type, extra: extra), body: .stream(length: length, makeStream))
    }

    /// Appends nested parameters as text fields, flattened the AFNetworking way (see ``FormValue``):
    /// `["user": ["name": "Ann"], "tags": ["a", "b"]]` becomes the fields
    /// `tags[]=a`, `tags[]=b`, `user[name]=Ann` — dictionary keys sorted, arrays as `key[]`.
    public mutating func append(parameters: [String: FormValue]) {
        for pair in FormValue.dictionary(parameters).flattened() {
            append(headers: Self.headers(name: pair.name, filename: nil, mimeType: nil, extra: []), body: .bytes(pair.value))
        }
    }

    /// Appends any `Encodable` value flattened as ``append(parameters:)`` does.
    /// - Throws: an `EncodingError` when `value` does not encode to a keyed container.
    public mutating func append(encodable value: some Encodable) throws {
        let encoded = try FormValueEncoder().encode(value)
        guard case .dictionary(let parameters) = encoded else {
            throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "Form parameters must encode to a keyed container"))
        }
        append(parameters: parameters)
    }

    /// Turns the form into its plan: the body's segments, exact length and encoders.
    ///
    /// - Throws: ``MultipartError/boundaryInContent(part:boundary:)`` when in-memory content
    ///   contains the delimiter of a caller-chosen boundary.
    public func plan() throws -> BodyPlan {
        try BodyPlan(form: self)
    }

    // MARK: - Building blocks shared with the plan

    static func contains(_ bytes: [UInt8], delimiter: [UInt8]) -> Bool {
        ByteSearch.containsDelimiter(bytes, delimiter: delimiter)
    }

    private mutating func pickBoundaryAbsentFromContent() {
        while true {
            let candidate = Boundary.random()
            let clash = parts.contains { part in
                if case .bytes(let bytes) = part.body.storage { return Self.contains(bytes, delimiter: candidate.delimiter) }
                return false
            }
            if !clash {
                boundary = candidate
                return
            }
        }
    }

    package static func headers(name: String, filename: String?, mimeType: String?, extra: [HeaderField]) -> [HeaderField] {
        var headers = [HeaderField(unchecked: "Content-Disposition", value: ContentDisposition.formData(name: name, filename: filename))]
        if let mimeType {
            headers.append(HeaderField(unchecked: "Content-Type", value: ContentDisposition.escape(mimeType)))
        }
        return headers + extra
    }

    static func lastComponent(of path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
    }
}
