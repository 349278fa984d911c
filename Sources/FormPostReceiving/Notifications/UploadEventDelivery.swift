#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging

/// Hands the events of an ``UploadEventQueue`` (a directory's ``UploadEventOutbox``, a
/// bucket's ``ObjectEventQueue``) to the application, each until it is taken:
/// ``deliver`` returning is taken, throwing is not. Each event is retried on its own
/// schedule, so an event that keeps failing never holds back the others: every event waiting
/// is offered, oldest first, as soon as it is due — a new one at once — and one that failed
/// is offered again after a delay that doubles from ``firstRetryDelay`` up to
/// ``maxRetryDelay``, drawn at random between half of it and all of it. The schedule (the
/// attempts made, when the first failed, when the next is due) is kept beside the event in the
/// queue (`ID.retry`), so that a restart keeps it — and, in a bucket, every receiver.
///
/// A queue that receivers share (``UploadEventQueue/pollInterval``) is listed again at
/// that interval, its schedules read again each pass, and each event delivered only while
/// this receiver holds its claim (a lease in the bucket): whichever receiver comes first
/// delivers it, and the others find it gone.
///
/// An event still not taken after ``maxAttempts`` attempts, or ``maxAge`` after its first
/// failed attempt, is given up on: moved with its schedule to the queue's dead letters
/// (`dead/`), logged at error level and counted (`formpost_events_dead_lettered_total`);
/// it stays there until someone acts on it (deliver it by hand, or remove it).
///
/// An event is removed from the outbox only once delivered, so one that was being
/// delivered when the process stopped is delivered again when a delivery runs on the
/// outbox again: ``deliver`` may see an event twice (compare ``UploadEvent/id``), never
/// miss one — unless it is given up on.
///
/// Run one delivery per outbox in each process (in each receiver, for a queue they
/// share), with ``run()`` in a task that is cancelled to stop it.
public struct UploadEventDelivery: Sendable {
    /// The queue whose events are delivered.
    public let outbox: any UploadEventQueue
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
    public init(outbox: any UploadEventQueue, deliver: @escaping @Sendable (UploadEvent) async throws -> Void) {
        self.outbox = outbox
        self.deliver = deliver
    }

    /// Delivers the events waiting, then each one recorded (and, in a shared queue, each
    /// one found at the next look), until the task is cancelled. A queue (or event) that
    /// cannot be read now is read again after the retry delays.
    public func run() async {
        var schedules = await outbox.retrySchedules()
        var readDelay = firstRetryDelay
        while !Task.isCancelled {
            var pass = Pass()
            do {
                let waiting = try await outbox.pendingEvents()
                // Those other receivers kept; one that cannot be read now keeps this one's.
                if outbox.pollInterval != nil, !waiting.isEmpty { schedules.merge(await outbox.retrySchedules()) { $1 } }
                let present = Set(waiting)
                schedules = schedules.filter { present.contains($0.key) }
                for id in waiting {
                    guard !Task.isCancelled else { return }
                    await offer(id, schedules: &schedules, pass: &pass)
                }
            } catch {
                logger.error("cannot read the events in \(outbox.location), to be tried again: \(error)")
                pass.unreadable = true
            }
            guard !Task.isCancelled else { return }
            var wakeAt = pass.nextDue
            if let poll = outbox.pollInterval { wakeAt = min(wakeAt ?? .infinity, Self.now() + poll.seconds) }
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
        if let schedule = schedules[id], schedule.nextAttempt > Self.now() {
            pass.due(at: schedule.nextAttempt)
            return
        }
        let previous = schedules[id]
        let outcome: Outcome?
        do {
            outcome = try await outbox.claiming(id) { await attempt(id, previous: previous) }
        } catch {
            logger.error("the event \(id) in \(outbox.location) cannot be claimed now, to be tried again: \(error)")
            pass.unreadable = true
            return
        }
        switch outcome {
        case nil:
            // Another receiver offers it now: found gone, or with a schedule, at the next look
            // (the pass ends within the poll interval).
            break
        case .unreadable:
            pass.unreadable = true
        case .done:
            schedules[id] = nil
        case .scheduled(let schedule):
            schedules[id] = schedule
            pass.due(at: schedule.nextAttempt)
        }
    }

    /// What became of one attempt at an event.
    private enum Outcome: Sendable {
        /// Delivered, gone, set aside or given up on: no longer offered.
        case done
        /// Not taken (or not due, another receiver having tried it since the pass began):
        /// offered again by `schedule`.
        case scheduled(EventSchedule)
        /// Not read now: read again after the retry delays.
        case unreadable
    }

    /// Reads the event `id` (failed before by `previous`) and offers it, holding its claim.
    /// In a shared queue, the schedule kept now counts: another receiver may have tried the
    /// event since this pass began.
    private func attempt(_ id: String, previous: EventSchedule?) async -> Outcome {
        var previous = previous
        // The one of more attempts: a schedule is kept best effort, so the bucket's may be older.
        if outbox.pollInterval != nil, let kept = await outbox.retrySchedule(of: id), kept.attempts >= (previous?.attempts ?? 0) {
            if kept.nextAttempt > Self.now() { return .scheduled(kept) }
            previous = kept
        }
        let stored: StoredUploadEvent
        do {
            stored = try await outbox.storedEvent(id)
        } catch {
            logger.error("the event \(id) in \(outbox.location) cannot be read now, to be tried again: \(error)")
            return .unreadable
        }
        switch stored {
        case .gone:
            return .done
        case .malformed:
            logger.error("the event \(id) in \(outbox.location) is no event: set aside (the directory's ID.json.unreadable, the bucket's unreadable/ID.json)")
            await outbox.setAsideUnreadable(id)
            return .done
        case .event(let event):
            do {
                try await deliver(event)
            } catch {
                let schedule = EventSchedule.after(previous, failedAt: Self.now(), first: firstRetryDelay, longest: maxRetryDelay)
                if Task.isCancelled { return .scheduled(schedule) }
                if givesUp(schedule) {
                    return await giveUp(event, after: schedule, cause: error) ? .done : .scheduled(schedule)
                }
                let delay = Duration.milliseconds(Int64((schedule.nextAttempt - Self.now()) * 1000))
                logger.warning("delivering \(event.type) \(event.id) failed (attempt \(schedule.attempts)), next in \(delay): \(error)")
                await outbox.keepSchedule(schedule, of: id)
                return .scheduled(schedule)
            }
            logger.debug("delivered \(event.type) \(event.id) after \((previous?.attempts ?? 0) + 1) attempt(s)")
            await outbox.removeDelivered(id)
            return .done
        }
    }

    /// Whether an event whose attempts came to `schedule` is given up on.
    private func givesUp(_ schedule: EventSchedule) -> Bool {
        if let maxAttempts, schedule.attempts >= maxAttempts { return true }
        if let maxAge, schedule.nextAttempt - schedule.firstFailure > maxAge.seconds { return true }
        return false
    }

    /// Moves `event` to the dead letters, logged and counted; whether it was moved (else it
    /// is offered again).
    private func giveUp(_ event: UploadEvent, after schedule: EventSchedule, cause: any Error) async -> Bool {
        let since = Duration.seconds(Int64(Self.now() - schedule.firstFailure))
        do {
            let path = try await outbox.moveToDeadLetters(event.id)
            ReceiverMetrics.deadLettered(event.type)
            logger.error("gave up delivering \(event.type) \(event.id) after \(schedule.attempts) attempt(s) over \(since): moved to \(path), to be delivered or removed by hand; the last attempt failed: \(cause)")
            return true
        } catch {
            logger.error("gave up delivering \(event.type) \(event.id) after \(schedule.attempts) attempt(s), but it cannot be set aside (\(error)): it is offered again")
            return false
        }
    }

    /// Returns at `time` (seconds since 1970; nil: never), or once an event is recorded, or
    /// the task is cancelled.
    private func wait(until time: Double?) async {
        let outbox = self.outbox
        guard let time else {
            await outbox.waitForRecord()
            return
        }
        let delay = Duration.milliseconds(Int64(max(0, time - Self.now()) * 1000) + 1)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await outbox.waitForRecord() }
            group.addTask { try? await Task.sleep(for: delay) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Now, in seconds since 1970 (the schedules outlive the process).
    private static func now() -> Double { Date().timeIntervalSince1970 }
}
