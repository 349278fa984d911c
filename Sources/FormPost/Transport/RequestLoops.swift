import NIOCore
import Synchronization

/// Chooses the event loop a request's delegate and body run on, so that it is, as often as
/// can be, the loop of the connection the pool gives it. AsyncHTTPClient's pool leases an
/// idle connection on the request's loop first, any other idle one next, and makes a new
/// one on the request's loop; the request's callbacks and body writes hop between the two
/// loops whenever they differ.
///
/// Each origin has a home loop: a request to an origin with no other request under way
/// runs there, where the connection the previous one left idle lives. Requests that overlap
/// are spread over the group's loops (as AsyncHTTPClient spreads its own), and so are the
/// connections made for them.
final class RequestLoops: Sendable {
    private let group: any EventLoopGroup
    /// Each origin's home loop and how many of its requests are under way.
    private let origins = Mutex<[Origin: (home: any EventLoop, underWay: Int)]>([:])

    init(group: any EventLoopGroup) {
        self.group = group
    }

    /// The loop for a request to `origin`; call ``finished(_:)`` when its exchange is over.
    func loop(for origin: Origin) -> any EventLoop {
        origins.withLock { origins in
            guard let entry = origins[origin] else {
                let home = group.next()
                origins[origin] = (home, 1)
                return home
            }
            origins[origin] = (entry.home, entry.underWay + 1)
            return entry.underWay == 0 ? entry.home : group.next()
        }
    }

    /// Records that a request to `origin` is over.
    func finished(_ origin: Origin) {
        origins.withLock { origins in
            if let entry = origins[origin] { origins[origin] = (entry.home, max(0, entry.underWay - 1)) }
        }
    }
}
