import Logging

/// Hands the events of an ``UploadEventOutbox`` to the application, oldest first, each until
/// it is taken: ``deliver`` returning is taken, throwing is not — the same event is offered
/// again after a delay that doubles from ``firstRetryDelay`` up to ``maxRetryDelay``, and the
/// events after it wait (they keep their order). An event is removed from the outbox only
/// once delivered, so one that was being delivered when the process stopped is delivered
/// again when a delivery runs on the outbox again: ``deliver`` may see an event twice
/// (compare ``UploadEvent/id``), never miss one.
///
/// Run one delivery per outbox, with ``run()`` in a task that is cancelled to stop it.
public struct UploadEventDelivery: Sendable {
    /// The outbox whose events are delivered.
    public let outbox: UploadEventOutbox
    /// Takes one event; throws when it could not (it is offered again later).
    public let deliver: @Sendable (UploadEvent) async throws -> Void
    /// The delay before the first retry of an event.
    public var firstRetryDelay: Duration = .seconds(1)
    /// The longest delay between two attempts of an event.
    public var maxRetryDelay: Duration = .seconds(60)
    /// Where each failed attempt is told (warning), and each delivery (debug).
    public var logger = Logger(label: "formpost.events")

    /// Creates a delivery of `outbox`'s events to `deliver`.
    public init(outbox: UploadEventOutbox, deliver: @escaping @Sendable (UploadEvent) async throws -> Void) {
        self.outbox = outbox
        self.deliver = deliver
    }

    /// Delivers the events waiting, then each one recorded, until the task is cancelled.
    public func run() async {
        while await deliverPending() {
            await outbox.recorded.wait()
        }
    }

    /// Delivers every event waiting now; false when cancelled first.
    private func deliverPending() async -> Bool {
        let waiting: [String]
        do {
            waiting = try outbox.pending()
        } catch {
            logger.error("cannot read the events in \(outbox.directory): \(error)")
            return !Task.isCancelled
        }
        for id in waiting {
            guard let event = outbox.event(id) else {
                logger.error("the event \(id) in \(outbox.directory) cannot be read: set aside as \(id).json.unreadable")
                outbox.setAside(id)
                continue
            }
            guard await deliverUntilTaken(event) else { return false }
            outbox.remove(id)
        }
        return !Task.isCancelled
    }

    /// Offers `event` until ``deliver`` takes it; false when cancelled first.
    private func deliverUntilTaken(_ event: UploadEvent) async -> Bool {
        var delay = firstRetryDelay
        var attempt = 1
        while !Task.isCancelled {
            do {
                try await deliver(event)
                logger.debug("delivered \(event.type) \(event.id) after \(attempt) attempt(s)")
                return true
            } catch {
                logger.warning("delivering \(event.type) \(event.id) failed (attempt \(attempt)), next in \(delay): \(error)")
            }
            do {
                try await Task.sleep(for: delay)
            } catch {
                return false
            }
            delay = min(delay * 2, maxRetryDelay)
            attempt += 1
        }
        return false
    }
}
