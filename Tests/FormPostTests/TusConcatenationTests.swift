import Foundation
import Testing

/// tus's concatenation, spoken by `curl` as the protocol's text describes the requests, to
/// `formpost serve` on a directory and on object storage (moto): partial uploads sent apart,
/// then a final upload that joins them — stored once, its SHA-256 the whole file's, the
/// partial uploads' bytes gone — and what is refused.
@Suite("tus concatenation", .timeLimit(.minutes(5)))
struct TusConcatenationTests {
    typealias Helpers = TusCreationExtensionTests
    static let tus = Helpers.tus, data = Helpers.data

    /// Creates a partial upload of `bytes` (its first `sentAtCreation` bytes in the `POST`,
    /// the rest by a `PATCH`); its path.
    static func partial(_ serve: Helpers.Serve, _ bytes: Data, name: String, sentAtCreation: Int) async throws -> String {
        let first = try Helpers.random(serve.samples, name + ".first", bytes.prefix(sentAtCreation))
        let created = try await Helpers.curl(Self.tus + Self.data + ["-H", "Upload-Length: \(bytes.count)", "-H", "Upload-Concat: partial",
                                                           "--data-binary", "@" + first, serve.base + "/files"])
        #expect(created.status == 201 && created.headers["upload-offset"] == String(sentAtCreation), "\(created.status) \(created.body)")
        let location = try #require(created.headers["location"])
        if sentAtCreation < bytes.count {
            let rest = try Helpers.random(serve.samples, name + ".rest", bytes.dropFirst(sentAtCreation))
            let appended = try await Helpers.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: \(sentAtCreation)", "--data-binary", "@" + rest,
                                                                serve.base + location])
            #expect(appended.status == 204 && appended.headers["upload-offset"] == String(bytes.count), "\(appended.status) \(appended.body)")
        }
        return location
    }

    /// The pieces a test joins on `storage`. On object storage (parts of 8 MiB, S3's
    /// minimum 5 MiB) they take each way of joining: a partial upload with parts and a tail
    /// copied by the store whole, pieces under 5 MiB read and gathered into a part with the
    /// start of the next one, whose rest (under 5 MiB) goes with the last piece.
    static func pieces(_ storage: Helpers.Storage) throws -> [Data] {
        let sizes = storage == .directory ? [700_000, 1, 450_123] : [12 << 20, 1, 3 << 20, 9 << 20, 700_000]
        return try sizes.map { try Helpers.randomBytes($0) }
    }

    @Test("partial uploads, complete, are not stored; a final upload naming them (absolute URLs, one with a query, and paths) answers 201 at its whole length and stores them joined in its order, with its metadata's name and the whole file's SHA-256; the partial uploads' bytes are gone, the same final asked again is the same upload, and the final takes no append",
          arguments: Helpers.Storage.allCases)
    func joined(storage: Helpers.Storage) async throws {
        try await Helpers.withServe(storage) { serve in
            let pieces = try Self.pieces(storage)
            var partials: [String] = []
            for (index, piece) in pieces.enumerated() {
                partials.append(try await Self.partial(serve, piece, name: "piece\(index)", sentAtCreation: min(piece.count, 300_000)))
            }
            let head = try await Helpers.curl(Self.tus + ["-I", serve.base + partials[0]])
            #expect(head.headers["upload-concat"] == "partial" && head.headers["upload-offset"] == String(pieces[0].count), "\(head.headers)")
            #expect(try await serve.storedFiles().isEmpty, "a complete partial upload was stored")

            // A signed URL's token in a query is no part of the upload's name.
            var named = partials
            named[0] = serve.base + named[0]
            named[named.count - 1] = serve.base + named[named.count - 1] + "?X-FormPost-Upload-Expires=1"
            let concat = "final;" + named.joined(separator: " ")
            let final = try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: " + concat,
                                                      "-H", "Upload-Metadata: filename am9pbmVkLmJpbg==", serve.base + "/files"])
            let whole = pieces.reduce(Data(), +)
            #expect(final.status == 201 && final.headers["upload-offset"] == String(whole.count), "\(final.status) \(final.body)")
            let url = serve.base + (try #require(final.headers["location"]))
            let finalHead = try await Helpers.curl(Self.tus + ["-I", url])
            #expect(finalHead.headers["upload-concat"] == "final;" + partials.joined(separator: " "), "\(finalHead.headers)")
            #expect(finalHead.headers["upload-offset"] == String(whole.count) && finalHead.headers["upload-length"] == String(whole.count))
            let state = try AdapterReceivingTests.json(try await Helpers.curl(Self.tus + [url]).body)
            let receipt = try #require(state["receipt"] as? [String: Any])
            let file = try #require(try AdapterReceivingTests.files(receipt).first)
            #expect(file["filename"] as? String == "joined.bin" && file["size"] as? Int == whole.count)
            #expect(file["sha256"] as? String == sha256Hex(whole))
            let storedAs = try #require(file["storedAs"] as? String)
            #expect(try await serve.storedSHA256(storedAs) == sha256Hex(whole), "the stored file is not the pieces joined")
            #expect(try await serve.storedFiles() == [storedAs])
            // Their bytes are in the stored file alone; a final asked for again (its answer
            // lost) is answered with the same upload, and nothing more is stored.
            let left = try await serve.uploadBytesLeft()
            #expect(left.isEmpty, "the partial uploads' bytes are kept: \(left)")
            let again = try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: " + concat, serve.base + "/files"])
            #expect(again.status == 201 && again.headers["location"] == final.headers["location"], "\(again.status) \(again.headers) \(again.body)")
            let partialHead = try await Helpers.curl(Self.tus + ["-I", serve.base + partials[2]])
            #expect(partialHead.status == 200 && partialHead.headers["upload-offset"] == String(pieces[2].count), "\(partialHead.headers)")
            #expect(try await serve.storedFiles() == [storedAs])
            let reordered = [partials[1], partials[0]] + partials.dropFirst(2)
            #expect(try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: final;" + reordered.joined(separator: " "),
                                                      serve.base + "/files"]).status == 400)
            let appended = try await Helpers.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: \(whole.count)", "--data-binary", "x", url])
            #expect(appended.status == 403, "\(appended.status) \(appended.body)")
        }
    }

    @Test("a final upload naming another client's partial upload, one that is not partial, an unknown one, one twice, a path elsewhere, or carrying data answers 400 and stores nothing; the partial uploads stay and are joined after",
          arguments: Helpers.Storage.allCases)
    func refusals(storage: Helpers.Storage) async throws {
        try await Helpers.withServe(storage) { serve in
            let piece = try Helpers.randomBytes(200_000)
            let complete = try await Self.partial(serve, piece, name: "complete", sentAtCreation: piece.count)
            let plain = try #require(try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Length: 0", serve.base + "/files"]).headers["location"])
            let file = try Helpers.random(serve.samples, "data", piece)
            let others = try #require(try await Helpers.curl(Self.tus + Self.data + ["--interface", "127.0.0.2", "-H", "Upload-Length: 3", "-H", "Upload-Concat: partial",
                                                                                   "--data-binary", "abc", serve.base + "/files"]).headers["location"])
            let cases: [(String, [String])] = [
                ("another client's", ["-H", "Upload-Concat: final;\(complete) \(others)"]),
                ("one not partial", ["-H", "Upload-Concat: final;\(complete) \(plain)"]),
                ("an unknown one", ["-H", "Upload-Concat: final;\(complete) /files/0123456789abcdef0123456789abcdef"]),
                ("one twice", ["-H", "Upload-Concat: final;\(complete) \(complete)"]),
                ("a path elsewhere", ["-H", "Upload-Concat: final;/uploads/\(complete.dropFirst("/files/".count))"]),
                ("no upload", ["-H", "Upload-Concat: final;"]),
                ("neither partial nor final", ["-H", "Upload-Concat: whole"]),
                ("data", ["-H", "Upload-Concat: final;\(complete)"] + Self.data + ["--data-binary", "@" + file]),
            ]
            for (what, fields) in cases {
                let answer = try await Helpers.curl(Self.tus + ["-X", "POST"] + fields + [serve.base + "/files"])
                #expect(answer.status == 400 && answer.headers["location"] == nil, "\(what): \(answer.status) \(answer.body)")
            }
            let storedBefore = try await serve.storedFiles()
            // The empty upload that is not partial was stored at its creation, and only it.
            #expect(storedBefore.count == 1, "\(storedBefore)")
            let joined = try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: final;\(complete)", serve.base + "/files"])
            #expect(joined.status == 201, "the partial upload refused in a final is joined after: \(joined.status) \(joined.body)")
            #expect(try await Helpers.storedFile(serve.base + (try #require(joined.headers["location"]))).sha256 == sha256Hex(piece))
        }
    }

    @Test("on object storage, a join whose store fails (every completion of a multipart upload refused, past the retries) answers 503 and stores nothing; the same final again joins anew: one stored object, the pieces in order, nothing of the first attempt left")
    func joinFailedThenAgain() async throws {
        let moto = try await MotoStore()
        let faults = try await ObjectStorageResumableTests.CompletionFaults(store: moto, failures: 4)
        let serve = Helpers.Serve(base: faults.base, samples: faults.directory, bucket: { try await moto.contents() })
        let pieces = try Self.pieces(.objects)
        var partials: [String] = []
        for (index, piece) in pieces.enumerated() {
            partials.append(try await Self.partial(serve, piece, name: "piece\(index)", sentAtCreation: min(piece.count, 300_000)))
        }
        let concat = ["-X", "POST", "-H", "Upload-Concat: final;" + partials.joined(separator: " "), serve.base + "/files"]
        let failed = try await Helpers.curl(Self.tus + concat)
        #expect(failed.status == 503, "\(failed.status) \(failed.body)")
        #expect(try await serve.storedFiles().isEmpty)
        let joined = try await Helpers.curl(Self.tus + concat)
        let whole = pieces.reduce(Data(), +)
        #expect(joined.status == 201 && joined.headers["upload-offset"] == String(whole.count), "\(joined.status) \(joined.body)")
        let stored = try await Helpers.storedFile(serve.base + (try #require(joined.headers["location"])))
        let read = try await serve.storedSHA256(stored.storedAs)
        #expect(stored.sha256 == sha256Hex(whole) && read == sha256Hex(whole))
        #expect(try await serve.storedFiles() == [stored.storedAs])
        let left = try await serve.uploadBytesLeft()
        #expect(left.isEmpty, "\(left)")
    }

    @Test("concatenation-unfinished: a final upload naming partial uploads not all complete (one of deferred length) answers 201 without Upload-Offset, and so does HEAD (no Upload-Length while one is unknown); asked for again it is the same upload; it takes no PATCH; the last partial upload's last append joins it: HEAD then answers its whole length, stored once with the whole file's SHA-256",
          arguments: Helpers.Storage.allCases)
    func unfinished(storage: Helpers.Storage) async throws {
        try await Helpers.withServe(storage) { serve in
            let sizes = storage == .directory ? [300_000, 200_000, 100_000] : [9 << 20, 6 << 20, 1_000_000]
            let pieces = try sizes.map { try Helpers.randomBytes($0) }
            let first = try await Self.partial(serve, pieces[0], name: "first", sentAtCreation: pieces[0].count)
            let start = try Helpers.random(serve.samples, "second.start", pieces[1].prefix(1000))
            let second = try #require(try await Helpers.curl(Self.tus + Self.data + ["-H", "Upload-Length: \(pieces[1].count)", "-H", "Upload-Concat: partial",
                                                                                  "--data-binary", "@" + start, serve.base + "/files"]).headers["location"])
            let third = try #require(try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Defer-Length: 1", "-H", "Upload-Concat: partial",
                                                                      serve.base + "/files"]).headers["location"])
            let concat = ["-X", "POST", "-H", "Upload-Concat: final;\(first) \(second) \(third)", serve.base + "/files"]
            let final = try await Helpers.curl(Self.tus + concat)
            #expect(final.status == 201 && final.headers["upload-offset"] == nil, "\(final.status) \(final.headers) \(final.body)")
            let url = serve.base + (try #require(final.headers["location"]))
            let waiting = try await Helpers.curl(Self.tus + ["-I", url])
            #expect(waiting.status == 200 && waiting.headers["upload-offset"] == nil && waiting.headers["upload-length"] == nil
                    && waiting.headers["upload-defer-length"] == nil && waiting.headers["upload-concat"] == "final;\(first) \(second) \(third)",
                    "\(waiting.status) \(waiting.headers)")
            let again = try await Helpers.curl(Self.tus + concat)
            #expect(again.status == 201 && again.headers["location"] == final.headers["location"] && again.headers["upload-offset"] == nil,
                    "\(again.status) \(again.headers)")
            let patched = try await Helpers.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "--data-binary", "x", url])
            #expect(patched.status == 403, "\(patched.status) \(patched.body)")
            #expect(try await serve.storedFiles().isEmpty)

            // The third, its length declared with its bytes; the second still lacks its rest.
            let thirdBytes = try Helpers.random(serve.samples, "third", pieces[2])
            let thirdDone = try await Helpers.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: 0", "-H", "Upload-Length: \(pieces[2].count)",
                                                                       "--data-binary", "@" + thirdBytes, serve.base + third])
            #expect(thirdDone.status == 204, "\(thirdDone.status) \(thirdDone.body)")
            #expect(try await Helpers.curl(Self.tus + ["-I", url]).headers["upload-offset"] == nil)
            let rest = try Helpers.random(serve.samples, "second.rest", pieces[1].dropFirst(1000))
            let secondDone = try await Helpers.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: 1000", "--data-binary", "@" + rest,
                                                                        serve.base + second])
            #expect(secondDone.status == 204, "\(secondDone.status) \(secondDone.body)")
            // The append that completed the last partial upload joined the final one.
            #expect(try await serve.storedFiles().count == 1, "not joined by the last append")
            let whole = pieces.reduce(Data(), +)
            let joined = try await Helpers.curl(Self.tus + ["-I", url])
            #expect(joined.headers["upload-offset"] == String(whole.count) && joined.headers["upload-length"] == String(whole.count), "\(joined.headers)")
            let stored = try await Helpers.storedFile(url)
            let read = try await serve.storedSHA256(stored.storedAs)
            #expect(stored.sha256 == sha256Hex(whole) && read == sha256Hex(whole), "the stored file is not the pieces joined")
            #expect(try await serve.storedFiles() == [stored.storedAs])
            let left = try await serve.uploadBytesLeft()
            #expect(left.isEmpty, "\(left)")
        }
    }

    @Test("concatenation-unfinished: a final upload awaiting a partial upload that receives bytes slowly is as active as it, and is not removed as idle (the disk: --idle-upload-expiry 2, a byte every 0.7 s; objects: --resumable-expiry 6, swept every second, a byte every 1.5 s) before it is joined",
          arguments: Helpers.Storage.allCases)
    func awaitingIsNotIdle(storage: Helpers.Storage) async throws {
        let options = storage == .directory ? ["--idle-upload-expiry", "2"] : ["--resumable-expiry", "6", "--s3-sweep", "1"]
        let pause: Duration = storage == .directory ? .milliseconds(700) : .milliseconds(1500)
        try await Helpers.withServe(storage, options: options) { serve in
            let piece = try Helpers.randomBytes(8000)
            let partial = try #require(try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Length: \(piece.count)", "-H", "Upload-Concat: partial",
                                                                        serve.base + "/files"]).headers["location"])
            let final = try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: final;" + partial, serve.base + "/files"])
            let url = serve.base + (try #require(final.headers["location"]))
            // 1,000 bytes every pause: twice the expiry in all, the final upload receiving none.
            for offset in stride(from: 0, to: piece.count, by: 1000) {
                try await Task.sleep(for: pause)
                let bytes = try Helpers.random(serve.samples, "bytes", piece[offset..<offset + 1000])
                let appended = try await Helpers.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: \(offset)", "--data-binary", "@" + bytes,
                                                                          serve.base + partial])
                #expect(appended.status == 204, "\(appended.status) \(appended.body)")
            }
            let joined = try await Helpers.curl(Self.tus + ["-I", url])
            #expect(joined.status == 200 && joined.headers["upload-offset"] == String(piece.count), "\(joined.status) \(joined.headers)")
            #expect(try await Helpers.storedFile(url).sha256 == sha256Hex(piece))
        }
    }
}
