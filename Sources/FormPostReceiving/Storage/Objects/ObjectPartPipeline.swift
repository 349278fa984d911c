import NIOCore

/// Gathers bytes into parts of a multipart upload and sends each full part while the next
/// gathers: with a budget, up to ``partsInFlight`` parts in flight and one gathering (three
/// buffers); without one, one in flight. The buffer of a part landed gathers a later part
/// (the third after its own with two in flight, the second with one), so a store slower
/// than the client slows the client, and no part's memory is allocated anew. The multipart
/// upload is begun (by `begin`) when the first part is full, unless it was given. Used by a
/// form's file (``ObjectFileSink``) and a resumable upload's append (``ObjectUploadAppend``).
///
/// Its buffers are taken from a ``PartMemoryBudget`` (`hold`), when there is one: the first
/// 64 KiB (a small file needs no more), then a whole part. When a buffer does not fit, the
/// pipeline waits for one holding nothing (given back first: of those waiting, none holds
/// what another waits for), or, with a part in flight, waits for the oldest to be sent and
/// gathers the next in its buffer. While others wait for the budget it keeps one part in
/// flight, and gives back the buffers of parts landed beyond it as the next bytes of its
/// body arrive.
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
    /// Whether each part is sent with its CRC32: the multipart upload declares them
    /// (``ObjectAttributes/partChecksums``).
    let checksummed: Bool
    /// What its buffers hold of the receiver's budget, or nil without one.
    let hold: PartMemoryHold?
    /// The most parts in flight at once: ``partsInFlight`` within a budget, else one.
    let maxInFlight: Int
    /// The most parts of one file or append in flight at once, within the budget: two, so
    /// that one is sent while the store answers the other. Measured on Ceph's RADOS Gateway
    /// and on moto: a 1 GiB form in 0.76× and 0.82× the time of one part at a time; four
    /// took no less time than two (on moto), and 15 MiB more memory.
    static let partsInFlight = 2
    /// The multipart upload, once begun.
    private(set) var uploadID: String?
    /// The parts sent, in order (a part in flight counts once it was seen sent).
    private(set) var parts: [ObjectPart]
    /// The bytes past the parts, gathering.
    private(set) var gathering: ByteBuffer
    /// The bytes of the budget that ``gathering`` has (its capacity as reserved).
    private var gatheringHeld: Int
    /// The parts in flight, oldest first, each with its buffer and the bytes of the budget
    /// that buffer has. The buffer is kept here, not returned by the task, so that once the
    /// part landed no other reference to it is left (a finished task may outlive its
    /// result's reader for a moment) and clearing it keeps its storage.
    private var inFlight: [(task: Task<ObjectPart, any Error>, buffer: ByteBuffer, held: Int)] = []

    /// A pipeline after `parts` of the multipart upload `uploadID` (nil: begun when a part
    /// is full) of `key`, whose next part begins with `gathered` (for which `hold` has
    /// `gatheredHeld` bytes already); each part sent with its CRC32 when `checksummed`.
    init(store: any ObjectStore, key: String, partSize: Int, uploadID: String? = nil, parts: [ObjectPart] = [], gathered: ByteBuffer = ByteBuffer(),
         hold: PartMemoryHold? = nil, gatheredHeld: Int = 0, partTimeout: Duration = .seconds(300), checksummed: Bool = false,
         beforeEachPart: @escaping @Sendable () throws -> Void = {}, begin: @escaping @Sendable () async throws -> String) {
        (self.store, self.key, self.partSize, self.uploadID, self.parts, self.gathering) = (store, key, partSize, uploadID, parts, gathered)
        (self.hold, self.gatheringHeld, self.maxInFlight) = (hold, gatheredHeld, hold == nil ? 1 : Self.partsInFlight)
        (self.partTimeout, self.checksummed, self.beforeEachPart, self.begin) = (partTimeout, checksummed, beforeEachPart, begin)
    }

    /// Gathers `bytes`, sending each part they fill.
    mutating func write(_ bytes: ByteBuffer) async throws {
        var bytes = bytes
        while bytes.readableBytes > 0 {
            try await giveBackWhileOthersWait()
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
        let small = needed <= Self.firstBuffer && parts.isEmpty && inFlight.isEmpty
        let target = small ? min(Self.firstBuffer, partSize) : partSize
        if let hold, !hold.takeIfFree(target - gatheringHeld) {
            if !inFlight.isEmpty {
                // No room for another buffer: the oldest part in flight sent, the next gathers in its buffer.
                var landed = try await settleOldest()
                landed.buffer.clear()
                landed.buffer.writeBuffer(&gathering)
                hold.give(gatheringHeld)
                (gathering, gatheringHeld) = landed
                if needed <= gatheringHeld { return }
            }
            // Waiting holds nothing of the budget (what it gathered aside: at most 64 KiB, or
            // the bytes of a part that just landed), so that those waiting never wait for
            // one another.
            try await settle()
            hold.give(gatheringHeld)
            gatheringHeld = 0
            try await hold.take(target)
        }
        gatheringHeld = target
        gathering.reserveCapacity(target)
    }

    /// Sends what is gathered as the next part (the last may be smaller), beginning the
    /// multipart upload with the first. With ``maxInFlight`` parts in flight (one while
    /// others wait for the budget) it first waits for the oldest, whose buffer gathers next;
    /// buffers of parts landed beyond that one go back to the budget.
    mutating func sendGathered() async throws {
        let limit = othersWait ? 1 : maxInFlight
        try await settle(keeping: limit)
        var spare: (buffer: ByteBuffer, held: Int)?
        do {
            if inFlight.count == limit { spare = try await settleOldest() }
            try beforeEachPart()
            if uploadID == nil { uploadID = try await begin() }
        } catch {
            if let spare { hold?.give(spare.held) }
            throw error
        }
        let (store, key, uploadID, number, part, timeout) = (store, key, uploadID!, parts.count + inFlight.count + 1, gathering, partTimeout)
        let checksummed = checksummed
        inFlight.append((Task {
            try await store.sendPart(part, number: number, of: key, uploadID: uploadID, checksummed: checksummed, timeout: timeout)
        }, gathering, gatheringHeld))
        // Taken out of `spare`, the landed buffer has one owner: cleared, it keeps its storage
        // (a second reference would make `clear()` allocate a new part, page by page).
        if var landed = spare.take() {
            landed.buffer.clear()
            (gathering, gatheringHeld) = landed
        } else {
            (gathering, gatheringHeld) = (ByteBuffer(), 0)
        }
    }

    /// While others wait for the budget, waits for the parts in flight but the newest and
    /// gives their buffers back: checked as each of the body's buffers arrives, so that a
    /// file whose parts landed keeps no more than two buffers while others wait.
    private mutating func giveBackWhileOthersWait() async throws {
        guard inFlight.count > 1, othersWait else { return }
        try await settle(keeping: 1)
    }

    /// Whether other requests wait for the budget.
    private var othersWait: Bool { (hold?.budget.waitingCount ?? 0) > 0 }

    /// Waits for the parts in flight, if any, and counts them; their buffers go, and what
    /// they held of the budget with them.
    mutating func settle() async throws {
        try await settle(keeping: 0)
    }

    /// Waits for the oldest parts in flight until at most `count` are, and counts them;
    /// their buffers go, and what they held of the budget with them.
    private mutating func settle(keeping count: Int) async throws {
        while inFlight.count > count {
            let landed = try await settleOldest()
            hold?.give(landed.held)
        }
    }

    /// Waits for the oldest part in flight (there is one) and counts it; returns its buffer
    /// and its share of the budget, which the caller passes on or gives back.
    private mutating func settleOldest() async throws -> (buffer: ByteBuffer, held: Int) {
        let (task, buffer, held) = inFlight.removeFirst()
        do {
            parts.append(try await task.value)
            return (buffer, held)
        } catch {
            hold?.give(held)
            throw error
        }
    }

    /// Stops the parts in flight, if any, and waits for them to end.
    mutating func cancel() async {
        for (task, _, _) in inFlight { task.cancel() }
        for (task, _, held) in inFlight {
            _ = try? await task.value
            hold?.give(held)
        }
        inFlight = []
    }
}
