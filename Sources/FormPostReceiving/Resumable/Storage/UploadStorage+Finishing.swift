extension UploadStorage {
    /// The upload `id` stored if it is `due` (its every byte there, not stored yet), as read
    /// again under a hold taken as `claim` says — another request may have stored it
    /// meanwhile; the upload as kept after. What a failure means is the protocol's: a tus
    /// `HEAD` answers 503 (its offset alone would say done), where the draft's `HEAD` answers
    /// the offset (its `Upload-Complete` says whether it is done).
    ///
    /// - Throws: ``UploadStorageFailure/held`` while another request holds it; what
    ///   ``finish(_:id:holding:)`` throws.
    func finishing(_ id: String, claim: UploadHoldClaim, due: (Kept) -> Bool) async throws -> Kept {
        try await holding(id, claim: claim) { hold in
            let held = try await current(id, holding: hold, finishing: true)
            guard due(held) else { return held }
            return try await finish(held, id: id, holding: hold)
        }
    }
}
