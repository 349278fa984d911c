#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The lease a request holds on an upload in object storage (``ObjectLease``), renewed in the
/// background for as long as the request runs (``keepRenewing(for:with:)``: every third of
/// its duration), so that neither a slow part nor a long completion outlives it. Before each
/// step that changes the store the request ``check()``s that it still holds it, with a
/// quarter of the duration to spare, so that a step checked and begun has time to reach the
/// store before another receiver could take the lease over. A check is no fence: a write
/// delayed past that (a part's attempt may take the whole lease) can land after a takeover;
/// the state's conditional saves and the fence written at a takeover
/// (``ObjectUploadStore/fence(_:by:)``) keep such a write from counting.
final class HeldLease: Sendable {
    private let state: Mutex<(lease: ObjectLease, lost: Bool)>
    /// How long before the lease runs out ``check()`` takes it as lost, in seconds.
    private let margin: Double

    /// `lease`, taken for `duration` seconds.
    init(_ lease: ObjectLease, duration: Double) {
        state = Mutex((lease, false))
        margin = duration / 4
    }

    /// The lease as last renewed: the one released at the end.
    var lease: ObjectLease { state.withLock { $0.lease } }

    /// Throws unless the lease is still held: not taken over, and not about to run out (a
    /// renewal that could not reach the store leaves it to run out): a quarter of its
    /// duration left at least.
    ///
    /// - Throws: ``UploadStorageFailure/leaseLost``.
    func check() throws {
        let (lease, lost) = state.withLock { ($0.lease, $0.lost) }
        guard !lost, Date().timeIntervalSince1970 + margin < lease.expires else { throw UploadStorageFailure.leaseLost }
    }

    /// Runs `body` holding `lease`, taken for `seconds` and renewed in the background with
    /// `store` while it runs (``keepRenewing(for:with:)``), then released; returns what
    /// `body` returns, or throws what it throws.
    static func holding<T>(_ lease: ObjectLease, for seconds: Double, with store: any ObjectStore,
                           _ body: (HeldLease) async throws -> T) async throws -> T {
        let held = HeldLease(lease, duration: seconds)
        let renewing = Task { await held.keepRenewing(for: seconds, with: store) }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(held))
        } catch {
            result = .failure(error)
        }
        renewing.cancel()
        await renewing.value
        await held.lease.release(with: store)
        return try result.get()
    }

    /// Renews the lease every third of `seconds` until cancelled, or until a renewal finds
    /// it taken over (then it is lost for good). A renewal that fails is tried again a twelfth
    /// of the lease later (its attempts each end within a quarter of the lease on a store's
    /// ``ObjectStore/leaseTraffic``): one refused at once is sent again well before
    /// ``check()`` takes the lease as lost.
    func keepRenewing(for seconds: Double, with store: any ObjectStore) async {
        var pause = seconds / 3
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .milliseconds(Int64(pause * 1000)))
            } catch {
                return
            }
            pause = seconds / 3
            do {
                guard let renewed = try await lease.renewed(for: seconds, with: store) else {
                    state.withLock { $0.lost = true }
                    return
                }
                state.withLock { $0.lease = renewed }
            } catch {
                pause = seconds / 12
            }
        }
    }
}
