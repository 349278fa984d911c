#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Multipart

/// Completing an upload on the disk: its stored file linked from its data, in steps a
/// restart takes up again.
extension UploadStore {
    /// A new completion of `id`: a random name to store its data under, and the data's
    /// SHA-256 (`known`, or read from the file when nil).
    func plannedCompletion(_ id: String, sha256 known: String?) throws -> UploadCompletion {
        UploadCompletion(storedAs: Self.randomName(), sha256: try known ?? Self.sha256(ofFileAt: dataPath(id)), event: UploadEventOutbox.newID())
    }

    /// Stores the complete data of `id` in the directory as `completion` says, in steps
    /// each of which may be taken again: saves `pending` (its state, recording
    /// `completion`), hard-links the data there under the recorded name with the mode of
    /// stored files (then syncs the file and the directory), records `upload`'s event
    /// (``announce(_:as:)``), saves `done` (its state, complete), and removes the data. A crash
    /// between two steps leaves an upload whose data is still there, at its full offset,
    /// with the completion recorded (completing it again stores the same file, once), or a
    /// complete one with a leftover data file (``removeData(_:)`` removes it).
    func complete(_ id: String, as completion: UploadCompletion, pending: some Encodable, done: some Encodable,
                  announcing upload: UploadEvent.Upload) throws {
        try reach(.beforeRecording)
        try save(pending, id: id)
        try reach(.beforeLink)
        try linkData(id, as: completion)
        try FileSync.file(dataPath(id))
        try syncStoredFiles()
        try reach(.afterLink)
        try announce(upload, as: completion.event ?? UploadEventOutbox.legacyID(of: completion.storedAs))
        try reach(.afterEvent)
        try save(done, id: id)
        try reach(.beforeUnlink)
        removeData(id)
    }

    /// Records the event of `type` (`post-finish` unless said) about `upload` in ``events``
    /// (when there are), under the identifier `event` (a new one when nil). A completion
    /// calls it once its files are safe and before its state says complete, so that a
    /// completion taken up again records it again: at least once.
    func announce(_ upload: UploadEvent.Upload, as event: String?, type: String = UploadEvent.postFinish) throws {
        try events?.recordNow(UploadEvent(id: event ?? UploadEventOutbox.newID(), type: type, upload: upload))
    }

    /// Runs ``completionFault`` at `step`; what it throws fails the step as storage fails.
    func reach(_ step: CompletionStep) throws {
        do {
            try completionFault?(step)
        } catch {
            throw ReceiverFailure.storage("storing an upload failed \(step.rawValue): \(error)")
        }
    }

    /// Whether the data of `id` is already linked as `completion`'s stored file: a
    /// completion that stopped after that step.
    func isLinked(_ id: String, as completion: UploadCompletion) -> Bool {
        Self.isSameFile(dataPath(id), directory + "/" + completion.storedAs)
    }
}
