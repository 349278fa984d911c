#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NIOCore
import Synchronization

/// Upload events kept in the bucket that the receivers share (``ReceiverConfiguration/objectStorage``),
/// so that an event outlives the receiver that recorded it and that receiver's disk: a
/// receiver killed before it delivered an event, its disk gone with it, leaves the event to
/// the others. Under `PREFIX.events/`: each event `ID.json` (written before its upload is
/// answered), its retry schedule `ID.retry` once an attempt failed, and the lease
/// `ID.lease` of the receiver delivering it (a lease, as an upload's, renewed while the delivery
/// runs), so that of the receivers only one offers an event at a time; `dead/` holds the
/// events given up on, `unreadable/` what held no event.
///
/// Every receiver runs an ``UploadEventDelivery`` on it: the one that recorded an event
/// offers it at once; the others list the events every ``pollInterval`` and offer those
/// due. The hook sees an event once unless a receiver stopped after the hook took it and
/// before it was removed, or lost its lease while the hook held the request past it: then
/// twice, with the same ``UploadEvent/id``.
///
/// The queue holds about ``maxCount`` events at most (each summarised to ``maxEventBytes``):
/// past it, recording throws and the upload is answered 503, as with ``UploadEventOutbox``.
/// Each receiver counts the events of its last listing and those it recorded since, so
/// receivers recording at once may pass it by the events they recorded since they last
/// listed; an event recorded again (a completion taken up again) counts twice until then.
public final class ObjectEventQueue: UploadEventQueue {
    /// The bucket.
    public let store: any ObjectStore
    /// The most events that may wait (as this receiver counts them); past it, recording an
    /// event throws.
    public let maxCount: Int
    /// The most bytes of one event's JSON: a larger event is summarised to fit.
    public let maxEventBytes: Int
    /// How often the delivery lists the events again.
    public let pollInterval: Duration?
    /// What every key of the queue begins with.
    let keyPrefix: String
    /// How long a delivering receiver's lease on an event lasts unless renewed, in seconds.
    private let leaseSeconds: Double
    /// Wakes this receiver's delivery when it records an event.
    private let recorded = EventWakeup()
    /// The events waiting as last listed, and those recorded since.
    private let waiting = Mutex(0)
    /// The events that had a retry schedule when last listed.
    private let scheduled = Mutex<[String]>([])

    /// The queue under `PREFIX.events/` of `store`, holding at most `maxCount` events, each
    /// summarised to `maxEventBytes`, listed again every `pollInterval` (the store's
    /// ``ObjectStore/sweepInterval`` when nil).
    public init(store: any ObjectStore, maxCount: Int = UploadEventOutbox.defaultMaxCount, maxEventBytes: Int = UploadEventOutbox.defaultMaxEventBytes,
                pollInterval: Duration? = nil) {
        self.store = store
        self.maxCount = maxCount
        self.maxEventBytes = maxEventBytes
        self.pollInterval = pollInterval ?? store.sweepInterval
        keyPrefix = store.prefix + ".events/"
        leaseSeconds = store.leaseDuration.seconds
    }

    /// The bucket and the prefix of the queue's keys.
    public var location: String { store.bucket + "/" + keyPrefix }

    private func key(_ id: String, _ suffix: String) -> String { keyPrefix + id + suffix }

    /// Writes `event` as `ID.json` (summarised to ``maxEventBytes``; one of the same id is
    /// replaced), and wakes this receiver's delivery.
    ///
    /// - Throws: a `503` refusal (`ReceiverFailure.unavailable`) past ``maxCount``; `ObjectStorageError`.
    public func record(_ event: UploadEvent) async throws {
        let data = UploadReceiver.encodeJSON(event.summarised(within: maxEventBytes))
        if !reserve() {
            // Counted anew from the bucket (events delivered by other receivers), once.
            let listed = try? await pendingEvents()
            guard listed != nil, reserve() else {
                throw ReceiverFailure.unavailable("the upload's event cannot be recorded, so the upload is refused (503): "
                    + "\(waiting.withLock { $0 }) events wait in \(location), the most it holds (\(maxCount)); the hook is not taking them")
            }
        }
        do {
            _ = try await store.put(key(event.id, ".json"), body: ByteBuffer(bytes: data), what: "recording the upload's event \(event.id)")
        } catch {
            waiting.withLock { $0 -= 1 }
            throw error
        }
        recorded.signal()
    }

    /// Counts one more event as waiting, unless ``maxCount`` wait; whether it did.
    private func reserve() -> Bool {
        waiting.withLock { count in
            guard count < maxCount else { return false }
            count += 1
            return true
        }
    }

    /// The events listed under the prefix (not those in `dead/` or `unreadable/`). The
    /// leases and schedules of events that are gone are removed, once older than two
    /// leases (their holder's request is over).
    public func pendingEvents() async throws -> [String] {
        let listed = try await store.listTopLevel(prefix: keyPrefix)
        var events = Set<String>(), others: [(id: String, key: String, modified: Date?)] = [], schedules: [String] = []
        for object in listed {
            let name = object.key.dropFirst(keyPrefix.count)
            guard !name.contains("/"), let dot = name.firstIndex(of: ".") else { continue }
            let id = String(name[..<dot])
            switch name[dot...] {
            case ".json": events.insert(id)
            case ".retry":
                schedules.append(id)
                others.append((id, object.key, object.lastModified))
            case ".lease": others.append((id, object.key, object.lastModified))
            default: continue
            }
        }
        for other in others where !events.contains(other.id) {
            if let modified = other.modified, Date().timeIntervalSince(modified) > 2 * leaseSeconds { await store.delete(other.key, what: "removing \(other.key)") }
        }
        waiting.withLock { $0 = events.count }
        scheduled.withLock { $0 = schedules.filter(events.contains) }
        return events.sorted()
    }

    /// The object `ID.json`: the event, `.gone` when there is none, `.malformed` when it
    /// is no event (or longer than any event recorded).
    public func storedEvent(_ id: String) async throws -> StoredUploadEvent {
        let answer: ObjectAnswer
        do {
            answer = try await store.get(key(id, ".json"), maxBytes: 2 * maxEventBytes, what: "reading the event \(id)")
        } catch let error as ObjectStorageError where error.status == 404 {
            return .gone
        } catch let error as ObjectStorageError where error.status == 200 {
            // Longer than any event recorded: no event.
            return .malformed
        }
        guard let event = try? JSONDecoder().decode(UploadEvent.self, from: Data(answer.bytes.readableBytesView)) else { return .malformed }
        return .event(event)
    }

    /// Runs `body` holding the event's lease, renewed while it runs; nil while another
    /// receiver holds it.
    public func claiming<T: Sendable>(_ id: String, _ body: () async throws -> T) async throws -> T? {
        let leases = store.leaseTraffic
        guard let lease = try await ObjectLease.take(key(id, ".lease"), for: leaseSeconds, with: leases) else { return nil }
        return try await HeldLease.holding(lease, for: leaseSeconds, with: leases) { _ in try await body() }
    }

    /// Removes `ID.retry` and `ID.json` (each in a task of its own, sent even when the
    /// caller is cancelled).
    public func removeDelivered(_ id: String) async {
        await store.delete(key(id, ".retry"), what: "removing the schedule of the delivered event \(id)")
        await store.delete(key(id, ".json"), what: "removing the delivered event \(id)")
        waiting.withLock { $0 = max(0, $0 - 1) }
    }

    /// Copies what `id` holds to `unreadable/ID.json`, then removes it.
    public func setAsideUnreadable(_ id: String) async {
        guard (try? await move(id, ".json", to: "unreadable/")) != nil else { return }
        waiting.withLock { $0 = max(0, $0 - 1) }
    }

    /// Copies the event and its schedule to `dead/`, then removes them.
    public func moveToDeadLetters(_ id: String) async throws -> String {
        // The event first: the live event keeps its schedule until it is moved.
        try await move(id, ".json", to: "dead/")
        _ = try? await move(id, ".retry", to: "dead/")
        waiting.withLock { $0 = max(0, $0 - 1) }
        return location + "dead/" + id + ".json"
    }

    /// The most bytes of an object moved to `dead/` or `unreadable/`: a larger one (put there
    /// by hand: no event is near it) stays, and is offered again.
    static let largestMoved = 16 << 20

    /// Writes the object `ID SUFFIX` again under `folder`, then removes it.
    private func move(_ id: String, _ suffix: String, to folder: String) async throws {
        let from = key(id, suffix)
        let answer = try await store.get(from, maxBytes: Self.largestMoved, what: "reading \(from)")
        _ = try await store.put(keyPrefix + folder + id + suffix, body: answer.bytes, what: "moving \(from) to \(folder)")
        await store.delete(from, what: "removing \(from), moved to \(folder)")
    }

    /// The schedules of the events that had one when last listed (those read now).
    public func retrySchedules() async -> [String: EventSchedule] {
        var schedules: [String: EventSchedule] = [:]
        for id in scheduled.withLock({ $0 }) {
            if let schedule = await retrySchedule(of: id) { schedules[id] = schedule }
        }
        return schedules
    }

    /// The object `ID.retry`, as another receiver may have written it since the last listing.
    public func retrySchedule(of id: String) async -> EventSchedule? {
        guard let answer = try? await store.get(key(id, ".retry"), maxBytes: 4096, what: "reading the schedule of the event \(id)") else { return nil }
        return try? JSONDecoder().decode(EventSchedule.self, from: Data(answer.bytes.readableBytesView))
    }

    /// Writes `ID.retry`, for every receiver's delivery to follow.
    public func keepSchedule(_ schedule: EventSchedule, of id: String) async {
        _ = try? await store.put(key(id, ".retry"), body: ByteBuffer(bytes: UploadReceiver.encodeJSON(schedule)), what: "keeping the schedule of the event \(id)")
    }

    /// Waits for this receiver's next record.
    public func waitForRecord() async {
        await recorded.wait()
    }
}
