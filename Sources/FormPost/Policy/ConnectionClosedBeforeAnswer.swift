import Multipart

/// An exchange whose connection — one that may have come from the pool: an exchange with
/// the same origin was answered within the pool's idle timeout — closed before any byte of
/// its answer arrived: the keep-alive race, a pooled connection the server closed on its
/// own clock just as the request went out (Apache after 5 s idle, nginx after 75 s;
/// AsyncHTTPClient keeps one 60 s). ``FormPostClient`` sends the request again at once (up
/// to ``resends`` times), on another connection (the closed one has left the pool), as curl
/// does — whatever the caller's ``RetryPolicy`` — when its body can be produced again;
/// otherwise, or when that fails too, it throws ``error``. A close before any answer on a
/// connection that cannot have been pooled is thrown as itself: that server may have done
/// the work.
///
/// A request that never reached an HTTP/2 server is marked so too, on any connection: a
/// stream refused, or past the last stream a GOAWAY says the server processes (nginx sends
/// one after 1,000 requests on a connection; RFC 9113 §8.7), or a request AsyncHTTPClient
/// cancelled unsent because its pool handed it to a connection closing after a GOAWAY.
///
/// Thrown by a transport only for a request that asks for it
/// (`TransportRequest.marksClosedBeforeAnswer`, set by ``FormPostClient``), which unwraps it.
struct ConnectionClosedBeforeAnswer: Error, CustomStringConvertible {
    /// The error the caller sees when the request is not sent again.
    let error: any Error

    /// How many times one exchange is sent again so: a resent request may meet another
    /// pooled connection the server closed, or the next GOAWAY of a server that ends its
    /// connections every few requests.
    static let resends = 3

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
