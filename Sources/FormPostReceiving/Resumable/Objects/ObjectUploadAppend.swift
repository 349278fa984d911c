#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import HTTPTypes
import NIOCore

/// One append to a resumable upload in object storage (tus or the draft), under its lease: the bytes past the
/// upload's parts (its tail object) are read first, the request's body gathers after them,
/// and each full part is sent to the multipart upload while the next gathers (two in flight
/// at most, three parts' bytes held). What is left at the end — fewer bytes than a part —
/// waits for the caller: in a new tail object, or as the last part when the upload is complete. The
/// parts go through an ``ObjectPartPipeline``. Nothing
/// counts until the caller saves the state naming it (``ObjectUploadStore/save(_:id:replacing:)``).
/// An append whose lease ran out (``HeldLease``) stops before it sends another part. Its
/// buffers come from the store's ``PartMemoryBudget``, held until ``endMemory()`` — the
/// bytes past its parts (``Outcome/rest``) included, which the caller sends or stores.
struct ObjectUploadAppend<Info: ResumableUploadInfo> {
    /// How the body ended.
    struct Outcome {
        /// The parts the state names now: its own and those sent.
        var parts: [ObjectPart]
        /// The multipart upload, begun by this append if it was the first to fill a part.
        var uploadID: String?
        /// Whether the multipart upload declares CRC32 checksums of its parts
        /// (``ObjectUploadState/checksummedParts``).
        var checksummedParts: Bool?
        /// The bytes past ``parts``: the old tail's and the body's.
        var rest: ByteBuffer
        /// The bytes of the body taken (never past ``room``).
        var received: Int64
        /// Whether the request was cut (its client went away) before its end.
        var cut: Bool
        /// Whether the body went past ``room`` (nothing past it was taken).
        var overflowed: Bool
    }

    let store: ObjectUploadStore<Info>
    let id: String
    let state: ObjectUploadState<Info>
    let lease: HeldLease
    /// The most bytes the body may add: up to the upload's length, or its limit when the
    /// length is not known yet.
    let room: Int64
    /// The multipart upload this append began (the upload had none), which only a state
    /// saved after it names: ``abandon()`` aborts it when none will be.
    private(set) var begun: String?
    /// What its buffers hold of the store's budget.
    private let hold: PartMemoryHold?

    init(store: ObjectUploadStore<Info>, id: String, state: ObjectUploadState<Info>, lease: HeldLease, room: Int64) {
        (self.store, self.id, self.state, self.lease, self.room) = (store, id, state, lease, room)
        hold = store.memory.map(PartMemoryHold.init)
    }

    /// Gives back the memory its buffers held: call it once done with ``Outcome/rest``.
    func endMemory() {
        hold?.end()
    }

    /// Takes `body` after the upload's bytes, hashing what it takes into `digest` and
    /// what it receives into `checksum`.
    ///
    /// - Throws: ``ObjectStorageError`` when the store fails (nothing of the append counts);
    ///   ``UploadStorageFailure/leaseLost`` when the lease was lost.
    mutating func run(_ body: ReceiverRequestBody, digest: inout SHA256Hasher?, checksum: inout ChecksumHasher?) async throws -> Outcome {
        let partSize = store.partSize(of: state)
        var gathered = ByteBuffer()
        if let tail = state.tail {
            // Read into a part's buffer, which the budget has first.
            try await hold?.take(partSize)
            gathered = try await store.read(tail, partSize: partSize)
            gathered.reserveCapacity(partSize)
        }
        // A multipart upload this append begins declares checksums where the store keeps them.
        var beginning = state
        if state.uploadID == nil { beginning.checksummedParts = store.store.checksumsParts ? true : nil }
        let (store, lease, hold) = (store, lease, hold)
        var pipeline = ObjectPartPipeline(store: store.store, key: state.key, partSize: partSize, uploadID: state.uploadID, parts: state.parts,
                                          gathered: consume gathered, hold: hold, gatheredHeld: hold?.held ?? 0, partTimeout: store.partTimeout,
                                          checksummed: beginning.checksummedParts == true, beforeEachPart: { try lease.check() }) { [beginning] in
            try await store.beginMultipart(beginning)
        }
        var outcome = Outcome(parts: state.parts, uploadID: state.uploadID, checksummedParts: state.checksummedParts, rest: ByteBuffer(), received: 0,
                              cut: false, overflowed: false)
        let pumped: Result<Void, any Error>
        do {
            try await pump(body, into: &pipeline, outcome: &outcome, digest: &digest, checksum: &checksum)
            try await pipeline.settle()
            pumped = .success(())
        } catch {
            await pipeline.cancel()
            pumped = .failure(error)
        }
        // A multipart upload begun here is named by no state until the caller saves one.
        if pipeline.uploadID != state.uploadID { begun = pipeline.uploadID }
        try pumped.get()
        (outcome.parts, outcome.uploadID, outcome.rest) = (pipeline.parts, pipeline.uploadID, pipeline.gathering)
        if outcome.uploadID != nil { outcome.checksummedParts = beginning.checksummedParts }
        return outcome
    }

    /// Feeds `body` into `pipeline`, up to ``room``; a body that fails is a cut request.
    private func pump(_ body: ReceiverRequestBody, into pipeline: inout ObjectPartPipeline, outcome: inout Outcome, digest: inout SHA256Hasher?,
                      checksum: inout ChecksumHasher?) async throws {
        var iterator = body.makeAsyncIterator()
        while true {
            let next: ByteBuffer?
            do {
                next = try await iterator.next()
            } catch {
                outcome.cut = true
                return
            }
            guard var buffer = next else { return }
            if Int64(buffer.readableBytes) > room - outcome.received {
                outcome.overflowed = true
                buffer = buffer.getSlice(at: buffer.readerIndex, length: Int(room - outcome.received))!
            }
            buffer.withUnsafeReadableBytes { bytes in
                digest?.update(bufferPointer: bytes)
                checksum?.update(bytes)
            }
            outcome.received += Int64(buffer.readableBytes)
            try await pipeline.write(buffer)
            if outcome.overflowed { return }
        }
    }

    /// After a step past ``run(_:digest:checksum:)`` failed (the tail written, the state
    /// saved, the completion): aborts the multipart upload this append began and removes
    /// `tail` (the tail object it wrote), unless the state in the store names them — the
    /// step may have reached the store before it failed. When the state cannot be read,
    /// they are left to the bucket's lifecycle rule.
    func abandonUnsaved(tail: ObjectUploadState<Info>.Tail?) async {
        guard begun != nil || tail != nil, let (saved, _) = try? await store.load(id) else { return }
        if let begun, saved.uploadID != begun { await store.abort(begun, key: state.key) }
        if let tail, saved.tail != tail { await store.removeObject(tail.key) }
    }

    /// Aborts the multipart upload this append began, when no state will name it (the
    /// append failed, or counts for nothing): no part of it is left in the store.
    func abandon() async {
        guard let begun else { return }
        await store.abort(begun, key: state.key)
    }
}
