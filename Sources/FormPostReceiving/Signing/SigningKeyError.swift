/// Why a key for ``UploadURLSigner`` cannot be used.
public enum SigningKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key file cannot be read.
    case unreadable(path: String)
    /// The key has fewer than ``UploadURLSigner/minimumKeyLength`` bytes; `path` is its
    /// file, when it came from one.
    case tooShort(length: Int, path: String?)

    /// The problem as a sentence.
    public var description: String {
        switch self {
        case .unreadable(let path):
            "the signing key file \(path) cannot be read"
        case .tooShort(let length, let path):
            "the signing key\(path.map { " in \($0)" } ?? "") has \(length) bytes: it needs at least \(UploadURLSigner.minimumKeyLength) random bytes (head -c 32 /dev/urandom > key)"
        }
    }
}
