/// A problem detail (RFC 9457) of the IETF draft: a mismatching offset, inconsistent lengths.
struct UploadProblem: Codable {
    var type: String
    var title: String
    var expectedOffset: Int64?
    var providedOffset: Int64?

    enum CodingKeys: String, CodingKey {
        case type, title
        case expectedOffset = "expected-offset"
        case providedOffset = "provided-offset"
    }

    static func mismatchingOffset(expected: Int64, provided: Int64) -> UploadProblem {
        UploadProblem(type: "https://iana.org/assignments/http-problem-types#mismatching-upload-offset",
                      title: "offset from request does not match offset of resource", expectedOffset: expected, providedOffset: provided)
    }

    static func inconsistentLength(_ detail: String) -> UploadProblem {
        UploadProblem(type: "https://iana.org/assignments/http-problem-types#inconsistent-upload-length", title: detail)
    }
}
