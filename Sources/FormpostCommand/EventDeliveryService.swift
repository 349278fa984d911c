import FormPostServer
import ServiceLifecycle

/// The service of `formpost serve --hook-events post-finish` that posts the recorded events
/// to the hook: the first of its services, so the last a stop reaches (a service group stops
/// its services in reverse order) — the events of uploads finished during the stop's grace
/// are still posted; those the hook has not taken when the stop reaches it stay in the
/// outbox (in the bucket with `--store`) and are posted on the next start (or by another
/// receiver on the bucket).
struct EventDeliveryService: Service {
    let delivery: UploadEventDelivery

    func run() async throws {
        await cancelWhenGracefulShutdown { await delivery.run() }
    }
}
