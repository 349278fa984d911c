/// The protocol a request begins an upload by, as ``UploadAuthorizationRequest`` names it
/// (and the hook of `formpost serve --hook-url` receives it as `"protocol"`).
public enum UploadProtocol: String, Sendable, Hashable, Codable {
    /// A `multipart/form-data` form, stored as it arrives.
    case multipart
    /// A tus 1.0 creation (`POST` on the tus receiver's base path).
    case tus
    /// A creation of the IETF draft's resumable upload (a request with `Upload-Complete`).
    case ietf
}
