/// Which of ``MultipartParserLimits`` a body crossed, named as the property that sets it.
public enum MultipartLimit: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ``MultipartParserLimits/maxHeaderBytes``: the header block of one part.
    case maxHeaderBytes
    /// ``MultipartParserLimits/maxParts``: the number of parts.
    case maxParts
    /// ``MultipartParserLimits/maxPartBytes``: the content of one part.
    case maxPartBytes
    /// ``MultipartParserLimits/maxTotalBytes``: the whole body.
    case maxTotalBytes

    /// The property's name, as in `maxPartBytes`.
    public var description: String { rawValue }
}
