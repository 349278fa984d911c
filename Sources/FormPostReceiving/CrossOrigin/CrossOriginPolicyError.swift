/// Why a ``CrossOriginPolicy`` could not be made.
public enum CrossOriginPolicyError: Error, Equatable, CustomStringConvertible {
    /// No origin was given.
    case noOrigin
    /// Not `*` nor `http(s)://host[:port]`.
    case invalidOrigin(String)

    /// The failure, as a sentence.
    public var description: String {
        switch self {
        case .noOrigin: "a cross-origin policy needs at least one origin"
        case .invalidOrigin(let origin): "\(origin) is no origin: expected * or http(s)://host[:port], with no path"
        }
    }
}
