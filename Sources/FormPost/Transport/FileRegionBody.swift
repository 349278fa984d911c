import AsyncHTTPClient
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Multipart
import NIOCore
import Synchronization

/// A plan sent through AsyncHTTPClient's delegate API, whose writes report when the
/// connection has taken them, so the body never runs ahead of the connection:
///
/// - on a connection FormPost knows is plaintext HTTP/1.1 over NIOPosix's sockets (a
///   ``NetworkStack/PlaintextSocketConnection``, which only FormPost's own client gives),
///   file parts of at least ``smallestRegion`` bytes travel without copies through user
///   space, as NIO `FileRegion`s (`sendfile`);
/// - everything else (every part over TLS, where the bytes must be read to be encrypted,
///   over HTTP/2, on Network.framework, whose channel takes `ByteBuffer`s only, through a
///   caller's `HTTPClient`, which may send the body again after a redirect on a connection
///   FormPost does not see, and a body whose files are all small) goes as buffers read
///   from the plan, at most
///   ``writeWindow`` of them handed to the connection and not yet taken. The buffers are
///   recycled, so the memory stays warm and bounded whatever the body's size and the
///   server's speed.
///
/// The body is produced on the request's event loop (`eventLoop`), where AsyncHTTPClient
/// runs the body stream and completes its writes; the connection is the pool's choice and
/// may run on another loop of the group, its writes hopping there.
///
/// Files sent as `FileRegion`s stay open until ``finish(checkingFiles:)``, which closes them
/// after the exchange is over and every loop a connection may run on has passed a later
/// tick, so no queued write can outlive its descriptor.
final class FileRegionBody: Sendable {
    /// The most bytes one NIO `FileRegion` write covers, so progress advances while a large file is sent.
    static let regionSize: Int64 = 16 << 20

    /// The size of each buffer read from the plan.
    static let bufferSize = 128 << 10
    /// How many buffers may be handed to the connection before the first is taken.
    static let writeWindow = 4
    /// The shortest file region sent as a `FileRegion`: a shorter one is read with the bytes
    /// around it, one write instead of three and no descriptor held through the exchange.
    static let smallestRegion = Int64(bufferSize)

    let plan: BodyPlan
    /// The request's event loop: the body is produced there.
    let eventLoop: any EventLoop
    /// The loops the request's connection may run on.
    let connectionLoops: any EventLoopGroup
    /// The connection file regions go to as `FileRegion`s: set when one that takes them was
    /// given and the plan has a file region of at least ``smallestRegion`` bytes.
    private let fileRegionConnection: NetworkStack.PlaintextSocketConnection?
    /// Each open file: the handle the channel sends from, a duplicate descriptor for size
    /// checks (a `NIOFileHandle` refuses a second user while the channel uses it), the region.
    private let openFiles = Mutex<[OpenFile]>([])

    private struct OpenFile: @unchecked Sendable {
        let handle: NIOFileHandle
        let checkDescriptor: Int32
        let region: FileSlice
    }
    private let streamEnd = Mutex<(promise: EventLoopPromise<Void>?, endedEarly: Bool)>((nil, false))
    /// The pump writing the body as buffers, once AsyncHTTPClient has asked for the body.
    private let pump = Mutex<EventLoopBodyPump?>(nil)
    private let changedFile = Mutex<(any Error)?>(nil)
    /// Set by ``finish(checkingFiles:)``: a write still running may not open a file after it.
    private let closed = Mutex(false)

    /// A body produced on the request's `eventLoop`, on a connection running on one of
    /// `connectionLoops` (nil: `eventLoop` itself): file regions go as `FileRegion`s on
    /// `connection`, a plaintext socket connection FormPost's own client knows the request
    /// goes on (``NetworkStack/OwnClient/plaintextSocketConnection(to:)``); without one, as
    /// buffers.
    init(plan: BodyPlan, eventLoop: any EventLoop, connectionLoops: (any EventLoopGroup)? = nil,
         fileRegionsOn connection: NetworkStack.PlaintextSocketConnection?) {
        self.plan = plan
        self.eventLoop = eventLoop
        self.connectionLoops = connectionLoops ?? eventLoop
        fileRegionConnection = plan.segments.contains { Self.goesUnread($0) } ? connection : nil
    }

    /// Whether file regions go as `FileRegion`s (`sendfile`).
    var usesFileRegions: Bool { fileRegionConnection != nil }

    /// Whether `segment` is a file region long enough to be sent unread by `sendfile`.
    private static func goesUnread(_ segment: BodySegment) -> Bool {
        if case .file(let region) = segment { return !region.needsContentCheck && region.length >= smallestRegion }
        return false
    }

    /// The request body; each time AsyncHTTPClient asks for it, the plan is sent from its start.
    var requestBody: HTTPClient.Body {
        .stream(contentLength: plan.contentLength) { writer in
            let promise = self.eventLoop.makePromise(of: Void.self)
            self.streamEnd.withLock { $0 = (promise, false) }
            let written: EventLoopFuture<Void>
            if let connection = self.fileRegionConnection {
                written = self.eventLoop.makeFutureWithTask { try await self.write(to: writer, on: connection) }
            } else {
                let state = PlanByteBuffers.IteratorState(reader: self.plan.makeChunkReader(chunkSize: Self.bufferSize), chunkSize: Self.bufferSize)
                let pump = EventLoopBodyPump(state: state, writer: writer, eventLoop: self.eventLoop, window: Self.writeWindow)
                // A body asked for again stops the pump of the last time (and its read).
                self.pump.withLock { current in
                    defer { current = pump }
                    return current
                }?.stop(CancellationError())
                written = pump.start()
            }
            // The body ends once, here or in endEarly(), whichever comes first.
            written.whenComplete { result in
                self.streamEnd.withLock { state -> EventLoopPromise<Void>? in
                    defer { state.promise = nil }
                    return state.promise
                }?.completeWith(result)
            }
            return promise.futureResult
        }
    }

    /// Records that the connection wrote a part of the body: the delegate's
    /// `didSendRequestPart`, on the request's event loop. Buffers are counted as taken here.
    func partSent() {
        pump.withLock { $0 }?.partSent()
    }

    /// Stops producing buffers because the exchange failed with `error`: the connection will
    /// write none of those handed over, and the pump would wait for them for ever.
    func exchangeFailed(_ error: any Error) {
        pump.withLock { $0 }?.stop(error)
    }

    /// Ends the body where it is, because the server gave its final answer (3xx, 4xx, 5xx)
    /// before reading it all. AsyncHTTPClient pauses the body then and would wait for its
    /// end forever; ending it lets the exchange finish (it may fail as a cancelled stream,
    /// but the answer has been collected by then).
    func endEarly() {
        let promise = streamEnd.withLock { state -> EventLoopPromise<Void>? in
            guard let promise = state.promise else { return nil }
            state = (nil, true)
            return promise
        }
        promise?.succeed(())
        pump.withLock { $0 }?.stop(CancellationError())
    }

    /// Whether ``endEarly()`` ended the body before all of it was written.
    var endedEarly: Bool { streamEnd.withLock { $0.endedEarly } }

    /// Writes the plan with file regions as `FileRegion`s, which `connection` takes.
    private func write(to writer: HTTPClient.Body.StreamWriter, on connection: NetworkStack.PlaintextSocketConnection) async throws {
        var pending = ByteBuffer()
        for segment in plan.segments {
            switch segment {
            case .bytes(let bytes):
                pending.writeBytes(bytes)
                if pending.readableBytes >= 1 << 20 { try await flush(&pending, to: writer) }
            case .file(let region) where Self.goesUnread(segment):
                try await flush(&pending, to: writer)
                try await writeUnread(region, to: writer, on: connection)
            case .file, .stream:
                try await flush(&pending, to: writer)
                try await writeRead(segment, to: writer)
            }
        }
        try await flush(&pending, to: writer)
    }

    /// Writes `segment` as recycled buffers read from the plan, keeping at most
    /// ``writeWindow`` writes that the connection has not taken yet.
    private func writeRead(_ segment: BodySegment, to writer: HTTPClient.Body.StreamWriter) async throws {
        let reader = BodyPlan(boundary: plan.boundary, segments: [segment]).makeChunkReader(chunkSize: Self.bufferSize)
        let state = PlanByteBuffers.IteratorState(reader: reader, chunkSize: Self.bufferSize)
        var untaken: [EventLoopFuture<Void>] = []
        while let buffer = try await state.nextBufferOffThePool() {
            untaken.append(writer.write(.byteBuffer(buffer)))
            if untaken.count >= Self.writeWindow { try await untaken.removeFirst().get() }
        }
        for write in untaken { try await write.get() }
    }

    private func flush(_ pending: inout ByteBuffer, to writer: HTTPClient.Body.StreamWriter) async throws {
        guard pending.readableBytes > 0 else { return }
        let buffer = pending
        pending = ByteBuffer()
        try await writer.write(.byteBuffer(buffer)).get()
    }

    private func writeUnread(_ region: FileSlice, to writer: HTTPClient.Body.StreamWriter, on connection: NetworkStack.PlaintextSocketConnection) async throws {
        guard region.length > 0 else { return }
        try Task.checkCancellation()
        let descriptor = try region.openChecked()
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
        let file = OpenFile(handle: handle, checkDescriptor: dup(descriptor), region: region)
        let registered = closed.withLock { closed in
            guard !closed else { return false }
            openFiles.withLock { $0.append(file) }
            return true
        }
        guard registered else {
            try? handle.close()
            if file.checkDescriptor >= 0 { close(file.checkDescriptor) }
            throw CancellationError()
        }
        var start = region.offset
        let end = region.offset + region.length
        while start < end {
            try Task.checkCancellation()
            let stop = min(end, start + Self.regionSize)
            try await writer.write(connection.sendfileWrite(of: handle, from: start, to: stop)).get()
            start = stop
        }
    }

    /// Checks the open files every `interval` while the exchange runs, and calls `onChange`
    /// once if one no longer has its planned size. A file that shrinks under `sendfile`
    /// would otherwise stall the connection until the deadline; the caller cancels the exchange.
    func watchFiles(every interval: Duration = .milliseconds(200), onChange: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                let change = openFiles.withLock { files in files.lazy.compactMap(Self.sizeChange).first }
                if let change {
                    changedFile.withLock { $0 = change }
                    onChange()
                    return
                }
            }
        }
    }

    /// The error of a file that changed size while it was sent, once ``watchFiles(every:onChange:)`` saw one.
    var fileChange: (any Error)? { changedFile.withLock { $0 } }

    /// Closes the files once the exchange is over; a write still running (its connection
    /// gone) can no longer open one. Files sent as `FileRegion`s are closed after every
    /// loop of ``connectionLoops`` has run a tick later than the one that ended the exchange,
    /// so whichever ran the connection, a failed connection has already dropped its queued
    /// writes. With `checkingFiles`, a file whose size changed while it was sent is reported.
    ///
    /// - Throws: `MultipartError/fileSizeChanged(part:path:expected:actual:)`.
    func finish(checkingFiles: Bool) async throws {
        // Let go of the pump: it holds AsyncHTTPClient's writer, which holds the request and
        // its delegate, which holds this body — kept, each upload would stay in memory.
        pump.withLock { pump in
            defer { pump = nil }
            return pump
        }?.stop(CancellationError())
        let files = closed.withLock { closed in
            closed = true
            return openFiles.withLock { files in
                defer { files.removeAll() }
                return files
            }
        }
        guard !files.isEmpty else { return }
        for loop in connectionLoops.makeIterator() {
            try? await loop.submit {}.get()
        }
        let change = checkingFiles ? files.lazy.compactMap(Self.sizeChange).first : nil
        for file in files {
            try? file.handle.close()
            if file.checkDescriptor >= 0 { close(file.checkDescriptor) }
        }
        if let change { throw change }
    }

    private static func sizeChange(_ file: OpenFile) -> (any Error)? {
        guard file.checkDescriptor >= 0 else { return nil }
        do {
            try file.region.verifyUnchanged(descriptor: file.checkDescriptor)
            return nil
        } catch {
            return error
        }
    }
}

