import FormPostReceiving
import Hummingbird
import Multipart

extension Request {
    /// The parts of this Hummingbird request's `multipart/form-data` body (see `FormParts`).
    ///
    /// - Throws: `MultipartError/missingBoundary(contentType:)` when the request is not multipart.
    public func formParts(limits: MultipartParserLimits = MultipartParserLimits()) throws -> FormParts<RequestBody> {
        try FormParts(contentType: headers[.contentType] ?? "", body: body, limits: limits)
    }
}
