#if Vapor
import FormPostReceiving
import HTTPTypes

/// A Vapor request's connection, as far as Vapor gives a handle on it. Vapor's handlers
/// return only the final answer, so no interim (1xx) answer goes out: the IETF draft's
/// `104 Upload Resumption Supported` is not sent (a client learns the upload's URL from the
/// final answer, or asks again after a cut). Vapor does not hand a handler its channel
/// either: ``end()`` ends the request's body for the receiver (``VaporBodyPump/end()``), which the
/// receiver then sees end as a cut connection's would, so that a newer request can take
/// the upload it held; the request's task goes on and answers.
struct VaporReceiverConnection: ReceiverConnection {
    /// The request's body.
    let body: VaporBodyPump
    /// HTTP/2's streams carry the same answers; what tells a body's end (a stream's end,
    /// or `Content-Length`) is Vapor's to read.
    let isMultiplexedStream: Bool

    func sendInterim(_ status: HTTPResponse.Status, fields: HTTPFields) async {}

    func end() {
        body.end()
    }
}
#endif
