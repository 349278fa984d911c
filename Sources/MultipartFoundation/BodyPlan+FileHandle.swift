import Foundation
import Multipart

extension BodyPlan {
    /// Writes the body through `handle`, an open file, device, pipe or socket, from its
    /// current position; the handle stays open (see `BodyPlan/write(toDescriptor:)`).
    ///
    /// - Throws: `MultipartError/outputFailed(path:errno:)` (the path given as
    ///   `descriptor N`), or any error producing the body.
    public func write(to handle: FileHandle) async throws {
        try await write(toDescriptor: handle.fileDescriptor)
    }
}
