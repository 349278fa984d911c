#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMultipartSystem

/// Starts POSIX threads that nobody joins: `BlockingIOExecutor`'s, without Foundation's
/// `Thread` (not in FoundationEssentials).
package enum DetachedThread {
    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Runs `body` on a new thread named `name`.
    /// False when the system refused a thread (`body` does not run then).
    package static func start(name: String, _ body: @escaping () -> Void) -> Bool {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(&thread, &attributes, { argument in
            let start = Unmanaged<Start>.fromOpaque((argument as UnsafeMutableRawPointer?)!).takeRetainedValue()
            cmultipart_name_thread(start.name)
            start.body()
            return nil
        }, start)
        if result != 0 {
            Unmanaged<Start>.fromOpaque(start).release()
            return false
        }
        return true
    }
}
