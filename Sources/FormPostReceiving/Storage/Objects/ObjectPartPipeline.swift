import NIOCore

/// Gathers bytes into parts of a multipart upload and sends each full part while the next
/// gathers: at most two parts' buffers are held — the one gathering and the one in flight,
/// whose buffer gathers the next but one — so a store slower than the client slows the
/// client, and no allocator keeps a freed buffer of every part. The multipart upload is
/// begun (by `begin`) when the first part is full, unless it was given. Used by a form's
/// file (``ObjectFileSink``) and a resumable upload's append (``ObjectUploadAppend``).
struct ObjectPartPipeline {
    let store: any ObjectStore
    let key: String
    let partSize: Int
    /// Each attempt to send a part ends within it.
    let partTimeout: Duration
    /// Called before each part is sent; what it throws stops the pipeline (a lease lost).
    let beforeEachPart: @Sendable () throws -> Void
    /// Begins the multipart upload; returns its ID.
    let begin: @Sendable () async throws -> String
    /// The multipart upload, once begun.
    private(set) var uploadID: String?
    /// The parts sent, in order (the one in flight counts once ``settle()`` has seen it sent).
    private(set) var parts: [ObjectPart]
    /// The bytes past the parts, gathering.
    private(set) var gathering: ByteBuffer
    private var sending: Task<(part: ObjectPart, buffer: ByteBuffer), any Error>?

    /// A pipeline after `parts` of the multipart upload `uploadID` (nil: begun when a part
    /// is full) of `key`, whose next part begins with `gathered`.
    init(store: any ObjectStore, key: String, partSize: Int, uploadID: String? = nil, parts: [ObjectPart] = [], gathered: ByteBuffer = ByteBuffer(),
         partTimeout: Duration = .seconds(300), beforeEachPart: @escaping @Sendable () throws -> Void = {},
         begin: @escaping @Sendable () async throws -> String) {
        (self.store, self.key, self.partSize, self.uploadID, self.parts, self.gathering) = (store, key, partSize, uploadID, parts, gathered)
        (self.partTimeout, self.beforeEachPart, self.begin) = (partTimeout, beforeEachPart, begin)
    }

    /// Gathers `bytes`, sending each part they fill.
    mutating func write(_ bytes: ByteBuffer) async throws {
        var bytes = bytes
        while bytes.readableBytes > 0 {
            if gathering.capacity < partSize { gathering.reserveCapacity(partSize) }
            var slice = bytes.readSlice(length: min(bytes.readableBytes, partSize - gathering.readableBytes))!
            gathering.writeBuffer(&slice)
            if gathering.readableBytes == partSize { try await sendGathered() }
        }
    }

    /// Sends what is gathered as the next part (the last may be smaller) once the one
    /// before has gone, beginning the multipart upload with the first.
    mutating func sendGathered() async throws {
        let spare = try await settle()
        try beforeEachPart()
        if uploadID == nil { uploadID = try await begin() }
        let (store, key, uploadID, number, part, timeout) = (store, key, uploadID!, parts.count + 1, gathering, partTimeout)
        sending = Task { (try await store.sendPart(part, number: number, of: key, uploadID: uploadID, timeout: timeout), part) }
        if var spare {
            spare.clear()
            gathering = spare
        } else {
            gathering = ByteBufferAllocator().buffer(capacity: partSize)
        }
    }

    /// Waits for the part in flight, if any, and counts it; returns its buffer.
    @discardableResult
    mutating func settle() async throws -> ByteBuffer? {
        guard let task = sending else { return nil }
        sending = nil
        let (part, buffer) = try await task.value
        parts.append(part)
        return buffer
    }

    /// Stops the part in flight, if any, and waits for it to end.
    mutating func cancel() async {
        sending?.cancel()
        _ = try? await sending?.value
        sending = nil
    }
}
