/// A point between the steps of storing a complete resumable upload
/// (``UploadStore/complete(_:as:pending:done:)``, or a form's by ``ResumableForms``), where a crash or a failure may strike:
/// each leaves a state from which the upload completes exactly once.
package enum CompletionStep: String, CaseIterable, Sendable {
    /// Every byte is there; the completion is not recorded yet (a full disk fails here, and
    /// leaves no file touched).
    case beforeRecording = "before-recording"
    /// The completion is recorded in the upload's state; the data is not linked yet.
    case beforeLink = "before-link"
    /// The data is linked into the directory; the state does not say complete yet.
    case afterLink = "after-link"
    /// The upload's `post-finish` event is recorded (``ReceiverConfiguration/events``); its
    /// state does not say complete yet (a form's: it is not settled).
    case afterEvent = "after-event"
    /// The state says complete; the data is not removed yet.
    case beforeUnlink = "before-unlink"
    /// A form's answer and its files' stored names are saved; none of its files is moved
    /// into the directory yet (``ResumableForms``).
    case formAnswered = "form-answered"
    /// The first of a form's files is moved into the directory; the others are not yet.
    case formPartMoved = "form-part-moved"

    /// The steps of storing one file: a tus upload, or a representation of the draft that is not a form.
    package static let ofOneFile: [CompletionStep] = [.beforeLink, .afterLink, .beforeUnlink]
    /// The steps of storing a form's files.
    package static let ofForm: [CompletionStep] = [.formAnswered, .formPartMoved]
}

/// What happens at each ``CompletionStep``, for tests (and `formpost serve`'s hidden
/// `--kill-at-completion-step`): throwing fails the completion there. Nil in production.
package typealias CompletionFault = @Sendable (CompletionStep) throws -> Void
