import HTTPTypes

/// The iterations of the IETF draft "Resumable Uploads for HTTP" spoken here, by their
/// `Upload-Draft-Interop-Version`.
///
/// | version | drafts | what differs |
/// | --- | --- | --- |
/// | 3 | -01 | `Upload-Incomplete` (the inverse) instead of `Upload-Complete` (Apple: iOS 17, macOS 14) |
/// | 5 | -03 | `Upload-Complete`; appends of any media type (iOS 18.0, macOS 15.0) |
/// | 6 | -04, -05 | appends are `application/partial-upload` (iOS 18.1, macOS 15.1 and later) |
/// | 7 | -06 to -08 | `max-age` instead of `expires` in `Upload-Limit` |
/// | 8 | -09 to -11, and the editors' copy of 1 July 2026 | |
/// | 9 | -12 | no change on the wire |
package enum DraftInterop {
    /// The version this client sends: the one of the newest text read.
    package static let current = 8
    /// The versions the receiver answers with an interim response and speaks.
    package static let supported: Set<Int> = [3, 5, 6, 7, 8, 9]

    /// The version a request asks for: nil without the field (a client of the final RFC),
    /// or its integer (which may be unsupported).
    package static func version(of fields: HTTPFields) -> Int? {
        StructuredField.integer(fields[.uploadDraftInteropVersion]).map(Int.init)
    }

    /// Whether a request of `version` says it completes the upload: nil when it says
    /// nothing (no such field, or not a Boolean).
    package static func completes(_ fields: HTTPFields, version: Int?) -> Bool? {
        if version == 3 { return StructuredField.boolean(fields[.uploadIncomplete]).map { !$0 } }
        return StructuredField.boolean(fields[.uploadComplete])
    }

    /// Whether a request asks for a resumable upload: it has `Upload-Complete` (or, for
    /// version 3, `Upload-Incomplete`).
    package static func asksForResumableUpload(_ fields: HTTPFields) -> Bool {
        completes(fields, version: version(of: fields)) != nil
    }

    /// Sets the completeness field of a response to a client of `version`.
    package static func mark(_ fields: inout HTTPFields, complete: Bool, version: Int?) {
        if version == 3 {
            fields[.uploadIncomplete] = StructuredField.serialize(!complete)
        } else {
            fields[.uploadComplete] = StructuredField.serialize(complete)
        }
    }

    /// Whether appends of `version` must be `application/partial-upload`.
    package static func requiresPartialUploadType(_ version: Int?) -> Bool { (version ?? current) >= 6 }

    /// The media type of an append.
    package static let partialUpload = "application/partial-upload"
}
