import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Hummingbird's HTTP/1.1 child channel, with the parts of a request a connection reads
/// ahead of its handler bounded: Hummingbird's own (`HTTP1Channel`) wraps the connection in
/// a `NIOAsyncChannel` with NIO's default, which reads on until 10 parts wait, each from a
/// read of up to 64 KiB — about 640 KiB held by each connection whose upload's disk writes
/// lag its socket. Here reading stops once ``partsReadAhead`` wait (one read may decode a
/// few more: a head and its body's first bytes, say), and goes on once the handler has
/// taken them. Plaintext HTTP/1.1 only: HTTPS (HTTP/1.1 and HTTP/2) goes through
/// Hummingbird's channels as they are.
struct BoundedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    /// How many parts of a request may wait for the handler before reading stops.
    static let partsReadAhead = 2
    /// How many reads the connection makes each time its socket is readable, and so how many
    /// receive buffers it keeps for reuse (NIO's default is 4).
    static let readsPerWakeUp: UInt = 1

    let responder: HTTPChannelHandler.Responder
    let configuration: HTTP1Channel.Configuration

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.syncOptions?.setOption(ChannelOptions.maxMessagesPerRead, value: Self.readsPerWakeUp)
            var limits = NIOHTTPDecoderLimitConfiguration()
            limits.maxHeaderFieldSize = configuration.httpDecoder.maxHeaderFieldSize
            limits.maxHeaderListSize = configuration.httpDecoder.maxHeaderListSize
            limits.maxHeaderFieldCount = configuration.httpDecoder.maxHeaderFieldCount
            // As HTTP1Channel sets the pipeline up: the errors are answered by the application,
            // and the outbound headers were validated by HTTPTypes.
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                withPipeliningAssistance: false, withErrorHandling: false, withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(), withDecoderLimitConfiguration: limits
            )
            try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
            try channel.pipeline.syncOperations.addHandlers(configuration.additionalChannelHandlers())
            try channel.pipeline.syncOperations.addHandler(HTTPConnectionStateHandler(idleTimeout: configuration.idleTimeout.map { .init($0) }, logger: logger))
            let readAhead = NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(lowWatermark: 1, highWatermark: Self.partsReadAhead)
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel,
                                       configuration: .init(backPressureStrategy: readAhead, isOutboundHalfClosureEnabled: true))
        }
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}
