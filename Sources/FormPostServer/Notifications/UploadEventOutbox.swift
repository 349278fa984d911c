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

/// A durable queue of ``UploadEvent``s in a directory: a receiver records an upload's event
/// before it answers the upload's receipt, and ``UploadEventDelivery`` hands the events to
/// the application, removing each only once it was taken. So an event is never lost: a
/// server killed between the answer and the delivery delivers it when it runs again (on
/// the same directory); it may then deliver it twice — at least once, never zero times.
///
/// Each event is a file `ID.json` (its ``UploadEvent/id``, which sorts by the time it was
/// recorded), written to a temporary name, synced, renamed into place, and the directory
/// synced, before ``record(_:upload:)`` returns. Files whose names start with `.` are unfinished
/// writes, removed when the outbox is opened.
public final class UploadEventOutbox: Sendable {
    /// The directory of the events not yet delivered.
    public let directory: String
    /// Wakes the delivery when an event is recorded.
    let recorded = EventWakeup()

    /// Opens the outbox in `directory`, created if missing (with its parents); removes what
    /// an interrupted ``record(_:upload:)`` left.
    ///
    /// - Throws: an error of the file system when the directory cannot be made or read.
    public init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name.hasPrefix(".") {
            try? FileManager.default.removeItem(atPath: directory + "/" + name)
        }
    }

    /// Records an event about `upload` of `type`, durably (on NIO's thread pool: it syncs
    /// the disk), and wakes the delivery. Returns the event.
    ///
    /// - Throws: an error naming what failed (with the system's error) when the event could
    ///   not be written or synced.
    @discardableResult
    public func record(_ type: String, upload: UploadEvent.Upload) async throws -> UploadEvent {
        let event = UploadEvent(id: Self.newID(), type: type, upload: upload)
        try await NIOThreadPool.singleton.runIfActive { try self.recordNow(event) }
        return event
    }

    /// Records `event` durably as ``record(_:upload:)`` does, on the calling thread (it
    /// blocks on the disk); an event of the same ``UploadEvent/id`` recorded before and not
    /// yet delivered is replaced.
    ///
    /// - Throws: an error naming what failed when the event could not be written or synced.
    func recordNow(_ event: UploadEvent) throws {
        try Self.write(UploadReceiver.encodeJSON(event), as: event.id, in: directory)
        recorded.signal()
    }

    /// The identifiers of the events waiting, oldest first.
    func pending() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { !$0.hasPrefix(".") && $0.hasSuffix(".json") }
            .map { String($0.dropLast(".json".count)) }
            .sorted()
    }

    /// What the file of an event holds.
    enum Stored {
        /// The event.
        case event(UploadEvent)
        /// Bytes that are no event (``setAside(_:)`` them).
        case malformed
        /// No file: the event was removed meanwhile.
        case gone
    }

    /// What the file of `id` holds. It blocks on the file system.
    ///
    /// - Throws: the file system's error when the file is there but cannot be read now
    ///   (out of descriptors, an I/O error): the event is to be read again later.
    func read(_ id: String) throws -> Stored {
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

    /// Removes the event of `id`, delivered. (Not synced: an event that comes back after a
    /// crash is delivered again, which at-least-once allows.)
    func remove(_ id: String) {
        unlink(path(of: id))
    }

    /// Moves a file that holds no event out of the queue, to `ID.json.unreadable`, so that
    /// the events after it go on.
    func setAside(_ id: String) {
        rename(path(of: id), path(of: id) + ".unreadable")
    }

    private func path(of id: String) -> String { directory + "/" + id + ".json" }

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
