#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A multipart upload in progress in an ``ObjectStore``'s bucket, as its listing says: the
/// key of the object it will make, its ID, and when it began (nil when the store did not
/// say in a form it reads).
public struct ListedMultipartUpload: Sendable {
    /// The key of the object it will make.
    public let key: String
    /// Its ID.
    public let uploadID: String
    /// When it began.
    public let initiated: Date?

    /// The multipart upload `uploadID` of `key`, begun at `initiated`.
    public init(key: String, uploadID: String, initiated: Date?) {
        self.key = key
        self.uploadID = uploadID
        self.initiated = initiated
    }
}
