import FormPostReceiving
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The credentials of the moment from a ``S3CredentialsProvider``, had again before they
/// expire, as botocore refreshes them: within ``refreshWindow(lifetime:)`` of their expiry a
/// request still gets those held while a fetch runs behind it; within half of that (the
/// mandatory window) it waits for the fetch, and fails when the fetch fails — a request is
/// never signed with credentials that close to their end. One fetch at a time, whatever the
/// number of requests waiting for it; after a failed one, none in the background for
/// ``retryPause``.
package actor S3CredentialsCache {
    /// Where the credentials come from.
    package let provider: any S3CredentialsProvider
    private var held: S3Credentials?
    /// How long the credentials held were valid for when fetched.
    private var lifetime: Duration = .zero
    private var fetching: Task<S3Credentials, any Error>?
    private var lastFailure: Date?

    /// How long after a failed fetch no other is begun in the background.
    package static let retryPause: TimeInterval = 5

    package init(provider: any S3CredentialsProvider) {
        self.provider = provider
    }

    /// How long before their expiry credentials valid for `lifetime` begin to be had again:
    /// five minutes, or a quarter of their life when it is shorter than twenty.
    package static func refreshWindow(lifetime: Duration) -> Duration {
        min(.seconds(300), lifetime / 4)
    }

    /// Credentials to sign a request with now.
    ///
    /// - Throws: `ObjectStorageError/credentialsUnavailable(source:detail:)` when none can
    ///   be had and those held (if any) are within the mandatory window.
    package func current(now: Date = Date()) async throws -> S3Credentials {
        if let held {
            guard let expiration = held.expiration else { return held }
            let left = expiration.timeIntervalSince(now)
            let advisory = Self.seconds(Self.refreshWindow(lifetime: lifetime))
            if left > advisory { return held }
            if left > advisory / 2 {
                if fetching == nil, lastFailure.map({ now.timeIntervalSince($0) >= Self.retryPause }) ?? true { _ = refreshed() }
                return held
            }
        }
        return try await refreshed().value
    }

    /// The fetch under way, or one begun now.
    private func refreshed() -> Task<S3Credentials, any Error> {
        if let fetching { return fetching }
        let task = Task { try await self.fetchAndKeep() }
        fetching = task
        return task
    }

    private func fetchAndKeep() async throws -> S3Credentials {
        defer { fetching = nil }
        do {
            let fresh = try await provider.fetch()
            let now = Date()
            if let expiration = fresh.expiration, expiration <= now {
                throw ObjectStorageError.credentialsUnavailable(source: provider.source, detail: "the credentials handed out had already expired")
            }
            held = fresh
            lifetime = fresh.expiration.map { .milliseconds(Int64($0.timeIntervalSince(now) * 1000)) } ?? .zero
            lastFailure = nil
            return fresh
        } catch {
            lastFailure = Date()
            throw error
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
