/// How a request takes an upload that another request on this receiver holds
/// (``UploadStorage/holding(_:claim:_:)``).
enum UploadHoldClaim: Sendable {
    /// Refused (tus answers 423), after waiting while the receiver's own work in the
    /// background holds it.
    case refusedWhileHeld
    /// Refused at once, even while the receiver's own work in the background holds it: for
    /// work that a later request tries again (a tus final upload joined once its partial
    /// uploads are complete).
    case refusedAtOnce
    /// The holder's exchange ended (``ReceiverConnection/end()``), and its release awaited: a
    /// client that resumes has given up on it (the IETF draft). The request's own connection,
    /// which a later request may end in turn.
    case endingHolder(connection: (any ReceiverConnection)?)

    /// The connection of the request that claims: nil when it is refused while held (no
    /// later request ends it).
    var connection: (any ReceiverConnection)? {
        switch self {
        case .refusedWhileHeld, .refusedAtOnce: nil
        case .endingHolder(let connection): connection
        }
    }

    /// Takes `id` in `locks` as this claim says; the lock's token, or nil when it could not.
    func acquire(_ id: String, in locks: UploadLocks) async -> UInt64? {
        switch self {
        case .refusedWhileHeld: await locks.acquireAfterBackground(id)
        case .refusedAtOnce: locks.acquire(id)
        case .endingHolder(let connection): await locks.acquireEndingHolder(id, connection: connection)
        }
    }
}
