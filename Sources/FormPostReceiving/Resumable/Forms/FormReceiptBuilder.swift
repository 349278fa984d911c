import FormPostDigests
import Multipart
import NIOCore

/// The receipt of a form taken part by part, with the receiver's limits, as ``FormWriter``
/// makes it for a form received in one request — without storing anything: files are
/// numbered in order, and named once the form is complete. A file part's SHA-256 is taken
/// here, or (``takeHasher()``) beside the writes of its content and given back.
struct FormReceiptBuilder {
    /// A file part received whole.
    struct FilePart {
        var name: String
        var filename: String
        var contentType: String?
        var size: Int64
        /// Its SHA-256 in hexadecimal; empty when it was not taken as the content arrived
        /// (``resumeFile(size:)``): it is read from the part's file.
        var sha256: String
    }

    private let configuration: ReceiverConfiguration
    private(set) var fields: [Receipt.Field] = []
    private(set) var files: [FilePart] = []
    /// How many file parts have begun: the next one's number.
    private(set) var filePartsBegun = 0
    private var head: PartHead?
    private var field: [UInt8] = []
    private var fieldBytes: Int64 = 0
    private var fileSize: Int64 = 0
    private var hasher: SHA256Hasher?

    init(configuration: ReceiverConfiguration) {
        self.configuration = configuration
    }

    /// The number of the file part being received, if the current part is one.
    var currentFilePart: Int? { head?.filename != nil ? filePartsBegun - 1 : nil }

    mutating func begin(_ head: PartHead) {
        self.head = head
        field = []
        if head.filename != nil {
            filePartsBegun += 1
            fileSize = 0
            hasher = SHA256Hasher()
        }
    }

    /// Takes content of the current part: a file's is counted (and hashed, unless its
    /// hasher is out), a field's kept.
    ///
    /// - Throws: ``ReceiverFailure/limitExceeded(_:value:)`` past a file's or a field's limit.
    mutating func content(_ bytes: ByteBuffer) throws {
        guard let head else { return }
        if head.filename != nil {
            fileSize += Int64(bytes.readableBytes)
            if hasher != nil { bytes.withUnsafeReadableBytes { hasher!.update(bufferPointer: $0) } }
            if fileSize > configuration.maxFileSize {
                throw ReceiverFailure.limitExceeded(.maxFileSize, value: configuration.maxFileSize)
            }
            return
        }
        field += bytes.readableBytesView
        fieldBytes += Int64(bytes.readableBytes)
        try configuration.checkField(Int64(field.count), total: fieldBytes)
    }

    /// Takes out the current file part's hasher, to be updated beside the writes of its
    /// content; give it back with ``putHasher(_:)`` before the part ends.
    mutating func takeHasher() -> SHA256Hasher? {
        defer { hasher = nil }
        return hasher
    }

    mutating func putHasher(_ hasher: SHA256Hasher?) {
        self.hasher = hasher
    }

    /// Gives the file part `index`, which ended, the size and SHA-256 of its content: a
    /// parse made again from a form's `ID.data` alone saw none of it.
    mutating func restoreFile(_ index: Int, size: Int64, sha256: String) {
        guard files.indices.contains(index) else { return }
        files[index].size = size
        files[index].sha256 = sha256
    }

    /// Gives the current file part the `size` of its content so far, which a parse made
    /// again from a form's `ID.data` alone did not see: its SHA-256 is no longer taken as
    /// the rest arrives, but read from its file once it is needed.
    mutating func resumeFile(size: Int64) {
        guard currentFilePart != nil else { return }
        fileSize = size
        hasher = nil
    }

    /// Gives file part `index` its SHA-256, read from its file.
    mutating func setDigest(_ index: Int, sha256: String) {
        guard files.indices.contains(index) else { return }
        files[index].sha256 = sha256
    }

    /// Ends the current part.
    mutating func end() {
        guard let part = head else { return }
        if let filename = part.filename {
            let digest = hasher.map { Hexadecimal.string($0.finalize()) } ?? ""
            files.append(FilePart(name: part.name, filename: filename, contentType: part.contentType, size: fileSize, sha256: digest))
            hasher = nil
        } else {
            fields.append(Receipt.Field(name: part.name, value: String(decoding: field, as: UTF8.self)))
        }
        head = nil
    }

    /// The receipt, with the stored names of the file parts, in order.
    func receipt(storedAs names: [String]) -> Receipt {
        Receipt(fields: fields, files: zip(files, names).map {
            Receipt.File(name: $0.name, filename: $0.filename, contentType: $0.contentType, size: $0.size, sha256: $0.sha256, storedAs: $1)
        })
    }
}
