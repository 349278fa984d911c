/// Which file a path named when a part was added, and its last modification: a file
/// replaced by another (even of the same size) has another device or inode, one rewritten
/// in place another modification time.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var modificationSeconds: Int64
    var modificationNanoseconds: Int64
}
