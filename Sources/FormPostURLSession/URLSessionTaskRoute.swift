import FormPost
/// Which of a ``URLSessionTransport``'s sessions sends a request, and as which kind of
/// task: the transport's one decision about how a request goes, kept apart so that it can
/// be read — and tested — at a glance.
///
/// | request                                   | ordinary session   | background session        |
/// |-------------------------------------------|--------------------|---------------------------|
/// | no body (`HEAD`, `DELETE`, `GET` after 303) | data task        | data task, companion session |
/// | body, `uploadsFromFile`                   | upload from a file | upload from a file        |
/// | body of known length ≤ `inMemoryLimit`    | upload from data   | upload from a file        |
/// | any other body                            | streamed upload    | upload from a file        |
///
/// Background sessions run upload tasks from a file only, and data tasks only while the
/// app is not suspended, so a background transport sends bodiless requests through an
/// ordinary companion session.
struct URLSessionTaskRoute: Equatable, Sendable {
    /// The session that sends the request.
    enum Session: Equatable, Sendable {
        /// The session made on the transport's configuration.
        case main
        /// The ordinary (`.default`) session a background transport makes beside it.
        case companion
    }

    /// The kind of task.
    enum Kind: Equatable, Sendable {
        /// `uploadTask(with:fromFile:)`: the body as one file (``BodyFile``).
        case uploadFromFile
        /// `uploadTask(with:from:)`: the body encoded in memory.
        case uploadFromData
        /// `uploadTask(withStreamedRequest:)`: the body produced as it is sent (`StreamedUploadBody`).
        case uploadStreamed
        /// `dataTask(with:)`: no body.
        case bodiless
    }

    /// The session.
    let session: Session
    /// The kind of task.
    let kind: Kind

    /// The route of a request with a body of `bodyLength` bytes (nil: unknown) when
    /// `hasBody`, on a transport with `inMemoryLimit` and `uploadsFromFile` whose session is
    /// a background one when `isBackground`.
    static func choose(hasBody: Bool, bodyLength: Int64?, inMemoryLimit: Int64, uploadsFromFile: Bool, isBackground: Bool) -> URLSessionTaskRoute {
        guard hasBody else { return URLSessionTaskRoute(session: isBackground ? .companion : .main, kind: .bodiless) }
        if uploadsFromFile || isBackground { return URLSessionTaskRoute(session: .main, kind: .uploadFromFile) }
        if let bodyLength, bodyLength <= inMemoryLimit { return URLSessionTaskRoute(session: .main, kind: .uploadFromData) }
        return URLSessionTaskRoute(session: .main, kind: .uploadStreamed)
    }
}
