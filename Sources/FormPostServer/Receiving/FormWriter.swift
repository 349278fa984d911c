#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Multipart
import NIOCore
import NIOPosix

/// Consumes parser events for one request: files go to ``FileSink``s, fields are kept as
/// text. On any failure, ``discardAll()`` removes every file of the request, finished or not.
struct FormWriter {
    private let configuration: ReceiverConfiguration
    private var receipt = Receipt()
    private var head: PartHead?
    private var sink: FileSink?
    private var field: [UInt8] = []
    private var fieldBytes: Int64 = 0
    private var stored: [String] = []

    init(configuration: ReceiverConfiguration) {
        self.configuration = configuration
    }

    mutating func handle(_ event: MultipartBufferEvent) async throws {
        switch event {
        case .partBegin(let begun):
            head = begun
            field = []
            if begun.filename != nil {
                sink = try await FileSink.create(directory: configuration.directory, mode: configuration.storedFileMode,
                                                 synced: configuration.durability == .synced)
            }
        case .body(let bytes):
            if sink != nil {
                try await sink!.write(bytes)
                if sink!.size > configuration.maxFileSize {
                    throw ReceiverFailure.limitExceeded(.maxFileSize, value: configuration.maxFileSize)
                }
            } else {
                field += bytes.readableBytesView
                fieldBytes += Int64(bytes.readableBytes)
                try configuration.checkField(Int64(field.count), total: fieldBytes)
            }
        case .partEnd:
            guard let part = head else { return }
            if var file = sink, let filename = part.filename {
                sink = nil
                let digest = try await file.complete()
                stored.append(file.storedName)
                receipt.files.append(.init(name: part.name, filename: filename, contentType: part.contentType, size: file.size, sha256: digest, storedAs: file.storedName))
            } else {
                receipt.fields.append(.init(name: part.name, value: String(decoding: field, as: UTF8.self)))
            }
            head = nil
        case .end:
            break
        }
    }

    /// The receipt of a complete form.
    var result: Receipt { receipt }

    /// Ends a complete form: with ``ReceiptDurability/synced``, when it stored files, the
    /// directory is synced once (their new names on the disk) before the receipt is answered.
    func finish(threadPool: NIOThreadPool = .singleton) async throws {
        guard configuration.durability == .synced, !stored.isEmpty else { return }
        let directory = configuration.directory
        try await threadPool.runIfActive { try FileSync.directory(directory, what: "syncing the directory of stored files failed") }
    }

    /// Removes the partial file and every file this request stored.
    mutating func discardAll() {
        sink?.discard()
        sink = nil
        for name in stored { unlink(configuration.directory + "/" + name) }
        stored = []
    }
}
