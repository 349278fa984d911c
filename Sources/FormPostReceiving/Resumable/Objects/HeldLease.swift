#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The lease a request holds on an upload in object storage (``ObjectLease``), renewed in the
/// background for as long as the request runs (``keepRenewing(for:with:)``: every third of
/// its duration), so that neither a slow part nor a long completion outlives it. Before each
/// step that changes the store the request ``check()``s that it still holds it.
final class HeldLease: Sendable {
    private let state: Mutex<(lease: ObjectLease, lost: Bool)>

    init(_ lease: ObjectLease) {
        state = Mutex((lease, false))
    }

    /// The lease as last renewed: the one released at the end.
    var lease: ObjectLease { state.withLock { $0.lease } }

    /// Throws unless the lease is still held: not taken over, and not run out (a renewal
    /// that could not reach the store leaves it to run out).
    ///
    /// - Throws: ``ObjectUploadFailure/leaseLost``.
    func check() throws {
        let (lease, lost) = state.withLock { ($0.lease, $0.lost) }
        guard !lost, Date().timeIntervalSince1970 < lease.expires else { throw ObjectUploadFailure.leaseLost }
    }

    /// Renews the lease every third of `seconds` until cancelled, or until a renewal finds
    /// it taken over (then it is lost for good). A renewal that fails is tried again a third
    /// later.
    func keepRenewing(for seconds: Double, with store: any ObjectStore) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .milliseconds(Int64(seconds * 1000 / 3)))
            } catch {
                return
            }
            do {
                guard let renewed = try await lease.renewed(for: seconds, with: store) else {
                    state.withLock { $0.lost = true }
                    return
                }
                state.withLock { $0.lease = renewed }
            } catch {
                continue
            }
        }
    }
}
