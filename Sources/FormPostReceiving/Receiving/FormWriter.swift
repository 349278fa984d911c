import Multipart
import NIOCore

/// Consumes parser events for one request: files go to the sinks of a ``FormFileStore``,
/// fields are kept as text. On any failure, ``discardAll()`` removes every file of the
/// request, finished or not.
struct FormWriter {
    private let configuration: ReceiverConfiguration
    private let store: any FormFileStore
    private var receipt = Receipt()
    private var head: PartHead?
    private var sink: (any FormFileSink)?
    private var field: [UInt8] = []
    private var fieldBytes: Int64 = 0
    private var stored: [String] = []

    init(configuration: ReceiverConfiguration, store: any FormFileStore) {
        self.configuration = configuration
        self.store = store
    }

    mutating func handle(_ event: MultipartBufferEvent) async throws {
        switch event {
        case .partBegin(let begun):
            head = begun
            field = []
            if begun.filename != nil {
                sink = try await store.sink(contentType: begun.contentType)
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
                receipt.files.append(.init(name: part.name, filename: filename, contentType: part.contentType, size: file.size, sha256: digest,
                                           storedAs: file.storedName, bucket: store.bucket))
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

    /// Ends a complete form: the store makes its files safe (with the directory and
    /// ``ReceiptDurability/synced``, the directory is synced once) before the receipt.
    func finish() async throws {
        try await store.finish(stored: stored)
    }

    /// Removes the unfinished file and every file this request stored.
    mutating func discardAll() async {
        await sink?.discard()
        sink = nil
        await store.remove(stored: stored)
        stored = []
    }
}
