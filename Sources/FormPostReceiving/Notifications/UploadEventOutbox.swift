#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Multipart
import NIOPosix
import Synchronization

/// A durable queue of ``UploadEvent``s in a directory: a receiver records an upload's event
/// before it answers the upload's receipt, and ``UploadEventDelivery`` hands the events to
/// the application, removing each only once it was taken. So an event is never lost: a
/// server killed between the answer and the delivery delivers it when it runs again (on
/// the same directory); it may then deliver it twice — at least once, never zero times.
///
/// Each event is a file `ID.json` (its ``UploadEvent/id``, which sorts by the time it was
/// recorded), written to a temporary name, synced, renamed into place, and the directory
/// synced, before ``record(_:upload:)`` returns. Files whose names start with `.` are unfinished
/// writes, removed when the outbox is opened. An event that failed is kept with its retry
/// schedule in `ID.retry` beside it; one that is given up on is moved, with its schedule, to
/// `dead/` in the directory (see ``UploadEventDelivery``), where it stays until removed by hand.
///
/// The outbox is bounded, so that a hook that is down for long cannot fill the disk: past
/// ``maxCount`` events or ``maxBytes`` bytes waiting, recording throws, and the upload whose
/// event it is fails with `503` and `Retry-After` — its files removed, nothing answered
/// complete — rather than an event being dropped: an application that must hear of every
/// upload never misses one, and clients are told to come back once the hook has caught up.
/// Each event is held to ``maxEventBytes`` (``UploadEvent/summarised(within:)``). Events set
/// aside in `dead/` do not count.
public final class UploadEventOutbox: Sendable {
    /// The directory of the events not yet delivered.
    public let directory: String
    /// The most events that may wait; past it, recording an event throws.
    public let maxCount: Int
    /// The most bytes the events waiting may hold; past it, recording an event throws.
    public let maxBytes: Int64
    /// The most bytes of one event's JSON: a larger event is summarised to fit.
    public let maxEventBytes: Int
    /// Wakes the delivery when an event is recorded.
    let recorded = EventWakeup()
    /// The events waiting, and their bytes, as recorded and removed.
    private let tally: Mutex<(count: Int, bytes: Int64)>

    /// The default of ``maxCount``.
    public static let defaultMaxCount = 10_000
    /// The default of ``maxBytes``: 64 MiB.
    public static let defaultMaxBytes: Int64 = 64 << 20
    /// The default of ``maxEventBytes``: 256 KiB, above the 64 KiB a hook's answer (and so an
    /// upload's metadata) may have, and below the 1 MiB that proxies commonly cap bodies at.
    public static let defaultMaxEventBytes = 256 << 10
    /// The seconds a client is told to wait (`Retry-After`) when the outbox is full.
    public static let retryAfterSeconds = 30
    /// The directory, in ``directory``, of the events given up on.
    public static let deadLetterDirectory = "dead"

    /// Opens the outbox in `directory`, created if missing (with its parents), holding at
    /// most `maxCount` events and `maxBytes` bytes, each event summarised to `maxEventBytes`;
    /// removes what an interrupted ``record(_:upload:)`` left, and retry schedules whose event is gone.
    ///
    /// - Throws: an error of the file system when the directory cannot be made or read.
    public init(directory: String, maxCount: Int = UploadEventOutbox.defaultMaxCount, maxBytes: Int64 = UploadEventOutbox.defaultMaxBytes,
                maxEventBytes: Int = UploadEventOutbox.defaultMaxEventBytes) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        self.maxCount = maxCount
        self.maxBytes = maxBytes
        self.maxEventBytes = maxEventBytes
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory))
        for name in names where name.hasPrefix(".") || (name.hasSuffix(Self.retrySuffix) && !names.contains(String(name.dropLast(Self.retrySuffix.count)) + ".json")) {
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
        tally = Mutex(try Self.tally(of: directory))
    }

    /// The events waiting in `directory`, and their bytes.
    private static func tally(of directory: String) throws -> (count: Int, bytes: Int64) {
        var count = 0, bytes: Int64 = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where !name.hasPrefix(".") && name.hasSuffix(".json") {
            count += 1
            bytes += size(of: directory + "/" + name) ?? 0
        }
        return (count, bytes)
    }

    /// Counts `count` more events of `bytes` more bytes as waiting, unless that passes a
    /// bound: then nil, or why not (the event being `size` bytes).
    private func reserve(count: Int, bytes: Int64, size: Int) -> String? {
        tally.withLock { tally -> String? in
            if count > 0, tally.count + count > maxCount { return "\(tally.count) events wait, the most the outbox holds (\(maxCount))" }
            if bytes > 0, tally.bytes + bytes > maxBytes { return "the events waiting hold \(tally.bytes) bytes, and this one's \(size) would pass the outbox's \(maxBytes)" }
            tally.count += count
            tally.bytes += bytes
            return nil
        }
    }

    /// Records `event` durably as ``record(_:)`` does, on the calling thread (it
    /// blocks on the disk); an event of the same ``UploadEvent/id`` recorded before and not
    /// yet delivered is replaced.
    ///
    /// - Throws: an error naming what failed when the event could not be written or synced.
    /// - Throws: ``ReceiverFailure/unavailable(_:)`` when the outbox is full (the upload is
    ///   answered 503), or an error naming what failed when the event could not be written or synced.
    func recordNow(_ event: UploadEvent) throws {
        let data = UploadReceiver.encodeJSON(event.summarised(within: maxEventBytes))
        // An event recorded again (a completion taken up again) replaces its file.
        let replaced = Self.size(of: path(of: event.id))
        let (count, bytes) = (replaced == nil ? 1 : 0, Int64(data.count) - (replaced ?? 0))
        var full = reserve(count: count, bytes: bytes, size: data.count)
        if full != nil {
            // Counted anew from the directory (events removed by hand, set aside from dead/), once.
            let counted = try? Self.tally(of: directory)
            if let counted { tally.withLock { $0 = counted } }
            full = reserve(count: count, bytes: bytes, size: data.count)
        }
        if let full {
            throw ReceiverFailure.unavailable("the upload's event cannot be recorded, so the upload is refused (503): \(full) in \(directory); the hook is not taking them")
        }
        do {
            try Self.write(data, as: event.id, in: directory)
        } catch {
            tally.withLock { tally in
                tally.count -= count
                tally.bytes -= bytes
            }
            throw error
        }
        recorded.signal()
    }

    /// The identifiers of the events waiting, oldest first.
    func pending() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { !$0.hasPrefix(".") && $0.hasSuffix(".json") }
            .map { String($0.dropLast(".json".count)) }
            .sorted()
    }

    /// What the file of `id` holds. It blocks on the file system.
    ///
    /// - Throws: the file system's error when the file is there but cannot be read now
    ///   (out of descriptors, an I/O error): the event is to be read again later.
    func read(_ id: String) throws -> StoredUploadEvent {
        let path = path(of: id)
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            if access(path, F_OK) != 0, errno == ENOENT { return .gone }
            throw error
        }
        guard let event = try? JSONDecoder().decode(UploadEvent.self, from: data) else { return .malformed }
        return .event(event)
    }

    /// Removes the event of `id`, delivered, and its retry schedule. (Not synced: an event
    /// that comes back after a crash is delivered again, which at-least-once allows.)
    func remove(_ id: String) {
        unlink(schedulePath(of: id))
        let size = Self.size(of: path(of: id))
        if unlink(path(of: id)) == 0 { forget(size) }
    }

    /// Moves a file that holds no event out of the queue, to `ID.json.unreadable`, so that
    /// the events after it go on.
    func setAside(_ id: String) {
        let size = Self.size(of: path(of: id))
        if rename(path(of: id), path(of: id) + ".unreadable") == 0 { forget(size) }
    }

    /// Moves the event of `id`, given up on, and its retry schedule to the dead letters
    /// (`dead/ID.json`, `dead/ID.retry`); the path it has there.
    ///
    /// - Throws: ``ReceiverFailure/storage(_:)`` when it cannot be moved.
    @discardableResult
    func deadLetter(_ id: String) throws -> String {
        let dead = directory + "/" + Self.deadLetterDirectory
        if mkdir(dead, 0o700) != 0, errno != EEXIST { throw ReceiverFailure.storing("making \(dead) failed", errno: errno) }
        let size = Self.size(of: path(of: id)), target = dead + "/" + id + ".json"
        guard rename(path(of: id), target) == 0 else { throw ReceiverFailure.storing("moving the event \(id) to \(dead) failed", errno: errno) }
        forget(size)
        rename(schedulePath(of: id), dead + "/" + id + Self.retrySuffix)
        return target
    }

    /// The retry schedules of the events that failed, by event.
    func schedules() -> [String: EventSchedule] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var schedules: [String: EventSchedule] = [:]
        for name in names where !name.hasPrefix(".") && name.hasSuffix(Self.retrySuffix) {
            let id = String(name.dropLast(Self.retrySuffix.count))
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                  let schedule = try? JSONDecoder().decode(EventSchedule.self, from: data) else { continue }
            schedules[id] = schedule
        }
        return schedules
    }

    /// The schedule in `ID.retry`, or nil when there is none (or it cannot be read).
    func schedule(of id: String) -> EventSchedule? {
        FileManager.default.contents(atPath: schedulePath(of: id)).flatMap { try? JSONDecoder().decode(EventSchedule.self, from: $0) }
    }

    /// Keeps `schedule` as the event `id`'s, in `ID.retry` (written whole by a rename, not
    /// synced: a schedule lost in a crash only brings the next attempt sooner).
    func save(_ schedule: EventSchedule, of id: String) {
        let temporary = directory + "/." + id + Self.retrySuffix
        guard FileManager.default.createFile(atPath: temporary, contents: UploadReceiver.encodeJSON(schedule)) else { return }
        if rename(temporary, schedulePath(of: id)) != 0 { unlink(temporary) }
    }

    /// The suffix of a retry schedule's file.
    static let retrySuffix = ".retry"

    private func path(of id: String) -> String { directory + "/" + id + ".json" }
    private func schedulePath(of id: String) -> String { directory + "/" + id + Self.retrySuffix }

    /// Counts an event of `size` bytes as no longer waiting.
    private func forget(_ size: Int64?) {
        tally.withLock { tally in
            tally.count = max(0, tally.count - 1)
            tally.bytes = max(0, tally.bytes - (size ?? 0))
        }
    }

    /// The size of the file at `path`, or nil when there is none.
    private static func size(of path: String) -> Int64? {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : nil
    }

    /// The identifier of the event of an upload whose completion was recorded before events
    /// had identifiers saved with it: made from its stored file's random name, so that the
    /// completion taken up again records the same event. It sorts before every other.
    static func legacyID(of storedAs: String) -> String {
        String(repeating: "0", count: 23) + "-" + String(storedAs.prefix(16))
    }

    /// A new identifier: nanoseconds since 1970, 23 digits, then 16 random hexadecimal digits.
    static func newID() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let nanoseconds = String(UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec))
        let random = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return String(repeating: "0", count: max(0, 23 - nanoseconds.count)) + nanoseconds + "-"
            + String(repeating: "0", count: 16 - random.count) + random
    }

    /// Writes `data` to `.ID.json` in `directory`, syncs it, renames it to `ID.json`, and
    /// syncs the directory.
    private static func write(_ data: Data, as id: String, in directory: String) throws {
        let temporary = directory + "/." + id + ".json", final = directory + "/" + id + ".json"
        let what = "recording an upload's event failed"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ReceiverFailure.storing(what, errno: errno) }
        var closed = false
        defer { if !closed { close(descriptor) } }
        do {
            let written = data.withUnsafeBytes { SystemFile(descriptor: descriptor).writeAll($0) }
            guard written else { throw ReceiverFailure.storing(what, errno: errno) }
            try FileSync.data(descriptor, what: what)
            closed = true
            guard close(descriptor) == 0 else { throw ReceiverFailure.storing(what, errno: errno) }
            guard rename(temporary, final) == 0 else { throw ReceiverFailure.storing(what, errno: errno) }
        } catch {
            unlink(temporary)
            throw error
        }
        do {
            try FileSync.directory(directory, what: what)
        } catch {
            // Not recorded, since not durable: its upload fails, so no event may go out for it.
            unlink(final)
            throw error
        }
    }
}
