import Foundation
import Testing

/// tus's concatenation, spoken by `curl` as the protocol's text describes the requests, to
/// `formpost serve` on a directory: partial uploads sent apart, then a final upload that
/// joins them — stored once, its SHA-256 the whole file's, the partial uploads gone — and
/// what is refused. On object storage the extension is not offered.
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

    @Test("three partial uploads, complete, are not stored; a final upload naming them (absolute URLs, one with a query, and a path) answers 201 at its whole length and stores them joined in its order, with its metadata's name and the whole file's SHA-256; the partial uploads' bytes are gone, the same final asked again is the same upload, and the final takes no append")
    func joined() async throws {
        try await Helpers.withServe(.directory) { serve in
            let pieces = try [700_000, 1, 450_123].map { try Helpers.randomBytes($0) }
            var partials: [String] = []
            for (index, piece) in pieces.enumerated() {
                partials.append(try await Self.partial(serve, piece, name: "piece\(index)", sentAtCreation: min(piece.count, 300_000)))
            }
            let head = try await Helpers.curl(Self.tus + ["-I", serve.base + partials[0]])
            #expect(head.headers["upload-concat"] == "partial" && head.headers["upload-offset"] == String(pieces[0].count), "\(head.headers)")
            let stored = try FileManager.default.contentsOfDirectory(atPath: serve.samples.path + "/stored").filter { !$0.hasPrefix(".") }
            #expect(stored.isEmpty, "a complete partial upload was stored: \(stored)")

            // A signed URL's token in a query is no part of the upload's name.
            let named = [serve.base + partials[0], partials[1], serve.base + partials[2] + "?X-FormPost-Upload-Expires=1"].joined(separator: " ")
            let final = try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: final;" + named,
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
            #expect(try Data(contentsOf: URL(fileURLWithPath: serve.samples.path + "/stored/" + storedAs)) == whole, "the stored file is not the pieces joined")
            let files = try FileManager.default.contentsOfDirectory(atPath: serve.samples.path + "/stored").filter { !$0.hasPrefix(".") }
            #expect(files == [storedAs])
            // Their bytes are in the stored file alone; a final asked for again (its answer
            // lost) is answered with the same upload, and nothing more is stored.
            let states = try FileManager.default.contentsOfDirectory(atPath: serve.samples.path + "/stored/.tus").filter { $0.hasSuffix(".data") }
            #expect(states.isEmpty, "the partial uploads' data is kept: \(states)")
            let again = try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: final;" + named, serve.base + "/files"])
            #expect(again.status == 201 && again.headers["location"] == final.headers["location"], "\(again.status) \(again.headers) \(again.body)")
            let partialHead = try await Helpers.curl(Self.tus + ["-I", serve.base + partials[2]])
            #expect(partialHead.status == 200 && partialHead.headers["upload-offset"] == String(pieces[2].count), "\(partialHead.headers)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: serve.samples.path + "/stored").filter { !$0.hasPrefix(".") } == [storedAs])
            let reordered = [partials[1], partials[0], partials[2]].joined(separator: " ")
            #expect(try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: final;" + reordered, serve.base + "/files"]).status == 400)
            let appended = try await Helpers.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: \(whole.count)", "--data-binary", "x", url])
            #expect(appended.status == 403, "\(appended.status) \(appended.body)")
        }
    }

    @Test("a final upload naming an incomplete partial upload, another client's, one that is not partial, an unknown one, one twice, a path elsewhere, or carrying data answers 400 and stores nothing; the partial uploads stay and are joined after")
    func refusals() async throws {
        try await Helpers.withServe(.directory) { serve in
            let piece = try Helpers.randomBytes(200_000)
            let complete = try await Self.partial(serve, piece, name: "complete", sentAtCreation: piece.count)
            let incomplete = try #require(try await Helpers.curl(Self.tus + Self.data + ["-H", "Upload-Length: 5000", "-H", "Upload-Concat: partial",
                                                                                      "--data-binary", "abc", serve.base + "/files"]).headers["location"])
            let plain = try #require(try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Length: 0", serve.base + "/files"]).headers["location"])
            let file = try Helpers.random(serve.samples, "data", piece)
            let others = try #require(try await Helpers.curl(Self.tus + Self.data + ["--interface", "127.0.0.2", "-H", "Upload-Length: 3", "-H", "Upload-Concat: partial",
                                                                                   "--data-binary", "abc", serve.base + "/files"]).headers["location"])
            let cases: [(String, [String])] = [
                ("another client's", ["-H", "Upload-Concat: final;\(complete) \(others)"]),
                ("an incomplete one", ["-H", "Upload-Concat: final;\(complete) \(incomplete)"]),
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
            let storedBefore = try FileManager.default.contentsOfDirectory(atPath: serve.samples.path + "/stored").filter { !$0.hasPrefix(".") }
            // The empty upload that is not partial was stored at its creation, and only it.
            #expect(storedBefore.count == 1, "\(storedBefore)")
            let joined = try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Concat: final;\(complete)", serve.base + "/files"])
            #expect(joined.status == 201, "the partial upload refused in a final is joined after: \(joined.status) \(joined.body)")
            #expect(try await Helpers.storedFile(serve.base + (try #require(joined.headers["location"]))).sha256 == sha256Hex(piece))
        }
    }

    @Test("on object storage, concatenation is not offered: OPTIONS leaves it out, and Upload-Concat is refused (400)")
    func notOnObjectStorage() async throws {
        try await Helpers.withServe(.objects) { serve in
            let options = try await Helpers.curl(["-X", "OPTIONS", serve.base + "/files"])
            let extensions = options.headers["tus-extension"]?.split(separator: ",").map(String.init) ?? []
            #expect(extensions.contains("creation") && !extensions.contains("concatenation"), "\(options.headers)")
            let partial = try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Length: 5", "-H", "Upload-Concat: partial", serve.base + "/files"])
            #expect(partial.status == 400, "\(partial.status) \(partial.body)")
        }
    }
}
