import Foundation
import Testing
@testable import Multipart

@Suite("Encoders agree")
struct EncoderAgreementTests {
    /// A random form of fields, data, files and streams, built from `seed`.
    static func randomForm(seed: UInt64, directory: TemporaryDirectory, boundary: Boundary = .random()) throws -> MultipartForm {
        var random = TestRandom(state: seed | 1)
        var form = MultipartForm(boundary: boundary)
        for index in 0..<random.int(0...8) {
            let name = "f\(index)-\(random.int(0...999))"
            switch random.int(0...4) {
            case 0: form.append(name: name, value: "v\(random.next())")
            case 1: form.append(name: name, bytes: random.bytes(random.int(0...5000)), filename: random.int(0...1) == 0 ? nil : "d.bin")
            case 2:
                let path = try directory.file("file\(seed)-\(index)", random.bytes(random.int(0...300_000)))
                try form.append(name: name, fileAt: path)
            case 3:
                let chunks = (0..<random.int(0...4)).map { _ in random.bytes(random.int(0...70_000)) }
                form.append(name: name, length: Int64(chunks.reduce(0) { $0 + $1.count }), filename: "s.dat") { Chunks(chunks: chunks) }
            default:
                form.append(name: name, bytes: random.bytes(random.int(70_000...100_000)))
            }
        }
        return form
    }

    @Test("content length equals every encoder's output, and all outputs are identical", arguments: 1...25)
    func agreement(seed: Int) async throws {
        let directory = try TemporaryDirectory()
        let form = try Self.randomForm(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15, directory: directory)
        let plan = try form.plan()
        let memory = Array(try await plan.encodedData())
        #expect(Int64(memory.count) == form.contentLength)
        #expect(Int64(memory.count) == plan.contentLength)

        let output = directory.path + "/body"
        try await plan.write(toFile: output)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: output))) == memory)

        #expect(try await plan.encodedBytes() == memory)

        var random = TestRandom(state: UInt64(seed))
        for chunkSize in [1, 7, random.int(1...100_000), 1 << 20] {
            #expect(try await readAll(plan, chunkSize: chunkSize) == memory)
        }
    }

    @Test("a plan produces the same body every time it is started over")
    func restart() async throws {
        let directory = try TemporaryDirectory()
        let plan = try Self.randomForm(seed: 42, directory: directory).plan()
        let first = try await readAll(plan, chunkSize: 4096)
        for _ in 0..<3 {
            #expect(try await readAll(plan, chunkSize: 65536) == first)
        }
        #expect(Array(try await plan.encodedData()) == first)
    }

    @Test("a reader abandoned halfway does not disturb a new one")
    func abandonedReader() async throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("big", TestRandom(state: 9).bytesArray(200_000))
        var form = MultipartForm()
        try form.append(name: "f", fileAt: path)
        let plan = try form.plan()
        let reader = plan.makeChunkReader(chunkSize: 1000)
        _ = try await reader.next()
        _ = try await reader.next()
        let whole = try await readAll(plan, chunkSize: 3000)
        #expect(Int64(whole.count) == plan.contentLength)
    }

    @Test("a file body segment is a region that a transport can send unread")
    func segmentsExposeFileRegions() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("a.txt", "hello")
        var form = MultipartForm()
        form.append(name: "x", value: "1")
        try form.append(name: "f", fileAt: path)
        let segments = try form.plan().segments
        #expect(segments.count == 3)
        guard case .file(let region) = segments[1] else {
            Issue.record("expected a file segment, got \(segments[1])")
            return
        }
        #expect(region.path == path && region.offset == 0 && region.length == 5 && region.needsContentCheck == false)
        #expect(region.part == PartLabel(position: 2, name: "f"))
    }

    #if os(Linux)
    @Test("a small body is encoded in memory (as bytes or as Data) the same whether its file is in the page cache (copied where the caller runs) or must come from the disk (read on the blocking-I/O threads)")
    func smallBodyWarmOrCold() async throws {
        let directory = try TemporaryDirectory()
        var random = TestRandom(state: 7)
        let content = random.bytes(100_000)
        let path = try directory.file("small.bin", content)
        var form = MultipartForm()
        form.append(name: "title", value: "Holiday")
        try form.append(name: "file", fileAt: path)
        let plan = try form.plan()
        let warm = try await plan.encodedBytes()
        #expect(warm == Array(try await plan.encodedData()))
        let trailer = "\r\n--\(plan.boundary.value)--\r\n".utf8.count
        #expect(warm.count == Int(plan.contentLength!) && Array(warm[(warm.count - trailer - content.count)..<(warm.count - trailer)]) == content)

        guard Self.evict(path) else {
            // Only the disk-wait path is left untested; saying so beats passing on a warm file.
            return try Self.notRun("\(path) stayed in the page cache after fdatasync and POSIX_FADV_DONTNEED (mincore): this machine cannot show a cold read")
        }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: warm.count, alignment: 16)
        defer { scratch.deallocate() }
        // Pages still being read ahead when the file was evicted can land in the cache just
        // after (seen on a busy machine): evicted again, it is read again, a few times. A
        // reader that copied uncached bytes without waiting would copy them all every time.
        var fromCache = try plan.makeChunkReader().readCachedWithoutSuspending(into: scratch)
        for _ in 0..<5 where fromCache == warm.count && Self.evict(path) {
            fromCache = try plan.makeChunkReader().readCachedWithoutSuspending(into: scratch)
        }
        if fromCache == warm.count, Self.evict(path), Self.kernelCopiesUncachedWithoutWaiting(path, length: content.count) {
            // A disk that answers from its host's cache can finish the read-ahead that a
            // page-cache-only read starts before that read looks again (seen on a busy virtual
            // machine): then no reader can be shown to wait here.
            return try Self.notRun("preadv2(RWF_NOWAIT) itself returned every byte of \(path) just evicted: this machine's disk answers before a cached-only read returns, so it cannot show a cold read")
        }
        #expect(fromCache < warm.count, "the file has left the page cache: only the bytes before it are copied without waiting")
        Self.evict(path)
        #expect(try await plan.encodedBytes() == warm)
        Self.evict(path)
        #expect(Array(try await plan.encodedData()) == warm)
    }

    /// Drops `path`'s pages from the page cache, so that reading it must wait for the disk, and
    /// says whether it did: `mincore` on a mapping of the file finds no page resident. Dirty
    /// pages and pages still in a CPU's LRU batch are not dropped by `POSIX_FADV_DONTNEED`, so
    /// the file is synced first and the advice given a few times.
    @discardableResult
    static func evict(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return false }
        for _ in 0..<10 {
            guard fdatasync(descriptor) == 0, posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED) == 0 else { return false }
            if residentPages(descriptor, length: Int(status.st_size)) == 0 { return true }
            usleep(20_000)
        }
        return false
    }

    /// Says the test did not run, and why, and ends it: cancelled where Swift Testing can
    /// cancel a test, else it returns (the caller returns at once).
    static func notRun(_ reason: String) throws {
        print("EncoderAgreementTests: NOT RUN: \(reason)")
        #if compiler(>=6.3)
        try Test.cancel(Comment(rawValue: reason))
        #endif
    }

    /// Whether the kernel's own page-cache-only reads (`preadv2` with `RWF_NOWAIT`, called
    /// here, not through the library) copy all `length` bytes of `path`, just evicted,
    /// without waiting — read as the chunk reader reads: again from where the last read
    /// stopped, until one copies nothing (the read-ahead a short read starts can land
    /// before the next). It is looked up by name, as Glibc's Swift module does not offer it.
    static func kernelCopiesUncachedWithoutWaiting(_ path: String, length: Int) -> Bool {
        typealias PReadV2 = @convention(c) (Int32, UnsafePointer<iovec>?, Int32, Int, Int32) -> Int
        let noWait: Int32 = 0x8 // RWF_NOWAIT
        guard let symbol = dlsym(nil, "preadv2") else { return false }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 16)
        defer { buffer.deallocate() }
        let readCached = unsafeBitCast(symbol, to: PReadV2.self)
        var copied = 0
        while copied < length {
            var vector = iovec(iov_base: buffer.baseAddress! + copied, iov_len: length - copied)
            let count = readCached(descriptor, &vector, 1, copied, noWait)
            guard count > 0 else { break }
            copied += count
        }
        return copied == length
    }

    /// How many of the file's pages are in the page cache, by `mincore` on a mapping of it
    /// (mapping touches no page); `Int.max` when that cannot be told.
    static func residentPages(_ descriptor: Int32, length: Int) -> Int {
        guard length > 0 else { return 0 }
        guard let mapping = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0),
              mapping != UnsafeMutableRawPointer(bitPattern: -1) else { return .max }
        defer { munmap(mapping, length) }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vector = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
        guard mincore(mapping, length, &vector) == 0 else { return .max }
        return vector.reduce(0) { $0 + Int($1 & 1) }
    }
    #endif
}

extension TestRandom {
    func bytesArray(_ count: Int) -> [UInt8] {
        var copy = self
        return copy.bytes(count)
    }
}
