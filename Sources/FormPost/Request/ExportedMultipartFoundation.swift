/// Multipart's Foundation additions (`InputStream` parts, `FileHandle` output, `NSNumber`
/// and property-list values) come with FormPost, which needs Foundation anyway, so code
/// that imports FormPost and Multipart keeps compiling as it did before they moved.
@_exported import MultipartFoundation
