import NIOCore

/// Gathers bytes into parts of a multipart upload and sends each full part while the next
/// gathers: at most two parts' buffers are held — the one gathering and the one in flight,
/// whose buffer gathers the next but one — so a store slower than the client slows the
/// client, and no allocator keeps a freed buffer of every part. The multipart upload is
/// begun (by `begin`) when the first part is full, unless it was given. Used by a form's
/// file (``ObjectFileSink``) and a resumable upload's append (``ObjectUploadAppend``).
///
/// Its buffers are taken from a ``PartMemoryBudget`` (`hold`), when there is one: the first
/// 64 KiB (a small file needs no more), then a whole part. When a buffer does not fit, the
/// pipeline waits for one holding nothing (given back first: of those waiting, none holds
/// what another waits for), or, with a part in flight, waits for that part to be sent and
/// gathers the next in its buffer.
struct ObjectPartPipeline {
    /// What a buffer takes first from the budget: small files stop there.
    static let firstBuffer = 64 << 10

    let store: any ObjectStore
    let key: String
    let partSize: Int
    /// Each attempt to send a part ends within it.
    let partTimeout: Duration
    /// Called before each part is sent; what it throws stops the pipeline (a lease lost).
    let beforeEachPart: @Sendable () throws -> Void
    /// Begins the multipart upload; returns its ID.
    let begin: @Sendable () async throws -> String
    /// What its buffers hold of the receiver's budget, or nil without one.
    let hold: PartMemoryHold?
    /// The multipart upload, once begun.
    private(set) var uploadID: String?
    /// The parts sent, in order (the one in flight counts once ``settle()`` has seen it sent).
    private(set) var parts: [ObjectPart]
    /// The bytes past the parts, gathering.
    private(set) var gathering: ByteBuffer
    /// The bytes of the budget that ``gathering`` has (its capacity as reserved).
    private var gatheringHeld: Int
    private var sending: Task<(part: ObjectPart, buffer: ByteBuffer), any Error>?
    /// The bytes of the budget that the buffer of the part in flight has.
    private var sendingHeld = 0

    /// A pipeline after `parts` of the multipart upload `uploadID` (nil: begun when a part
    /// is full) of `key`, whose next part begins with `gathered` (for which `hold` has
    /// `gatheredHeld` bytes already).
    init(store: any ObjectStore, key: String, partSize: Int, uploadID: String? = nil, parts: [ObjectPart] = [], gathered: ByteBuffer = ByteBuffer(),
         hold: PartMemoryHold? = nil, gatheredHeld: Int = 0, partTimeout: Duration = .seconds(300),
         beforeEachPart: @escaping @Sendable () throws -> Void = {}, begin: @escaping @Sendable () async throws -> String) {
        (self.store, self.key, self.partSize, self.uploadID, self.parts, self.gathering) = (store, key, partSize, uploadID, parts, gathered)
        (self.hold, self.gatheringHeld) = (hold, gatheredHeld)
        (self.partTimeout, self.beforeEachPart, self.begin) = (partTimeout, beforeEachPart, begin)
    }

    /// Gathers `bytes`, sending each part they fill.
    mutating func write(_ bytes: ByteBuffer) async throws {
        var bytes = bytes
        while bytes.readableBytes > 0 {
            let count = min(bytes.readableBytes, partSize - gathering.readableBytes)
            try await makeRoom(for: gathering.readableBytes + count)
            var slice = bytes.readSlice(length: count)!
            gathering.writeBuffer(&slice)
            if gathering.readableBytes == partSize { try await sendGathered() }
        }
    }

    /// Makes ``gathering`` hold `needed` bytes, taken from the budget: 64 KiB while the first
    /// part is under it, else a part.
    private mutating func makeRoom(for needed: Int) async throws {
        guard needed > gatheringHeld else { return }
        let small = needed <= Self.firstBuffer && parts.isEmpty && sending == nil
        let target = small ? min(Self.firstBuffer, partSize) : partSize
        if let hold, !hold.takeIfFree(target - gatheringHeld) {
            if sending != nil {
                // No room for a second part: the one in flight sent, the next gathers in its buffer.
                var spare = try await settleKeepingBuffer()
                spare.clear()
                spare.writeBuffer(&gathering)
                hold.give(gatheringHeld)
                (gathering, gatheringHeld, sendingHeld) = (spare, sendingHeld, 0)
                if needed <= gatheringHeld { return }
            }
            // Waiting holds nothing of the budget (its buffer, at most 64 KiB here, aside),
            // so that those waiting never wait for one another.
            hold.give(gatheringHeld)
            gatheringHeld = 0
            try await hold.take(target)
        }
        gatheringHeld = target
        gathering.reserveCapacity(target)
    }

    /// Sends what is gathered as the next part (the last may be smaller) once the one
    /// before has gone, beginning the multipart upload with the first.
    mutating func sendGathered() async throws {
        var spare: ByteBuffer?
        var spareHeld = 0
        if sending != nil {
            spare = try await settleKeepingBuffer()
            spareHeld = sendingHeld
        }
        try beforeEachPart()
        if uploadID == nil { uploadID = try await begin() }
        let (store, key, uploadID, number, part, timeout) = (store, key, uploadID!, parts.count + 1, gathering, partTimeout)
        sending = Task { (try await store.sendPart(part, number: number, of: key, uploadID: uploadID, timeout: timeout), part) }
        sendingHeld = gatheringHeld
        if var spare {
            spare.clear()
            (gathering, gatheringHeld) = (spare, spareHeld)
        } else {
            (gathering, gatheringHeld) = (ByteBuffer(), 0)
        }
    }

    /// Waits for the part in flight, if any, and counts it; its buffer goes, and what it held
    /// of the budget with it.
    mutating func settle() async throws {
        guard sending != nil else { return }
        _ = try await settleKeepingBuffer()
        hold?.give(sendingHeld)
        sendingHeld = 0
    }

    /// Waits for the part in flight (there is one) and counts it; returns its buffer, whose
    /// share of the budget (``sendingHeld``) the caller passes on or gives back.
    private mutating func settleKeepingBuffer() async throws -> ByteBuffer {
        let task = sending!
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
