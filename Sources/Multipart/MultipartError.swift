#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Every error the `Multipart` module throws.
///
/// Each case names what it is about — the part (its position and field name),
/// the path, the limit — and ``description`` reads as a sentence a user can act on.
public enum MultipartError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A file given for a part does not exist.
    case fileNotFound(path: String)
    /// A file given for a part is a directory or another non-regular file.
    case notARegularFile(path: String)
    /// A file given for a part cannot be opened for reading (`errno` is the system's reason).
    case fileNotReadable(path: String, errno: Int32)
    /// Reading a file failed while the body was produced.
    case fileReadFailed(part: PartLabel, path: String, errno: Int32)
    /// A file's size is no longer the size recorded when the part was appended.
    case fileSizeChanged(part: PartLabel, path: String, expected: Int64, actual: Int64)
    /// A file was replaced by another, or modified in place, after it was added, although
    /// its size is the same.
    case fileReplaced(part: PartLabel, path: String)
    /// A stream produced more or fewer bytes than the length declared for it.
    case streamLengthMismatch(part: PartLabel, declared: Int64, produced: Int64)
    /// A one-shot source (a Foundation `InputStream`) was asked for its bytes a second time.
    case streamAlreadyConsumed(part: PartLabel)
    /// A stream failed while the body was produced.
    case streamFailed(part: PartLabel, reason: String)
    /// A part of a body asked for from an offset (``BodyPlan/slice(_:)``) is a stream,
    /// which cannot skip what was sent.
    case streamNotResumable(part: PartLabel)
    /// A caller-chosen boundary breaks RFC 2046's rules.
    case invalidBoundary(String, reason: String)
    /// A caller-supplied header name or value cannot be written.
    case invalidHeader(name: String, reason: String)
    /// A part's content contains the delimiter of the caller-chosen boundary.
    case boundaryInContent(part: PartLabel, boundary: String)
    /// The encoder refuses to overwrite an existing file.
    case outputExists(path: String)
    /// Writing the encoded body to a file failed.
    case outputFailed(path: String, errno: Int32)
    /// A body handed to the parser is not well-formed `multipart/form-data`.
    case malformedBody(reason: String)
    /// A parsing limit was crossed.
    case limitExceeded(limit: MultipartLimit, value: Int64)
    /// A `Content-Type` value carries no usable boundary.
    case missingBoundary(contentType: String)

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "No file at \(path): check the path."
        case .notARegularFile(let path):
            return "\(path) is a directory or special file, not a regular file: give the path of a file."
        case .fileNotReadable(let path, let code):
            return "\(path) cannot be read (\(Self.systemMessage(code))): check its permissions."
        case .fileReadFailed(let part, let path, let code):
            return "Reading \(path) for \(part) failed (\(Self.systemMessage(code)))."
        case .fileSizeChanged(let part, let path, let expected, let actual):
            return "\(path) for \(part) changed size from \(expected) to \(actual) bytes after it was added: "
                + "the body was stopped rather than sent with wrong framing. Add the file again once it is complete."
        case .fileReplaced(let part, let path):
            return "\(path) for \(part) was replaced or modified after it was added: "
                + "the body was stopped rather than sent with content from two files. Add the file again once it is complete."
        case .streamLengthMismatch(let part, let declared, let produced):
            let verb = produced > declared ? "more" : "fewer"
            return "The stream for \(part) produced \(verb) bytes than the \(declared) declared (\(produced) at least): "
                + "the body was stopped rather than sent with wrong framing."
        case .streamAlreadyConsumed(let part):
            return "The input stream for \(part) was already read once and cannot be read again: "
                + "give a stream factory or a file to produce the body more than once."
        case .streamFailed(let part, let reason):
            return "The stream for \(part) failed: \(reason)."
        case .streamNotResumable(let part):
            return "The body cannot be produced from an offset: \(part) is a stream; only files and bytes can resume."
        case .invalidBoundary(let boundary, let reason):
            return "The boundary \"\(boundary)\" is invalid: \(reason)."
        case .invalidHeader(let name, let reason):
            return "The header \"\(name)\" cannot be written: \(reason)."
        case .boundaryInContent(let part, let boundary):
            return "The content of \(part) contains the delimiter of the boundary \"\(boundary)\": "
                + "choose another boundary or let FormPost pick a random one."
        case .outputExists(let path):
            return "\(path) already exists: the encoder does not overwrite files. Remove it or choose another path."
        case .outputFailed(let path, let code):
            return "Writing \(path) failed (\(Self.systemMessage(code))); the partial file was removed."
        case .malformedBody(let reason):
            return "The multipart body is malformed: \(reason)."
        case .limitExceeded(let limit, let value):
            return "The multipart body exceeds the limit \(limit) (\(value))."
        case .missingBoundary(let contentType):
            return "The content type \"\(contentType)\" is not multipart with a boundary parameter."
        }
    }

    static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text)
    }
}
