import Multipart

extension UploadEvent {
    /// The size of an upload whose event was summarised (``UploadEvent/Upload/truncated``):
    /// how many files, fields and metadata entries it had, of which the event lists only
    /// the first (files and fields in the order received, metadata by key).
    public struct Truncation: Codable, Equatable, Sendable {
        /// The files the upload's receipt had.
        public let files: Int
        /// The text fields the upload's receipt had.
        public let fields: Int
        /// The metadata entries its authorization granted.
        public let metadata: Int

        /// Creates the counts of a summarised upload.
        public init(files: Int, fields: Int, metadata: Int) {
            self.files = files
            self.fields = fields
            self.metadata = metadata
        }
    }

    /// The most UTF-8 bytes of a text the client or the hook chose (a field's name or value,
    /// a file's name, filename or content type, the path, a metadata key or value) that a
    /// summarised event keeps; a longer one is cut there, on a character's boundary, and
    /// ends with `…`.
    public static let maxSummarisedTextBytes = 1024

    /// The event itself when its JSON has at most `maxBytes` bytes; else a summary that
    /// has (unless its fixed parts alone are larger): its texts cut to
    /// ``maxSummarisedTextBytes``, then as many files, then fields, then metadata entries
    /// as fit, and ``Upload/truncated`` giving the whole counts. The stored files named in
    /// the summary, its ``id`` and ``type`` are the event's.
    public func summarised(within maxBytes: Int) -> UploadEvent {
        guard UploadReceiver.encodeJSON(self).count > maxBytes else { return self }
        let cut = { (text: String) in Self.cut(text) }
        let files = upload.receipt.files.map {
            Receipt.File(name: cut($0.name), filename: cut($0.filename), contentType: $0.contentType.map(cut), size: $0.size,
                         sha256: $0.sha256, storedAs: $0.storedAs, bucket: $0.bucket)
        }
        let fields = upload.receipt.fields.map { Receipt.Field(name: cut($0.name), value: cut($0.value)) }
        let metadata = (upload.metadata ?? [:]).map { (cut($0.key), cut($0.value)) }.sorted { $0.0 < $1.0 }
        let truncation = Truncation(files: files.count, fields: fields.count, metadata: upload.metadata?.count ?? 0)
        let summary = { (files: ArraySlice<Receipt.File>, fields: ArraySlice<Receipt.Field>, metadata: ArraySlice<(String, String)>) in
            UploadEvent(id: id, type: type, upload: Upload(protocol: upload.protocol, method: upload.method, path: cut(upload.path), client: upload.client,
                                                             receipt: Receipt(fields: Array(fields), files: Array(files)),
                                                             metadata: upload.metadata == nil ? nil : Dictionary(metadata.map { $0 }, uniquingKeysWith: { first, _ in first }),
                                                             truncated: truncation))
        }
        // What the lists may take: the bytes left by the summary listing none, each entry
        // counted as encoded, with its comma.
        var budget = maxBytes - UploadReceiver.encodeJSON(summary([], [], [])).count
        let fit = { (sizes: [Int]) -> Int in
            var taken = 0
            for size in sizes {
                guard size + 1 <= budget else { break }
                budget -= size + 1
                taken += 1
            }
            return taken
        }
        var fileCount = fit(files.map { UploadReceiver.encodeJSON($0).count })
        var fieldCount = fit(fields.map { UploadReceiver.encodeJSON($0).count })
        var metadataCount = fit(metadata.map { UploadReceiver.encodeJSON([$0.0: $0.1]).count - 2 })
        var event = summary(files.prefix(fileCount), fields.prefix(fieldCount), metadata.prefix(metadataCount))
        // The estimate is exact but for separators; should it still be over, drop more.
        while UploadReceiver.encodeJSON(event).count > maxBytes, fileCount + fieldCount + metadataCount > 0 {
            if metadataCount > 0 { metadataCount -= 1 } else if fieldCount > 0 { fieldCount -= 1 } else { fileCount -= 1 }
            event = summary(files.prefix(fileCount), fields.prefix(fieldCount), metadata.prefix(metadataCount))
        }
        return event
    }

    /// `text` cut to ``maxSummarisedTextBytes`` UTF-8 bytes, on a character's boundary, then `…`.
    static func cut(_ text: String) -> String {
        guard text.utf8.count > maxSummarisedTextBytes else { return text }
        var kept = Substring(), bytes = 0
        for character in text {
            bytes += character.utf8.count
            guard bytes <= maxSummarisedTextBytes else { break }
            kept.append(character)
        }
        return kept + "…"
    }
}
