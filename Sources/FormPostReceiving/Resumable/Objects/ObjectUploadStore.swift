#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostDigests
import Multipart
import NIOCore

/// Resumable uploads kept in object storage, in the style of tusd's `s3store`, so that any
/// receiver on the bucket can continue any upload: under `PREFIX.NAME/` (`.tus/` for tus,
/// `.resumable/` for the draft), the upload's state `ID.info` (`ObjectUploadState`,
/// written with `If-None-Match: *` at creation and with `If-Match` on the ETag read ever
/// after, so that no state is saved over one it did not read), its lease `ID.lease`
/// (``ObjectLease``: one receiver appends, completes or removes at a time), and its tail
/// objects `ID.tail-RANDOM` (the bytes past its parts). Its bytes go into an S3 multipart
/// upload of the object `PREFIX KEY`, which becomes the stored file.
struct ObjectUploadStore<Info: ResumableUploadInfo>: Sendable {
    typealias State = ObjectUploadState<Info>

    let store: any ObjectStore
    /// The bucket for the leases' requests (``ObjectStore/leaseTraffic``).
    var leases: any ObjectStore { store.leaseTraffic }
    /// The name of the directory-like prefix its uploads' state is kept under: `tus`, `resumable`.
    let name: String
    /// The size of every part but the last: `ObjectStorage/partSize(maxFileSize:)`.
    let partSize: Int
    /// How long a lease lasts, in seconds; it is renewed while an append runs.
    let leaseSeconds: Double
    /// Where completions record their uploads' events, or nil for none.
    let events: (any UploadEventQueue)?
    /// The memory appends' parts may hold at once, or nil for no limit.
    var memory: PartMemoryBudget? = nil
    /// How long after its creation an upload expires at the latest, in seconds, or nil.
    var maxLifetime: Double? = nil
    /// The limits of uploads in progress, as this receiver counts them; nil for none.
    var admission: ObjectAdmission? = nil

    /// The keys of uploads' state, leases and tails begin with this.
    var statePrefix: String { store.prefix + "." + name + "/" }
    func infoKey(_ id: String) -> String { statePrefix + id + ".info" }
    func leaseKey(_ id: String) -> String { statePrefix + id + ".lease" }
    /// An empty object that stands while the upload's completion is recorded and not
    /// finished, so that a sweep finds it by listing the keys (``ObjectUploadSweep``).
    func completingKey(_ id: String) -> String { statePrefix + id + ".completing" }

    /// A new upload's state: its object's key chosen now, at a random name under the
    /// prefix, and the size of its parts.
    func newState(_ info: Info) -> State {
        State(info: info, key: store.prefix + UploadStore.randomName(), partSize: partSize)
    }

    /// The part size of the upload `state` describes.
    func partSize(of state: State) -> Int { state.partSize ?? partSize }

    /// Begins the upload `id` of `info`: its object's key chosen (or `key`), its state
    /// saved, and (`beginningMultipart`) its multipart upload begun first when its length
    /// says it will have parts — named by its first state, so that an append that dies
    /// after sending a part leaves none unnamed.
    func start(_ id: String, info: Info, key: String? = nil, beginningMultipart: Bool = true) async throws {
        var state = newState(info)
        if let key { state.key = key }
        if beginningMultipart, let length = info.knownLength, length >= Int64(partSize) {
            state.checksummedParts = store.checksumsParts ? true : nil
            state.uploadID = try await beginMultipart(state)
        }
        do {
            try await create(state, id: id)
        } catch {
            if let uploadID = state.uploadID { await abort(uploadID, key: state.key) }
            throw error
        }
    }

    /// Begins a new upload of `info` for `client` (``start(_:info:key:beginningMultipart:)``,
    /// its object's key `key(id)` when given) under an id that ``admission`` gives, its limits
    /// counted with uploads expiring `expiry` after their last activity; returns the id.
    ///
    /// - Throws: ``UploadAdmission/Refusal`` when a limit would be passed; what `start` throws.
    func startAdmitted(_ info: Info, client: String?, expiry: Duration, key: ((String) -> String)? = nil,
                       beginningMultipart: Bool = true) async throws -> String {
        guard let admission else {
            let id = UploadStore.randomName()
            try await start(id, info: info, key: key?(id), beginningMultipart: beginningMultipart)
            return id
        }
        let id = try await admission.admit(client: client, created: info.created, in: self, expiry: expiry)
        do {
            try await start(id, info: info, key: key?(id), beginningMultipart: beginningMultipart)
        } catch {
            admission.forget(id)
            throw error
        }
        admission.created(id)
        return id
    }

    /// Saves the state of a new upload `id`; it fails if one exists.
    func create(_ state: State, id: String) async throws {
        var stamped = state
        stamped.active = Date().timeIntervalSince1970
        do {
            _ = try await store.put(infoKey(id), body: try Self.encoded(stamped), condition: .absent, what: "creating the upload \(id)")
        } catch let error as ObjectStorageError where error.isConditionFailure {
            // Sent again after an answer was lost: done, if what is there is what was sent.
            guard let (saved, _) = try await load(id), saved == stamped else { throw error }
        }
    }

    /// The state of `id` and its ETag, or nil when there is none.
    func load(_ id: String) async throws -> (state: State, etag: String)? {
        let answer: ObjectAnswer
        do {
            answer = try await store.get(infoKey(id), maxBytes: 1 << 20, what: "reading the upload \(id)")
        } catch ObjectStorageError.refused(_, 404, _, _) {
            return nil
        }
        guard let etag = answer.etag, let state = try? JSONDecoder().decode(State.self, from: Data(answer.bytes.readableBytesView)) else {
            throw ObjectStorageError.refused(what: "reading the upload \(id)", status: answer.status, code: nil, message: "the state is unreadable")
        }
        return (state, etag)
    }

    /// Saves `state`, stamped active now (unless not `stampingActive`), over the one whose
    /// ETag is `etag`; returns the new ETag.
    ///
    /// - Throws: ``UploadStorageFailure/changed`` when the state changed since it was read
    ///   (another receiver saved it: what this one did is not counted), ``ObjectStorageError``.
    func save(_ state: State, id: String, replacing etag: String, stampingActive: Bool = true) async throws -> String {
        var stamped = state
        if stampingActive { stamped.active = Date().timeIntervalSince1970 }
        do {
            let answer = try await store.put(infoKey(id), body: try Self.encoded(stamped), condition: .matching(etag: etag),
                                             what: "saving the upload \(id)")
            guard let saved = answer.etag else {
                throw ObjectStorageError.refused(what: "saving the upload \(id)", status: answer.status, code: nil, message: "no ETag in the answer")
            }
            return saved
        } catch let error as ObjectStorageError where error.isConditionFailure {
            // Sent again after an answer was lost: done, if what is there is what was sent.
            if let (saved, savedETag) = try await load(id), saved == stamped { return savedETag }
            throw UploadStorageFailure.changed
        }
    }

    /// The lease of `id`, or nil while another receiver holds it.
    func lease(_ id: String) async throws -> ObjectLease? {
        try await ObjectLease.take(leaseKey(id), for: leaseSeconds, with: leases)
    }

    /// The bytes of `tail` (fewer than a part of `partSize`).
    func read(_ tail: State.Tail, partSize: Int) async throws -> ByteBuffer {
        let answer = try await store.get(tail.key, maxBytes: partSize, what: "reading the bytes past the parts of \(tail.key)")
        guard answer.bytes.readableBytes == tail.size else {
            throw ObjectStorageError.refused(what: "reading \(tail.key)", status: answer.status, code: nil,
                                             message: "\(answer.bytes.readableBytes) bytes, not the \(tail.size) saved")
        }
        return answer.bytes
    }

    /// Stores `bytes` as a new tail object of `id`.
    func writeTail(_ bytes: ByteBuffer, id: String) async throws -> State.Tail {
        let key = statePrefix + id + ".tail-" + UploadStore.randomName()
        _ = try await store.put(key, body: bytes, what: "storing the bytes past the parts of \(id)")
        return State.Tail(key: key, size: Int64(bytes.readableBytes))
    }

    /// Begins the multipart upload of `state`'s object, declaring CRC32 checksums of its
    /// parts when the state says (``ObjectUploadState/checksummedParts``); returns its ID.
    func beginMultipart(_ state: State) async throws -> String {
        var attributes = Self.attributes(state.info)
        attributes.partChecksums = state.checksummedParts == true
        return try await store.beginMultipartUpload(of: state.key, attributes: attributes)
    }

    /// How long each attempt to send a part may take: 5 minutes, as a form's part, whatever
    /// the lease's duration — the lease is renewed on connections of its own while a part is
    /// in flight, and checked before the state naming the part is saved. A part that lands
    /// after its sender lost the lease is named by no state of that sender; should it replace
    /// the part of the same number that the new holder sent, its bytes are the same (part
    /// `N` always holds the same range of the upload, which a client resumes with the same
    /// bytes), and the completion checks each part's ETag against the state's.
    var partTimeout: Duration { .seconds(300) }

    /// Sends `bytes` as part `number` of the multipart upload `uploadID` of `key`, each
    /// attempt within ``partTimeout``; with its CRC32 when `checksummed` (the multipart
    /// upload declared them: ``ObjectUploadState/checksummedParts``).
    func sendPart(_ bytes: ByteBuffer, number: Int, key: String, uploadID: String, checksummed: Bool) async throws -> State.Part {
        try await store.sendPart(bytes, number: number, of: key, uploadID: uploadID, checksummed: checksummed, timeout: partTimeout)
    }

    /// Makes the object of `state` from its parts — unless it is there already, whole (a
    /// completion taken up again after this step).
    func completeMultipart(_ state: State) async throws {
        guard let uploadID = state.uploadID else { return }
        if await size(of: state.key) == state.info.knownLength { return }
        try await store.completeMultipartUpload(of: state.key, uploadID: uploadID, parts: state.parts)
    }

    /// Stores a whole upload smaller than a part as one object, its SHA-256 in its metadata.
    func putWhole(_ bytes: ByteBuffer, state: State, sha256: String) async throws {
        _ = try await store.put(state.key, body: bytes, attributes: Self.attributes(state.info, sha256: sha256), what: "storing \(state.key)")
    }

    /// The SHA-256 of the object `key`, read back from the store (an upload whose bytes
    /// this receiver did not all take: no running hash covers them).
    func sha256(of key: String) async throws -> String {
        var hasher = SHA256Hasher()
        try await store.read(key, what: "reading \(key) back to hash it") { buffer in
            buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        }
        return Hexadecimal.string(hasher.finalize())
    }

    /// The size of the object `key`, or nil when there is none (or the store cannot say).
    func size(of key: String) async -> Int64? {
        (try? await store.size(of: key, what: "looking at \(key)")) ?? nil
    }

    /// Removes what `state` left of the upload `id`, holding its lease (`held`): its
    /// multipart upload (aborted), its tail, its state and lease; its object too when
    /// `storedObject`, or when it is under the state prefix (a partial upload's, never a
    /// stored file).
    ///
    /// - Throws: ``UploadStorageFailure/leaseLost`` when the lease is no longer held (checked
    ///   before each removal; what was removed before stays removed): another receiver may
    ///   be at work on the upload.
    func remove(_ id: String, state: State, storedObject: Bool, holding held: HeldLease) async throws {
        var keys = [state.tail?.key, completingKey(id), infoKey(id), leaseKey(id)].compactMap { $0 }
        if storedObject || state.key.hasPrefix(statePrefix) { keys.append(state.key) }
        if let uploadID = state.uploadID {
            try held.check()
            await abort(uploadID, key: state.key)
        }
        for key in keys {
            try held.check()
            await removeObject(key)
        }
        admission?.forget(id)
    }

    /// The uploads a sweep has to look at, from a listing of the state prefix (`listed`):
    /// those whose completion is recorded and not finished (``completingKey(_:)``), and those
    /// whose state was last written more than `expiry` ago.
    func uploadsToSweep(in listed: [ListedObject], expiry: Duration) -> (completing: [(id: String, marked: Date?)], idle: [String]) {
        let before = Date(timeIntervalSinceNow: -Double(expiry.components.seconds))
        let id = { (object: ListedObject, suffix: String) in String(object.key.dropFirst(statePrefix.count).dropLast(suffix.count)) }
        let completing = listed.filter { $0.key.hasSuffix(".completing") }.map { (id: id($0, ".completing"), marked: $0.lastModified) }
        let idle = listed.filter { $0.key.hasSuffix(".info") && ($0.lastModified ?? .distantFuture) < before }.map { id($0, ".info") }
        return (completing, idle)
    }

    /// Aborts the multipart upload `uploadID` of `key`, best effort (what is left, the
    /// bucket's `AbortIncompleteMultipartUpload` rule removes).
    func abort(_ uploadID: String, key: String) async {
        await store.abortMultipartUpload(of: key, uploadID: uploadID, attempts: 2)
    }

    /// Removes the object `key`, best effort (what is left, a lifecycle rule removes).
    func removeObject(_ key: String) async {
        await store.delete(key, what: "removing \(key)", attempts: 2)
    }

    /// Records `upload`'s event of `type` under `event` in ``events``, if there are.
    func announce(_ upload: UploadEvent.Upload, as event: String?, type: String = UploadEvent.postFinish) async throws {
        guard let events else { return }
        let recorded = UploadEvent(id: event ?? UploadEventOutbox.newID(), type: type, upload: upload)
        try await events.record(recorded)
    }

    private static func attributes(_ info: Info, sha256: String? = nil) -> ObjectAttributes {
        guard let type = info.objectContentType,
              !type.isEmpty, type.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return ObjectAttributes(sha256: sha256) }
        return ObjectAttributes(contentType: type, sha256: sha256)
    }

    private static func encoded(_ state: State) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONEncoder().encode(state))
    }
}

extension ObjectUploadStore {
    /// The store of `configuration`'s object storage for the uploads under `PREFIX.name/`, or
    /// nil where `configuration` keeps uploads on the disk.
    init?(configuration: ReceiverConfiguration, name: String) {
        guard let store = configuration.objectStorage else { return nil }
        self.init(store: store, name: name, partSize: store.partSize(maxFileSize: configuration.maxFileSize),
                  leaseSeconds: Double(store.leaseDuration.components.seconds), events: configuration.events, memory: configuration.partMemory,
                  maxLifetime: configuration.resumableMaxLifetime.map { Double($0.components.seconds) },
                  admission: ObjectAdmission(rule: UploadAdmission(configuration: configuration)))
    }
}
