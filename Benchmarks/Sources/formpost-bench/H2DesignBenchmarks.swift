#if os(Linux)
import Foundation
import Multipart
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// `formpost-bench h2-design`: designs for an HTTP/2 upload path of FormPost's own, each on
/// SwiftNIO's HTTP/2 stack over NIOSSL (a connection per upload, ALPN `h2`), sending a 1 GiB
/// file part in 16 KiB DATA frames through nginx's streaming configuration (64 KiB stream
/// window, the body passed on to the sink as it comes), against `curl -F --http2`:
/// - `h2-design-loop-flush`: the body read on the event loop whenever the stream channel is
///   writable (``EventLoopBodyPump``), and a flush after every 16 KiB written below the
///   HTTP/2 handler (``FlushEveryHandler``), so NIOSSL writes each frame as it comes;
/// - `h2-design-loop`: the same pump, without that handler;
/// - `h2-design-task-flush`: the handler, with the body written from a task through
///   `NIOAsyncChannel` (a hop to the task and back whenever the window opens).
/// These measure designs, not the library: FormPost's uploads still go through
/// AsyncHTTPClient (`formpost-bench upload`).
struct H2DesignBenchmarks {
    let size: Int
    let runs: Int
    let directory: String

    static let frameSize = 16 * 1024

    func run() async throws {
        try await withFileFormAndSink(size: size, directory: directory) { source, form, port in
            try await run(source: source, plan: try form.plan(), port: port)
        }
    }

    private func run(source: String, plan: BodyPlan, port: UInt16) async throws {
        let endpoint = try TLSEndpoint(directory: directory, upstreamPort: port)
        defer { endpoint.stop() }
        let context = try Self.tlsContext(caPath: endpoint.caPath)
        let target = (port: Int(endpoint.http2Port), context: context)
        let designs: [(String, Bool, @Sendable (BodyPlan, Int, NIOSSLContext, Bool) async throws -> (status: String, body: String))] = [
            ("h2-design-loop-flush", true, Self.uploadFromEventLoop),
            ("h2-design-loop", false, Self.uploadFromEventLoop),
            ("h2-design-task-flush", true, Self.uploadFromTask),
        ]
        for (workload, flushEveryFrame, upload) in designs {
            Measurement.resetPeakRSS()
            let times = try await Measurement.alternate(runs: runs, ours: {
                let response = try await upload(plan, target.port, target.context, flushEveryFrame)
                guard response.status == "200", response.body == "\(plan.contentLength!)" else {
                    throw BenchmarkFailure("\(workload): the sink received \(response.body) of \(plan.contentLength!) bytes (status \(response.status))")
                }
            }, theirs: {
                let run = try CurlRun(arguments: ["--cacert", endpoint.caPath, "--http2", "-F", "file=@\(source)", "https://localhost:\(target.port)/upload"])
                guard run.status == "200", run.httpVersion == "2" else {
                    throw BenchmarkFailure("\(workload): curl got status \(run.status) over HTTP/\(run.httpVersion), expected 200 over HTTP/2")
                }
            })
            BenchmarkResult(workload: workload, bytes: plan.contentLength!, ours: times.ours, reference: "curl -F --http2", theirs: times.theirs,
                            peakRSS: Measurement.peakRSS()).printLine()
        }
    }

    private static func tlsContext(caPath: String) throws -> NIOSSLContext {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caPath)
        tls.applicationProtocols = ["h2"]
        return try NIOSSLContext(configuration: tls)
    }

    private static func headers(plan: BodyPlan, port: Int) -> HPACKHeaders {
        HPACKHeaders([(":method", "POST"), (":scheme", "https"), (":authority", "localhost:\(port)"), (":path", "/upload"),
                      ("content-type", plan.contentType), ("content-length", String(plan.contentLength!))])
    }

    /// A TLS connection to nginx with the HTTP/2 pipeline (and the flush handler below it, if asked).
    private static func connect(port: Int, context: NIOSSLContext, flushEveryFrame: Bool) async throws
        -> (channel: Channel, multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>) {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                if flushEveryFrame { try channel.pipeline.syncOperations.addHandler(FlushEveryHandler(threshold: frameSize)) }
                let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(mode: .client) { stream in
                    stream.eventLoop.makeSucceededVoidFuture()
                }
                return (channel, multiplexer)
            }
        }
    }

    @Sendable private static func uploadFromEventLoop(plan: BodyPlan, port: Int, context: NIOSSLContext, flushEveryFrame: Bool) async throws -> (status: String, body: String) {
        let (channel, multiplexer) = try await connect(port: port, context: context, flushEveryFrame: flushEveryFrame)
        let response = channel.eventLoop.makePromise(of: (status: String, body: String).self)
        let headers = headers(plan: plan, port: port)
        do {
            _ = try await multiplexer.openStream { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(EventLoopBodyPump(headers: headers, plan: plan, frameSize: frameSize, response: response))
                }
            }
            let result = try await response.futureResult.get()
            try? await channel.close()
            return result
        } catch {
            response.fail(error)
            try? await channel.close()
            throw error
        }
    }

    @Sendable private static func uploadFromTask(plan: BodyPlan, port: Int, context: NIOSSLContext, flushEveryFrame: Bool) async throws -> (status: String, body: String) {
        let (channel, multiplexer) = try await connect(port: port, context: context, flushEveryFrame: flushEveryFrame)
        defer { channel.close(promise: nil) }
        let stream = try await multiplexer.openStream { stream in
            stream.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>(wrappingChannelSynchronously: stream)
            }
        }
        return try await stream.executeThenClose { inbound, outbound in
            try await outbound.write(.headers(.init(headers: headers(plan: plan, port: port))))
            let reader = plan.makeChunkReader(chunkSize: 1 << 20)
            let allocator = ByteBufferAllocator()
            while true {
                var buffer = allocator.buffer(capacity: 1 << 20)
                // The buffer's storage outlives the read: `buffer` holds it until it is sliced.
                let target = buffer.withUnsafeMutableWritableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[0..<(1 << 20)]) }
                let count = try await reader.read(into: target)
                if count == 0 { break }
                buffer.moveWriterIndex(forwardBy: count)
                var frames: [HTTP2Frame.FramePayload] = []
                while buffer.readableBytes > 0 {
                    frames.append(.data(.init(data: .byteBuffer(buffer.readSlice(length: min(frameSize, buffer.readableBytes))!))))
                }
                try await outbound.write(contentsOf: frames)
            }
            try await outbound.write(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)))
            var status = "", body = ""
            loop: for try await payload in inbound {
                switch payload {
                case .headers(let frame):
                    if let value = frame.headers.first(name: ":status") { status = value }
                    if frame.endStream { break loop }
                case .data(let frame):
                    if case .byteBuffer(let buffer) = frame.data { body += String(buffer: buffer) }
                    if frame.endStream { break loop }
                default:
                    continue
                }
            }
            return (status, body)
        }
    }
}
#endif
