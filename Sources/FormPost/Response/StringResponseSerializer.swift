#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The body as text, decoded with the `Content-Type` charset, or `encoding` when given.
/// Without either, UTF-8 is tried first and ISO-8859-1 (which reads any bytes) after it.
public struct StringResponseSerializer: ResponseSerializer {
    public let validation: ResponseValidation
    /// The encoding to use whatever the response says; nil reads the `Content-Type` charset.
    public let encoding: String.Encoding?

    /// Creates a serializer; by default it accepts 200–299 and any content type.
    public init(encoding: String.Encoding? = nil, validation: ResponseValidation = ResponseValidation()) {
        self.encoding = encoding
        self.validation = validation
    }

    /// - Throws: ``UploadError/decodingFailed(_:body:)`` for an unknown charset or bytes that are not valid in it.
    public func decode(_ response: UploadResponse) throws -> String {
        let data = Data(response.body)
        if let encoding {
            return try text(data, encoding, named: encoding.description, response)
        }
        guard let charset = response.charset else {
            return String(data: data, encoding: .utf8) ?? String(data: data, encoding: .isoLatin1) ?? ""
        }
        guard let named = TextEncodingName.encoding(of: charset) else {
            throw UploadError.decodingFailed("the charset \"\(charset)\" is not supported", body: response.body)
        }
        return try text(data, named, named: charset, response)
    }

    public func emptyValue(for response: UploadResponse) throws -> String { "" }

    private func text(_ data: Data, _ encoding: String.Encoding, named name: String, _ response: UploadResponse) throws -> String {
        if let text = String(data: data, encoding: encoding) { return text }
        if encoding == .windowsCP1252 { return Windows1252.decode(data) }
        #if canImport(FoundationEssentials)
        if !Self.decodedWithoutICU.contains(encoding) {
            // FoundationEssentials decodes the others only once ICU is loaded: by a program
            // that imports Foundation (or FormPostFoundation). With Foundation itself (Apple
            // platforms), a failure is the body's alone.
            throw UploadError.decodingFailed("the body is not valid \(name) text, or this program does not load ICU (import FormPostFoundation or Foundation to decode \(name))", body: response.body)
        }
        #endif
        throw UploadError.decodingFailed("the body is not valid \(name) text", body: response.body)
    }

    #if canImport(FoundationEssentials)
    /// What FoundationEssentials decodes by itself (Windows-1252 is FormPost's own).
    private static let decodedWithoutICU: [String.Encoding] = [
        .utf8, .utf16, .utf16BigEndian, .utf16LittleEndian, .utf32, .utf32BigEndian, .utf32LittleEndian,
        .ascii, .isoLatin1, .macOSRoman, .windowsCP1252,
    ]
    #endif
}

extension ResponseSerializer where Self == StringResponseSerializer {
    /// The body as text in its `Content-Type` charset (200–299, any content type).
    public static var string: StringResponseSerializer { StringResponseSerializer() }
}
