/// Where upload events wait until ``UploadEventDelivery`` hands them to the application: a
/// directory of this machine (``UploadEventOutbox``), or a bucket that every receiver on it
/// shares (``ObjectEventQueue``), so that an event outlives the receiver that recorded it and
/// that receiver's disk. An event is recorded durably before its upload is answered, and
/// removed only once delivered: at least once, never zero times.
public protocol UploadEventQueue: Sendable {
    /// Where the events wait, for logs: a directory, or `BUCKET/PREFIX.events/`.
    var location: String { get }
    /// How often a delivery looks again for events that other receivers recorded or
    /// scheduled, or nil when this process alone records into the queue (its delivery
    /// wakes on each record).
    var pollInterval: Duration? { get }

    /// Records `event` durably, and wakes the delivery; an event of the same
    /// ``UploadEvent/id`` recorded before and not yet delivered is replaced.
    ///
    /// - Throws: a `503` refusal (`ReceiverFailure.unavailable`) when the queue is full (the
    ///   upload is answered 503), or an error naming what failed when the event could not be recorded.
    func record(_ event: UploadEvent) async throws
    /// The identifiers of the events waiting, oldest first.
    ///
    /// - Throws: when the queue cannot be read now (it is read again later).
    func pendingEvents() async throws -> [String]
    /// What is recorded as the event `id`.
    ///
    /// - Throws: when it is there but cannot be read now.
    func storedEvent(_ id: String) async throws -> StoredUploadEvent
    /// Runs `body` while this process alone delivers the event `id` among those that
    /// share the queue; returns its result, or nil without running it while another holds
    /// the event.
    func claiming<T: Sendable>(_ id: String, _ body: () async throws -> T) async throws -> T?
    /// Removes the event `id`, delivered, and its retry schedule — even when the calling
    /// task is cancelled.
    func removeDelivered(_ id: String) async
    /// Moves what is recorded as `id`, which is no event, out of the queue, so that the
    /// events after it go on.
    func setAsideUnreadable(_ id: String) async
    /// Moves the event `id`, given up on, and its schedule to the dead letters; returns
    /// where it went.
    ///
    /// - Throws: when it cannot be moved (it is offered again).
    func moveToDeadLetters(_ id: String) async throws -> String
    /// The retry schedules of the events that failed, by event (those that can be read now).
    func retrySchedules() async -> [String: EventSchedule]
    /// The retry schedule of the event `id` as kept now, or nil when it has none (or it
    /// cannot be read now).
    func retrySchedule(of id: String) async -> EventSchedule?
    /// Keeps `schedule` as the event `id`'s, best effort (a schedule lost only brings the
    /// next attempt sooner).
    func keepSchedule(_ schedule: EventSchedule, of id: String) async
    /// Returns after an event is recorded by this process (one recorded since the last
    /// wait counts), or once the task is cancelled.
    func waitForRecord() async
}

extension UploadEventQueue {
    /// Records a new event of `type` about `upload` durably (``record(_:)``), and wakes the
    /// delivery; returns it.
    ///
    /// - Throws: as ``record(_:)``.
    @discardableResult
    public func record(_ type: String, upload: UploadEvent.Upload) async throws -> UploadEvent {
        let event = UploadEvent(id: UploadEventOutbox.newID(), type: type, upload: upload)
        try await record(event)
        return event
    }
}

/// What an ``UploadEventQueue`` holds as one event.
public enum StoredUploadEvent: Sendable {
    /// The event.
    case event(UploadEvent)
    /// Bytes that are no event (``UploadEventQueue/setAsideUnreadable(_:)`` them).
    case malformed
    /// Nothing: the event was removed meanwhile.
    case gone
}
