import HTTPTypes

extension HTTPField.Name {
    /// tus's header fields.
    static let tusResumable = Self("Tus-Resumable")!
    static let tusVersion = Self("Tus-Version")!
    static let tusExtension = Self("Tus-Extension")!
    static let tusMaxSize = Self("Tus-Max-Size")!
    static let uploadOffset = Self("Upload-Offset")!
    static let uploadLength = Self("Upload-Length")!
    static let uploadMetadata = Self("Upload-Metadata")!
    static let uploadExpires = Self("Upload-Expires")!
}

extension HTTPResponse.Status {
    /// 423: another request holds the upload.
    static let locked = Self(code: 423, reasonPhrase: "Locked")
}
