import Multipart
import NIOCore

/// What ``ByteBufferMultipartParser`` found in a buffer: content as slices of the buffers
/// received (sharing their storage), not copies.
enum MultipartBufferEvent {
    case partBegin(PartHead)
    case body(ByteBuffer)
    case partEnd
    case end
}
