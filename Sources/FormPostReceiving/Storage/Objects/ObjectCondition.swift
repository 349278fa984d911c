/// When an ``ObjectStore`` writes or removes an object: always, only if there is none, or
/// only if the object is the version read. A store sends it in its own form (S3: the
/// fields `If-None-Match: *` and `If-Match` with the ETag, quoted or not as the store
/// compares them).
public enum ObjectCondition: Sendable, Equatable {
    /// Whatever is there.
    case none
    /// Only if there is no object of the key.
    case absent
    /// Only if the object is still the version whose ETag is this.
    case matching(etag: String)
}
