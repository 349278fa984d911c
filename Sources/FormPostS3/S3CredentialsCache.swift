import FormPostReceiving
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The credentials of the moment from a ``S3CredentialsProvider``, had again before they
/// expire, never while a request signed with them may still be on its way: a request is
/// signed only with credentials that have at least ``refreshWindow(lifetime:)`` left. One
/// fetch at a time, whatever the number of requests waiting for it. When a fetch fails and
/// the credentials held have not expired, they are used until they do (as AWS's SDKs keep
/// working through an outage of the credential service).
package actor S3CredentialsCache {
    /// Where the credentials come from.
    package let provider: any S3CredentialsProvider
    private var held: S3Credentials?
    /// How long the credentials held were valid for when fetched.
    private var lifetime: Duration = .zero
    private var fetching: Task<S3Credentials, any Error>?

    package init(provider: any S3CredentialsProvider) {
        self.provider = provider
    }

    /// How long before their expiry credentials valid for `lifetime` are had again: five
    /// minutes, or a quarter of their life when it is shorter than twenty.
    package static func refreshWindow(lifetime: Duration) -> Duration {
        min(.seconds(300), lifetime / 4)
    }

    /// Credentials to sign a request with now.
    ///
    /// - Throws: `ObjectStorageError/credentialsUnavailable(source:detail:)` when none can
    ///   be had and those held (if any) have expired.
    package func current(now: Date = Date()) async throws -> S3Credentials {
        if let held, !needsRefresh(held, now: now) { return held }
        let task: Task<S3Credentials, any Error>
        if let fetching {
            task = fetching
        } else {
            let provider = provider
            task = Task { try await provider.fetch() }
            fetching = task
        }
        do {
            let fresh = try await task.value
            if fetching == task {
                fetching = nil
                held = fresh
                lifetime = fresh.expiration.map { .milliseconds(Int64(max(0, $0.timeIntervalSince(now)) * 1000)) } ?? .zero
            }
            return fresh
        } catch {
            if fetching == task { fetching = nil }
            if let held, let expiration = held.expiration, expiration > Date() { return held }
            throw error
        }
    }

    private func needsRefresh(_ credentials: S3Credentials, now: Date) -> Bool {
        guard let expiration = credentials.expiration else { return false }
        let window = Self.refreshWindow(lifetime: lifetime)
        return expiration.timeIntervalSince(now) <= Double(window.components.seconds) + Double(window.components.attoseconds) / 1e18
    }
}
