#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import NIOPosix

/// Hands the events of an ``UploadEventOutbox`` to the application, each until it is taken:
/// ``deliver`` returning is taken, throwing is not. Each event is retried on its own
/// schedule, so an event that keeps failing never holds back the others: every event waiting
/// is offered, oldest first, as soon as it is due — a new one at once — and one that failed
/// is offered again after a delay that doubles from ``firstRetryDelay`` up to
/// ``maxRetryDelay``, drawn at random between half of it and all of it. The schedule (the
/// attempts made, when the first failed, when the next is due) is kept beside the event in the
/// outbox (`ID.retry`), so that a restart keeps it.
///
/// An event still not taken after ``maxAttempts`` attempts, or ``maxAge`` after its first
/// failed attempt, is given up on: moved with its schedule to the outbox's `dead/`
/// directory, logged at error level and counted (`formpost_events_dead_lettered_total`);
/// it stays there until someone acts on it (deliver it by hand, or remove it).
///
/// An event is removed from the outbox only once delivered, so one that was being
/// delivered when the process stopped is delivered again when a delivery runs on the
/// outbox again: ``deliver`` may see an event twice (compare ``UploadEvent/id``), never
/// miss one — unless it is given up on.
///
/// Run one delivery per outbox, with ``run()`` in a task that is cancelled to stop it.
public struct UploadEventDelivery: Sendable {
    /// The outbox whose events are delivered.
    public let outbox: UploadEventOutbox
    /// Takes one event; throws when it could not (it is offered again later).
    public let deliver: @Sendable (UploadEvent) async throws -> Void
    /// The delay before the first retry of an event (1 second by default).
    public var firstRetryDelay: Duration = .seconds(1)
    /// The longest delay between two attempts of an event (60 seconds by default).
    public var maxRetryDelay: Duration = .seconds(60)
    /// The most attempts made to deliver an event before it is given up on; nil (the
    /// default) for no bound but ``maxAge``.
    public var maxAttempts: Int?
    /// How long after its first failed attempt an event is still offered before it is
    /// given up on (24 hours by default); nil for no bound but ``maxAttempts``.
    public var maxAge: Duration? = .seconds(86_400)
    /// Where each failed attempt is told (warning), each event given up on (error), and
    /// each delivery (debug).
    public var logger = Logger(label: "formpost.events")

    /// Creates a delivery of `outbox`'s events to `deliver`.
    public init(outbox: UploadEventOutbox, deliver: @escaping @Sendable (UploadEvent) async throws -> Void) {
        self.outbox = outbox
        self.deliver = deliver
    }

    /// Delivers the events waiting, then each one recorded, until the task is cancelled. An
    /// outbox (or event) that cannot be read now is read again after the retry delays. The
    /// outbox is read on NIO's thread pool (it blocks on the file system).
    public func run() async {
        let outbox = self.outbox, pool = NIOThreadPool.singleton
        guard var schedules = try? await pool.runIfActive({ outbox.schedules() }) else { return }
        var readDelay = firstRetryDelay
        while !Task.isCancelled {
            var pass = Pass()
            do {
                let waiting = try await pool.runIfActive { try outbox.pending() }
                let present = Set(waiting)
                schedules = schedules.filter { present.contains($0.key) }
                for id in waiting {
                    guard !Task.isCancelled else { return }
                    await offer(id, schedules: &schedules, pass: &pass)
                }
            } catch {
                logger.error("cannot read the events in \(outbox.directory), to be tried again: \(error)")
                pass.unreadable = true
            }
            guard !Task.isCancelled else { return }
            var wakeAt = pass.nextDue
            if pass.unreadable {
                wakeAt = min(wakeAt ?? .infinity, Self.now() + readDelay.seconds)
                readDelay = min(readDelay * 2, maxRetryDelay)
            } else {
                readDelay = firstRetryDelay
            }
            await wait(until: wakeAt)
        }
    }

    /// What a pass over the events waiting found.
    private struct Pass {
        /// When the soonest event not yet due is.
        var nextDue: Double?
        /// Whether an event, or the outbox, could not be read now.
        var unreadable = false

        mutating func due(at time: Double) { nextDue = min(nextDue ?? time, time) }
    }

    /// Offers the event `id` if it is due, and keeps what became of it.
    private func offer(_ id: String, schedules: inout [String: EventSchedule], pass: inout Pass) async {
        let outbox = self.outbox, pool = NIOThreadPool.singleton
        if let schedule = schedules[id], schedule.nextAttempt > Self.now() {
            pass.due(at: schedule.nextAttempt)
            return
        }
        let stored: UploadEventOutbox.Stored
        do {
            stored = try await pool.runIfActive { try outbox.read(id) }
        } catch {
            logger.error("the event \(id) in \(outbox.directory) cannot be read now, to be tried again: \(error)")
            pass.unreadable = true
            return
        }
        switch stored {
        case .gone:
            schedules[id] = nil
        case .malformed:
            logger.error("the event \(id) in \(outbox.directory) is no event: set aside as \(id).json.unreadable")
            try? await pool.runIfActive { outbox.setAside(id) }
            schedules[id] = nil
        case .event(let event):
            do {
                try await deliver(event)
            } catch {
                guard !Task.isCancelled else { return }
                let schedule = EventSchedule.after(schedules[id], failedAt: Self.now(), first: firstRetryDelay, longest: maxRetryDelay)
                if givesUp(schedule) {
                    await giveUp(event, after: schedule, cause: error)
                    schedules[id] = nil
                } else {
                    schedules[id] = schedule
                    let delay = Duration.milliseconds(Int64((schedule.nextAttempt - Self.now()) * 1000))
                    logger.warning("delivering \(event.type) \(event.id) failed (attempt \(schedule.attempts)), next in \(delay): \(error)")
                    try? await pool.runIfActive { outbox.save(schedule, of: id) }
                    pass.due(at: schedule.nextAttempt)
                }
                return
            }
            logger.debug("delivered \(event.type) \(event.id) after \((schedules[id]?.attempts ?? 0) + 1) attempt(s)")
            schedules[id] = nil
            await removeDelivered(id)
        }
    }

    /// Whether an event whose attempts came to `schedule` is given up on.
    private func givesUp(_ schedule: EventSchedule) -> Bool {
        if let maxAttempts, schedule.attempts >= maxAttempts { return true }
        if let maxAge, schedule.nextAttempt - schedule.firstFailure > maxAge.seconds { return true }
        return false
    }

    /// Moves `event` to the dead letters, logged and counted.
    private func giveUp(_ event: UploadEvent, after schedule: EventSchedule, cause: any Error) async {
        let outbox = self.outbox
        let since = Duration.seconds(Int64(Self.now() - schedule.firstFailure))
        do {
            let path = try await NIOThreadPool.singleton.runIfActive { try outbox.deadLetter(event.id) }
            ReceiverMetrics.deadLettered(event.type)
            logger.error("gave up delivering \(event.type) \(event.id) after \(schedule.attempts) attempt(s) over \(since): moved to \(path), to be delivered or removed by hand; the last attempt failed: \(cause)")
        } catch {
            logger.error("gave up delivering \(event.type) \(event.id) after \(schedule.attempts) attempt(s), but it cannot be set aside (\(error)): it is offered again")
        }
    }

    /// Returns at `time` (seconds since 1970; nil: never), or once an event is recorded, or
    /// the task is cancelled.
    private func wait(until time: Double?) async {
        guard let time else {
            await outbox.recorded.wait()
            return
        }
        let recorded = outbox.recorded
        let delay = Duration.milliseconds(Int64(max(0, time - Self.now()) * 1000) + 1)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await recorded.wait() }
            group.addTask { try? await Task.sleep(for: delay) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Removes the event `id`, delivered, from the outbox, even when the delivery is being
    /// stopped: NIO's pool drops work whose task is cancelled before it runs, and an event left
    /// in the outbox is delivered again by the next delivery.
    private func removeDelivered(_ id: String) async {
        let outbox = self.outbox
        await Task { try? await NIOThreadPool.singleton.runIfActive { outbox.remove(id) } }.value
    }

    /// Now, in seconds since 1970 (the schedules outlive the process).
    private static func now() -> Double { Date().timeIntervalSince1970 }
}
