#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An object of an ``ObjectStore``'s listing: its key, and when it was last written (nil
/// when the store did not say in a form it reads).
public struct ListedObject: Sendable {
    /// The object's key.
    public let key: String
    /// When it was last written.
    public let lastModified: Date?

    /// The object `key`, last written at `lastModified`.
    public init(key: String, lastModified: Date?) {
        self.key = key
        self.lastModified = lastModified
    }
}
