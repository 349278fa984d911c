import Multipart

/// An exchange whose connection closed before any byte of its answer arrived: most often
/// a pooled connection the server closed on its own keep-alive clock just as the request
/// went out (Apache after 5 s idle, nginx after 75 s; AsyncHTTPClient keeps one 60 s).
/// The server has answered nothing, so ``FormPostClient`` sends the request once more at
/// once, on another connection (the closed one has left the pool), as curl does — whatever
/// the caller's ``RetryPolicy`` — when its body can be produced again; otherwise, or when
/// that fails too, it throws ``error``. Transports throw it; callers never see it.
struct ConnectionClosedBeforeAnswer: Error, CustomStringConvertible {
    /// The error the caller sees when the request is not sent again.
    let error: any Error

    var description: String { String(describing: error) }

    /// Whether a request with `body` may be sent again: no body, or one made of bytes and
    /// file regions. A stream part may be a one-shot `InputStream`, which a plan does not
    /// tell from a stream made anew each time: a body with one is never sent again.
    static func mayResend(_ body: RequestBody?) -> Bool {
        body?.plan.segments.allSatisfy { segment in
            if case .stream = segment { return false }
            return true
        } ?? true
    }
}
