import HTTPTypes

extension HTTPField.Name {
    // tus 1.0
    /// `Tus-Resumable`: the protocol version, on every request and response but `OPTIONS`'s request.
    package static let tusResumable = Self("Tus-Resumable")!
    /// `Tus-Version`: the versions a server speaks.
    package static let tusVersion = Self("Tus-Version")!
    /// `Tus-Extension`: the extensions a server supports.
    package static let tusExtension = Self("Tus-Extension")!
    /// `Tus-Max-Size`: the largest upload a server takes.
    package static let tusMaxSize = Self("Tus-Max-Size")!
    /// `Tus-Checksum-Algorithm`: the checksum algorithms a server verifies.
    package static let tusChecksumAlgorithm = Self("Tus-Checksum-Algorithm")!
    /// `Upload-Checksum`: an append's checksum, `ALGORITHM BASE64`.
    package static let uploadChecksum = Self("Upload-Checksum")!
    /// `Upload-Metadata`: keys and base64 values.
    package static let uploadMetadata = Self("Upload-Metadata")!
    /// `Upload-Expires`: when an incomplete upload goes, as an HTTP date.
    package static let uploadExpires = Self("Upload-Expires")!

    // Both
    /// `Upload-Offset`: how many bytes of the upload the server has.
    package static let uploadOffset = Self("Upload-Offset")!
    /// `Upload-Length`: the whole upload's size.
    package static let uploadLength = Self("Upload-Length")!
    /// `Upload-Defer-Length: 1`: the upload's size is not known yet (tus's
    /// creation-defer-length); an append declares it later with `Upload-Length`.
    package static let uploadDeferLength = Self("Upload-Defer-Length")!
    /// `Upload-Concat`: `partial` for an upload to be joined, `final;URL URL…` for the upload
    /// joining them (tus's concatenation).
    package static let uploadConcat = Self("Upload-Concat")!

    // The IETF draft
    /// `Upload-Complete`: whether the request carries (or the response comes after) the end of the upload.
    package static let uploadComplete = Self("Upload-Complete")!
    /// `Upload-Incomplete`: interop version 3's inverse of `Upload-Complete` (Apple's iOS 17, macOS 14).
    package static let uploadIncomplete = Self("Upload-Incomplete")!
    /// `Upload-Limit`: the limits of an upload resource, a structured dictionary.
    package static let uploadLimit = Self("Upload-Limit")!
    /// `Upload-Draft-Interop-Version`: which iteration of the draft a client speaks.
    package static let uploadDraftInteropVersion = Self("Upload-Draft-Interop-Version")!
}

extension HTTPResponse.Status {
    /// 104 Upload Resumption Supported: the IETF draft's interim response.
    package static let uploadResumptionSupported = Self(code: 104, reasonPhrase: "Upload Resumption Supported")
    /// 423 Locked: another request holds the upload.
    package static let locked = Self(code: 423, reasonPhrase: "Locked")
    /// 460 Checksum Mismatch: tus's answer to an append whose checksum is wrong.
    package static let checksumMismatch = Self(code: 460, reasonPhrase: "Checksum Mismatch")
}
