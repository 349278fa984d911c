import Multipart

/// An exchange whose connection — one that may have come from the pool: an exchange with
/// the same origin was answered within the pool's idle timeout — closed before any byte of
/// its answer arrived: the keep-alive race, a pooled connection the server closed on its
/// own clock just as the request went out (Apache after 5 s idle, nginx after 75 s;
/// AsyncHTTPClient keeps one 60 s). ``FormPostClient`` sends the request once more at once,
/// on another connection (the closed one has left the pool), as curl does — whatever the
/// caller's ``RetryPolicy`` — when its body can be produced again; otherwise, or when that
/// fails too, it throws ``error``. A close before any answer on a connection that cannot
/// have been pooled is thrown as itself: that server may have done the work.
///
/// A request that never reached an HTTP/2 server is marked so too, on any connection, and
/// may be sent again up to 3 times (a resend may meet the next GOAWAY of a server that ends
/// its connections every few requests): a stream refused, or past the last stream a GOAWAY
/// says the server processes (nginx sends one after 1,000 requests on a connection; RFC 9113
/// §8.7), or a request AsyncHTTPClient cancelled unsent because its pool handed it to a
/// connection closing after a GOAWAY. NIOHTTP2 reports a stream a GOAWAY dropped as
/// cancelled, as it reports a stream the server itself reset with CANCEL before answering:
/// such a request is sent again too, although that server may have read it.
///
/// Thrown by a transport only for a request that asks for it
/// (`TransportRequest.marksClosedBeforeAnswer`, set by ``FormPostClient``), which unwraps it.
struct ConnectionClosedBeforeAnswer: Error, CustomStringConvertible {
    /// The error the caller sees when the request is not sent again.
    let error: any Error

    /// How many times the exchange may be sent again: once after a closed connection, 3 times
    /// for a request that never reached an HTTP/2 server.
    let resends: Int

    /// A connection closed before any answer: `error` for the caller, one resend.
    init(closed error: any Error) {
        self.error = error
        resends = 1
    }

    /// A request an HTTP/2 server never took: `error` for the caller, up to 3 resends.
    init(notTaken error: any Error) {
        self.error = error
        resends = 3
    }

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
