import Logging
import NIOPosix

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

    /// Delivers the events waiting, then each one recorded, until the task is cancelled. An
    /// outbox that cannot be read now is read again after the retry delays.
    public func run() async {
        var delay = firstRetryDelay
        while true {
            switch await deliverPending() {
            case .cancelled:
                return
            case .allDelivered:
                delay = firstRetryDelay
                await outbox.recorded.wait()
            case .unreadable:
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    return
                }
                delay = min(delay * 2, maxRetryDelay)
            }
        }
    }

    /// How a pass over the events waiting ended.
    private enum Pass {
        case allDelivered, cancelled, unreadable
    }

    /// Delivers every event waiting now, oldest first. The outbox is read on NIO's thread
    /// pool (it blocks on the file system).
    private func deliverPending() async -> Pass {
        let outbox = self.outbox, pool = NIOThreadPool.singleton
        guard !Task.isCancelled else { return .cancelled }
        let waiting: [String]
        do {
            waiting = try await pool.runIfActive { try outbox.pending() }
        } catch {
            logger.error("cannot read the events in \(outbox.directory), to be tried again: \(error)")
            return .unreadable
        }
        for id in waiting {
            guard !Task.isCancelled else { return .cancelled }
            let stored: UploadEventOutbox.Stored
            do {
                stored = try await pool.runIfActive { try outbox.read(id) }
            } catch {
                logger.error("the event \(id) in \(outbox.directory) cannot be read now, to be tried again: \(error)")
                return .unreadable
            }
            switch stored {
            case .gone:
                continue
            case .malformed:
                logger.error("the event \(id) in \(outbox.directory) is no event: set aside as \(id).json.unreadable")
                try? await pool.runIfActive { outbox.setAside(id) }
            case .event(let event):
                guard await deliverUntilTaken(event) else { return .cancelled }
                await removeDelivered(id)
            }
        }
        return Task.isCancelled ? .cancelled : .allDelivered
    }

    /// Removes the event `id`, delivered, from the outbox, even when the delivery is being
    /// stopped: NIO's pool drops work whose task is cancelled before it runs, and an event left
    /// in the outbox is delivered again by the next delivery.
    private func removeDelivered(_ id: String) async {
        let outbox = self.outbox
        await Task { try? await NIOThreadPool.singleton.runIfActive { outbox.remove(id) } }.value
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
