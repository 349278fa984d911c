/// Multipart's Foundation additions (`InputStream` parts, `FileHandle` output, `NSNumber`
/// and property-list values) come with FormPostFoundation, which needs Foundation anyway,
/// so code that imports it keeps the names it had when FormPost brought them.
@_exported import MultipartFoundation
