/// The files of multipart forms as objects of an ``ObjectStorage`` bucket, each under the
/// storage's prefix and a random name (``S3ObjectSink``). An object is durable once the
/// store has answered for it, so a request's files need nothing more before its receipt.
struct S3FileStore: FormFileStore {
    let client: S3Client
    let partSize: Int

    init(storage: ObjectStorage, maxFileSize: Int64) {
        client = S3Client(storage: storage)
        partSize = ObjectStorage.partSize(maxFileSize: maxFileSize)
    }

    var bucket: String? { client.storage.bucket }

    func sink(contentType: String?) async throws -> any FormFileSink {
        S3ObjectSink(client: client, key: client.storage.prefix + UploadStore.randomName(), partSize: partSize,
                     contentType: contentType.flatMap(Self.sendable))
    }

    /// `contentType` when it can go in a field as it is (visible ASCII and spaces), else nil.
    private static func sendable(_ contentType: String) -> String? {
        contentType.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } && !contentType.isEmpty ? contentType : nil
    }

    func finish(stored: [String]) async throws {}

    func remove(stored: [String]) async {
        for key in stored { await client.sendDetached(.DELETE, key: key, what: "removing \(key)") }
    }
}
