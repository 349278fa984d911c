/// What is kept in object storage of a resumable upload besides its bytes
/// (`PREFIX.tus/ID.info` for tus, `PREFIX.resumable/ID.info` for the draft): what its
/// protocol keeps (`Info`), the key its object will have, and where its bytes are — the
/// parts of its S3 multipart upload, each one part size, and the bytes past them (fewer
/// than a part: S3 takes no part under 5 MiB but the last) in a tail object of their own.
/// Its ``offset`` counts only what these name: bytes an append sent in a part that no saved
/// state names yet do not count, and are sent again. Once its completion is recorded,
/// every byte is in its parts (or its object): its offset is its length.
struct ObjectUploadState<Info: ResumableUploadInfo>: Codable, Equatable {
    /// One part of the multipart upload.
    typealias Part = ObjectPart

    /// The object holding the bytes past the parts.
    struct Tail: Codable, Equatable {
        var key: String
        var size: Int64
    }

    /// What the upload's protocol keeps: its length, its client, its completion once
    /// decided, and what it stored once complete.
    var info: Info
    /// The key of the object the complete upload becomes.
    var key: String
    /// The S3 multipart upload, once its first part was sent.
    var uploadID: String?
    /// Whether its multipart upload was begun declaring a CRC32 of each part
    /// (``ObjectAttributes/partChecksums``, where the store keeps them): each of its parts
    /// is then sent with its own. Nil for none: a final upload's (parts the store copies),
    /// and states saved before it was kept.
    var checksummedParts: Bool?
    /// The parts sent, in order.
    var parts: [Part] = []
    /// The bytes past the parts, if any.
    var tail: Tail?
    /// The size of its parts, fixed at creation (receivers configured with other limits
    /// would choose others); nil in states saved before it was kept.
    var partSize: Int?
    /// When it was last saved, in seconds since 1970: its last activity, from which it
    /// expires; nil before its first save.
    var active: Double?
    /// The owner of the lease under which it was last taken over from a holder whose lease
    /// ran out (``ObjectLease/owner``): written before that holder's first change, so that
    /// the state's ETag changes and no save of the holder before it, made from what it read,
    /// is taken any more. Nil until an upload is taken over.
    var fence: String?

    /// The bytes the upload holds.
    var offset: Int64 {
        let held = parts.reduce(0) { $0 + $1.size } + (tail?.size ?? 0)
        return info.isWhole ? info.knownLength ?? held : held
    }
}
