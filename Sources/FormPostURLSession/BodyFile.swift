import FormPost
import Foundation
import Multipart

/// A body as one file, for URLSession's `uploadTask(with:fromFile:)`: the file itself when
/// the body is exactly one whole file (a raw file upload), otherwise the plan encoded to a
/// temporary file at `temporaryPath` that ``remove()`` deletes.
struct BodyFile: Sendable {
    /// The file to upload.
    let path: String
    /// Whether the file was written for this body (and is removed with it).
    let isTemporary: Bool

    init(plan: BodyPlan, temporaryPath: String) async throws {
        if plan.segments.count == 1, case .file(let region) = plan.segments[0], !region.needsContentCheck, region.offset == 0 {
            let descriptor = try region.openChecked()
            close(descriptor)
            path = region.path
            isTemporary = false
            return
        }
        try await plan.write(toFile: temporaryPath)
        path = temporaryPath
        isTemporary = true
    }

    /// Deletes the file if it was written for this body.
    func remove() {
        if isTemporary { try? FileManager.default.removeItem(atPath: path) }
    }
}
