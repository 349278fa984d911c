import HTTPTypes

/// Why a request on a resumable upload stops in its store (``UploadStorage``), answered
/// alike by tus and the draft (``status``, ``message``).
enum UploadStorageFailure: Error, Equatable {
    /// The upload's state changed since this request read it: another receiver saved it,
    /// and what this request did is not counted.
    case changed
    /// The upload's lease ran out, or was taken over, while this request ran.
    case leaseLost
    /// Another request holds the upload's lease (here or on another receiver).
    case held
    /// There is no such upload (any longer).
    case notFound
    /// The upload expired: it had no activity for the receiver's expiry, and is removed.
    case expired
    /// The store no longer has the upload's multipart upload (the bucket's lifecycle rule
    /// aborted it): it is removed, and no request could complete it.
    case lost

    /// The status it is answered with.
    var status: HTTPResponse.Status {
        switch self {
        case .changed: .conflict
        case .leaseLost, .held: .locked
        case .notFound: .notFound
        case .expired, .lost: .gone
        }
    }

    /// What the client is told.
    var message: String {
        switch self {
        case .changed: "the upload changed while this request ran: ask for its offset again"
        case .leaseLost: "the upload's lease ran out while this request ran: ask for its offset again"
        case .held: "another request is changing this upload (here or on another receiver)"
        case .notFound: "no such upload"
        case .expired: "the upload expired"
        case .lost: "the object store no longer has the upload's parts (its multipart upload was aborted): it is removed; send the file again"
        }
    }
}
