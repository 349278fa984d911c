/// Where a request's path lies relative to a resumable receiver's base path (`/files`):
/// the one reading of it that the router, every gate and the receiver share, so that none
/// can take a path for another thing than the others do.
///
/// | path | reading |
/// | --- | --- |
/// | `/files`, `/files/` | ``collection`` (where uploads are created) |
/// | `/files/` + 32 lowercase hexadecimal digits | ``upload(id:)`` |
/// | any other path under `/files/` (`/files//`, `/files/.`, `/files/%2e`, `/files/ID/x`) | ``unknown`` (404) |
/// | a path not under it (`//files`, `/FILES`, `/filesx`) | ``outside`` |
///
/// The path is read exactly as it came, percent-encoding and all: nothing is decoded or
/// normalised, so no spelling of a path reaches a receiver as another.
enum UploadResourcePath: Equatable, Sendable {
    /// The base path itself, with or without one trailing `/`.
    case collection
    /// An upload resource: the base path, `/` and a valid upload ID.
    case upload(id: String)
    /// Under the base path, naming no upload that could exist.
    case unknown
    /// Not under the base path.
    case outside

    /// The reading of `path` under `basePath` (a path below `/` with no trailing `/`, as
    /// `ReceiverSetupError.checked(_:)` gives it).
    init(_ path: String, basePath: String) {
        guard path.utf8.starts(with: basePath.utf8) else {
            self = .outside
            return
        }
        let rest = path.utf8.dropFirst(basePath.utf8.count)
        if rest.isEmpty {
            self = .collection
            return
        }
        guard rest.first == UInt8(ascii: "/") else {
            self = .outside
            return
        }
        let name = Substring(rest.dropFirst())
        if name.isEmpty {
            self = .collection
        } else if UploadStore.isValidID(name) {
            self = .upload(id: String(name))
        } else {
            self = .unknown
        }
    }
}
