import Multipart

/// Where a resumable form stands between its appends: the parse of the bytes received,
/// the receipt so far, and what of it is on disk (``FormSegments``). Kept in memory while
/// the server runs (``FormProgresses``); after a restart it is made again by reading what
/// is stored once.
struct FormUploadProgress {
    var splitter: FormStreamSplitter
    var receipt: FormReceiptBuilder
    /// The form's bytes on disk, in order: the upload's offset.
    var durable: Int64 = 0
    /// The size of `ID.data`.
    var skeletonSize: Int64 = 0
    /// How many file parts have their splice (and maybe their file) on disk.
    var splicesOnDisk = 0
    /// While the form's raw bytes are split again (``FormSegments/beginSplitting()``): their
    /// size. The raw file goes once the split layout holds as many bytes (the parse may
    /// hold the last ones back until more arrive).
    var rawSize: Int64?

    /// A new form's, parsed with `configuration`'s limits.
    ///
    /// - Throws: `MultipartError` when `contentType` has no boundary.
    init(contentType: String, configuration: ReceiverConfiguration) throws {
        splitter = FormStreamSplitter(try MultipartParser(contentType: contentType, limits: configuration.parserLimits))
        receipt = FormReceiptBuilder(configuration: configuration)
    }
}
