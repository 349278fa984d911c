#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import Hummingbird
import NIOCore

/// One append to a resumable upload in object storage (tus or the draft), under its lease: the bytes past the
/// upload's parts (its tail object) are read first, the request's body gathers after them,
/// and each full part is sent to the multipart upload while the next gathers (at most two
/// parts' bytes held). What is left at the end — fewer bytes than a part — waits for the
/// caller: in a new tail object, or as the last part when the upload is complete. Nothing
/// counts until the caller saves the state naming it (``ObjectUploadStore/save(_:id:replacing:)``).
/// An append whose lease ran out (``HeldLease``) stops before it sends another part.
struct ObjectUploadAppend<Info: ObjectUploadInfo> {
    /// How the body ended.
    struct Outcome {
        /// The parts the state names now: its own and those sent.
        var parts: [ObjectUploadState<Info>.Part]
        /// The multipart upload, begun by this append if it was the first to fill a part.
        var uploadID: String?
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

    /// Takes `body` after the upload's bytes, hashing what it takes into `digest` and
    /// what it receives into `checksum`.
    ///
    /// - Throws: ``ObjectStorageError`` when the store fails (nothing of the append counts);
    ///   ``ObjectUploadFailure/leaseLost`` when the lease was lost.
    mutating func run(_ body: RequestBody, digest: inout SHA256Hasher?, checksum: inout ChecksumHasher?) async throws -> Outcome {
        let partSize = store.partSize(of: state)
        var gathering = ByteBuffer()
        if let tail = state.tail { gathering = try await store.read(tail, partSize: partSize) }
        gathering.reserveCapacity(partSize)
        var outcome = Outcome(parts: state.parts, uploadID: state.uploadID, rest: ByteBuffer(), received: 0, cut: false, overflowed: false)
        var sending: Task<(ObjectUploadState<Info>.Part, ByteBuffer), any Error>?
        defer { sending?.cancel() }
        var iterator = body.makeAsyncIterator()
        while true {
            let next: ByteBuffer?
            do {
                next = try await iterator.next()
            } catch {
                outcome.cut = true
                break
            }
            guard var buffer = next else { break }
            if Int64(buffer.readableBytes) > room - outcome.received {
                outcome.overflowed = true
                buffer = buffer.getSlice(at: buffer.readerIndex, length: Int(room - outcome.received))!
            }
            buffer.withUnsafeReadableBytes { bytes in
                digest?.update(bufferPointer: bytes)
                checksum?.update(bytes)
            }
            outcome.received += Int64(buffer.readableBytes)
            while buffer.readableBytes > 0 {
                var slice = buffer.readSlice(length: min(buffer.readableBytes, partSize - gathering.readableBytes))!
                gathering.writeBuffer(&slice)
                guard gathering.readableBytes == partSize else { continue }
                // A full part: sent once the one before has gone, while the next gathers.
                let spare = try await awaitPart(&sending, into: &outcome)
                try lease.check()
                if outcome.uploadID == nil {
                    outcome.uploadID = try await store.beginMultipart(state)
                    begun = outcome.uploadID
                }
                let (store, part, number, key, uploadID) = (store, gathering, outcome.parts.count + 1, state.key, outcome.uploadID!)
                sending = Task { (try await store.sendPart(part, number: number, key: key, uploadID: uploadID), part) }
                if var spare {
                    spare.clear()
                    gathering = spare
                } else {
                    gathering = ByteBufferAllocator().buffer(capacity: partSize)
                }
            }
            if outcome.overflowed { break }
        }
        _ = try await awaitPart(&sending, into: &outcome)
        outcome.rest = gathering
        return outcome
    }

    /// Aborts the multipart upload this append began, when no state will name it (the
    /// append failed, or counts for nothing): no part of it is left in the store.
    func abandon() async {
        guard let begun else { return }
        await store.abort(begun, key: state.key)
    }

    /// Waits for the part being sent, if any, and counts it; returns its buffer for reuse.
    private func awaitPart(_ sending: inout Task<(ObjectUploadState<Info>.Part, ByteBuffer), any Error>?, into outcome: inout Outcome) async throws -> ByteBuffer? {
        guard let task = sending else { return nil }
        sending = nil
        let (part, buffer) = try await task.value
        outcome.parts.append(part)
        return buffer
    }
}
