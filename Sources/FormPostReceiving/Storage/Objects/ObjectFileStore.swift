/// The files of multipart forms as objects of an ``ObjectStore``'s bucket, each under the
/// storage's prefix and a random name (``ObjectFileSink``). An object is durable once the
/// store has answered for it, so a request's files need nothing more before its receipt.
struct ObjectFileStore: FormFileStore {
    let store: any ObjectStore
    let partSize: Int
    /// The memory the files' parts may hold at once, or nil for no limit.
    let memory: PartMemoryBudget?

    init(store: any ObjectStore, maxFileSize: Int64, memory: PartMemoryBudget?) {
        self.store = store
        partSize = store.partSize(maxFileSize: maxFileSize)
        self.memory = memory
    }

    var bucket: String? { store.bucket }

    func sink(contentType: String?) async throws -> any FormFileSink {
        ObjectFileSink(store: store, key: store.prefix + UploadStore.randomName(), partSize: partSize,
                       contentType: contentType.flatMap(Self.sendable), memory: memory)
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
