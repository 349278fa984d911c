import FormPost
import Synchronization

/// How `--transport urlsession` makes its transport. An executable that links
/// FormPostURLSession installs it before the command runs: `formpost` on Apple platforms
/// (where Foundation is the system's), `formpost-urlsession` on Linux (where URLSession
/// brings FoundationNetworking and libcurl, which `formpost` itself does not load).
package enum URLSessionTransportFactory {
    /// A transport for the command, given `--connect-timeout`, and how to end it.
    package typealias Make = @Sendable (_ connectTimeout: Double?) -> (transport: any UploadTransport, shutdown: @Sendable () async -> Void)

    private static let installed = Mutex<Make?>(nil)

    /// Makes `--transport urlsession` available in this process.
    package static func install(_ make: @escaping Make) {
        installed.withLock { $0 = make }
    }

    /// The installed factory, if any.
    static var current: Make? { installed.withLock { $0 } }
}
