import CoreMetrics
import FormPostServer
import Prometheus

/// `formpost serve --metrics`: swift-prometheus bootstrapped as the process's metrics
/// backend, and `GET /metrics` answering its registry in Prometheus's text format.
enum PrometheusExport {
    /// Bootstraps the backend (once per process: call it before anything counts) and
    /// returns the endpoint that exports it.
    static func bootstrap() -> MetricsEndpoint {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return MetricsEndpoint {
            var text: [UInt8] = []
            registry.emit(into: &text)
            return text
        }
    }
}
