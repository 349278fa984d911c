import Foundation
import FormPost
import Multipart
import MultipartFoundation

extension RequestBody {
    /// A Foundation `InputStream` of `length` bytes as the whole body (a one-shot source:
    /// a retry or a 307/308 redirect that needs the body again fails clearly).
    public static func inputStream(_ stream: InputStream, length: Int64, contentType: String = MIMEType.octetStream) -> RequestBody {
        single(.inputStream(stream, length: length), contentType: contentType)
    }
}
