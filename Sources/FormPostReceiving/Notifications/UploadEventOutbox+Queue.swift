import NIOPosix

/// The outbox as a queue of its process alone: its files read and written on NIO's thread
/// pool (they block on the disk), every event claimed at once (one delivery runs per
/// outbox), woken on each record.
extension UploadEventOutbox: UploadEventQueue {
    /// The outbox's directory.
    public var location: String { directory }
    /// Nil: only this process records into the directory.
    public var pollInterval: Duration? { nil }

    /// Records `event` durably in `ID.json` (on NIO's thread pool: it syncs the disk), and
    /// wakes the delivery.
    ///
    /// - Throws: an error naming what failed (with the system's error) when the event could
    ///   not be written or synced, or that the outbox is full (``maxCount``, ``maxBytes``).
    public func record(_ event: UploadEvent) async throws {
        try await NIOThreadPool.singleton.runIfActive { try self.recordNow(event) }
    }

    /// The events' files in the directory, oldest first.
    public func pendingEvents() async throws -> [String] {
        try await NIOThreadPool.singleton.runIfActive { try self.pending() }
    }

    /// The file of the event `id`.
    public func storedEvent(_ id: String) async throws -> StoredUploadEvent {
        try await NIOThreadPool.singleton.runIfActive { try self.read(id) }
    }

    /// Runs `body`: no other process delivers from this directory.
    public func claiming<T: Sendable>(_ id: String, _ body: () async throws -> T) async throws -> T? {
        try await body()
    }

    /// Removes the event's files, even when the calling task is cancelled: NIO's pool drops
    /// work whose task is cancelled before it runs, and an event left in the outbox is
    /// delivered again by the next delivery.
    public func removeDelivered(_ id: String) async {
        await Task { try? await NIOThreadPool.singleton.runIfActive { self.remove(id) } }.value
    }

    /// Renames the file to `ID.json.unreadable`.
    public func setAsideUnreadable(_ id: String) async {
        try? await NIOThreadPool.singleton.runIfActive { self.setAside(id) }
    }

    /// Moves the event's files to `dead/`.
    public func moveToDeadLetters(_ id: String) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { try self.deadLetter(id) }
    }

    /// The `ID.retry` files.
    public func retrySchedules() async -> [String: EventSchedule] {
        (try? await NIOThreadPool.singleton.runIfActive { self.schedules() }) ?? [:]
    }

    /// The file `ID.retry`.
    public func retrySchedule(of id: String) async -> EventSchedule? {
        (try? await NIOThreadPool.singleton.runIfActive { self.schedule(of: id) }) ?? nil
    }

    /// Writes `ID.retry`.
    public func keepSchedule(_ schedule: EventSchedule, of id: String) async {
        try? await NIOThreadPool.singleton.runIfActive { self.save(schedule, of: id) }
    }

    /// Waits for the next ``record(_:upload:)`` of this outbox.
    public func waitForRecord() async {
        await recorded.wait()
    }
}
