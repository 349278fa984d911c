/// A store that joins uploads into another (tus's concatenation): tusd's `Concater`. The
/// protocol's part — which uploads may be joined, in which order, for whom, and what a
/// final upload asked for again is answered — is written once (`TusReceiver`); a store
/// implements how the bytes are joined.
protocol UploadJoining: UploadStorage where Info == TusUploadInfo {
    /// Whether `final`, which partial uploads name as joined into it, is a join its store
    /// began and never finished (its receiver stopped mid-join), to be joined anew: the
    /// bytes of the partial uploads naming it are then all still there.
    func isUnfinishedJoin(_ final: Kept) -> Bool

    /// Joins `partials` (each whole, and held), in order, into the upload `id` (`final`,
    /// held by `hold`: its length theirs, no byte of its own), and stores it. Once joined,
    /// each partial upload names it (``TusUploadInfo/joinedInto``) and its bytes go. When
    /// the join fails, the partial uploads stay; a final upload no answer named yet (not
    /// `answered`) may go.
    func join(_ partials: [JoiningPartial<Kept, Hold>], into final: Kept, id: String, holding hold: Hold, answered: Bool) async throws
}

extension UploadJoining {
    /// Runs `body` holding each of `ids` (``holding(_:claim:_:)``), taken in order as
    /// `claim` says; their holds in the same order.
    ///
    /// - Throws: ``UploadStorageFailure/held`` while another request holds one of them.
    func holdingAll<T>(_ ids: [String], claim: UploadHoldClaim, held: [Hold] = [], _ body: ([Hold]) async throws -> T) async throws -> T {
        guard let first = ids.first else { return try await body(held) }
        return try await holding(first, claim: claim) { hold in
            try await holdingAll(Array(ids.dropFirst()), claim: claim, held: held + [hold], body)
        }
    }
}
