import Foundation
import Multipart

extension PartBody {
    /// Content read once from a Foundation `InputStream` of `length` bytes, for parity
    /// with Alamofire and AFNetworking. The stream is a one-shot source: producing the body
    /// a second time fails with `MultipartError/streamAlreadyConsumed(part:)`.
    public static func inputStream(_ stream: InputStream, length: Int64) -> PartBody {
        let box = OneShotInputStream(stream)
        return .stream(ByteStreamSource(length: length) { part in try box.take(part: part) })
    }
}
