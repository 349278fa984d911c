/// The files of multipart forms as objects of an ``ObjectStore``'s bucket, each under the
/// storage's prefix and a random name (``ObjectFileSink``). An object is durable once the
/// store has answered for it, so a request's files need nothing more before its receipt.
struct ObjectFileStore: FormFileStore {
    let store: any ObjectStore
    let partSize: Int

    init(store: any ObjectStore, maxFileSize: Int64) {
        self.store = store
        partSize = store.partSize(maxFileSize: maxFileSize)
    }

    var bucket: String? { store.bucket }

    func sink(contentType: String?) async throws -> any FormFileSink {
        ObjectFileSink(store: store, key: store.prefix + UploadStore.randomName(), partSize: partSize,
                       contentType: contentType.flatMap(Self.sendable))
    }

    /// `contentType` when it can go in a field as it is (visible ASCII and spaces), else nil.
    private static func sendable(_ contentType: String) -> String? {
        contentType.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } && !contentType.isEmpty ? contentType : nil
    }

    func finish(stored: [String]) async throws {}

    func remove(stored: [String]) async {
        for key in stored { await store.delete(key, what: "removing \(key)") }
    }
}
