import Foundation
import Multipart

extension MultipartForm {
    /// Appends a part read once from a Foundation `InputStream` of `length` bytes (parity with
    /// Alamofire's `append(_:withLength:name:fileName:mimeType:)`). Producing the body a second
    /// time fails with `MultipartError/streamAlreadyConsumed(part:)`.
    public mutating func append(name: String, inputStream: InputStream, length: Int64, filename: String? = nil, mimeType: String? = nil, headers extra: [HeaderField] = []) {
        let type = mimeType ?? filename.map(MIMEType.forFilename)
        append(headers: Self.headers(name: name, filename: filename, mimeType: type, extra: extra), body: .inputStream(inputStream, length: length))
    }
}
