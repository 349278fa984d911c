#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1

/// How a failure that ended a request's handling is logged: a client that went away before
/// its body ended (its connection closed or reset mid-body) at notice — the client's doing,
/// which the server survives — and so a request cancelled because the server stops (past
/// its grace); any other failure at error.
enum FailureLog {
    /// Logs `error`, which ended the handling of `request`, to `logger` at its level.
    static func log(_ error: any Error, of request: ReceiverRequest, to logger: Logger) {
        if clientWentAway(error) {
            logger.notice("\(request.method) \(request.loggedPath) ended by the client: \(RequestLogLine.redacting(String(reflecting: error)))")
        } else if error is CancellationError {
            logger.notice("\(request.method) \(request.loggedPath) ended by the server's stop")
        } else {
            logger.error("\(request.method) \(request.loggedPath) failed: \(RequestLogLine.redacting(String(reflecting: error)))")
        }
    }

    /// Whether `error` says the client's connection ended or was reset before the request's
    /// body did: HTTP/1.1's parser meeting the end of the stream mid-body, a closed channel,
    /// a reset.
    static func clientWentAway(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPParserError: error == .invalidEOFState
        case let error as ChannelError: error == .eof || error == .ioOnClosedChannel || error == .inputClosed || error == .alreadyClosed
        case let error as IOError: error.errnoCode == ECONNRESET || error.errnoCode == EPIPE
        default: false
        }
    }
}
