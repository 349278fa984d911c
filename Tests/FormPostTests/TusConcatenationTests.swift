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

    @Test("three partial uploads, complete, are not stored; a final upload naming them (absolute URLs and a path) answers 201 at its whole length and stores them joined in its order, with its metadata's name and the whole file's SHA-256; the partial uploads are gone, and the final takes no append")
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

            let named = [serve.base + partials[0], partials[1], serve.base + partials[2]].joined(separator: " ")
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
            for partial in partials {
                #expect(try await Helpers.curl(Self.tus + ["-I", serve.base + partial]).status == 404, "the partial upload \(partial) is kept")
            }
            let appended = try await Helpers.curl(Self.tus + Self.data + ["-X", "PATCH", "-H", "Upload-Offset: \(whole.count)", "--data-binary", "x", url])
            #expect(appended.status == 403, "\(appended.status) \(appended.body)")
        }
    }

    @Test("a final upload naming an incomplete partial upload, one that is not partial, an unknown one, one twice, a path elsewhere, or carrying data answers 400 and stores nothing; the partial uploads stay and are joined after")
    func refusals() async throws {
        try await Helpers.withServe(.directory) { serve in
            let piece = try Helpers.randomBytes(200_000)
            let complete = try await Self.partial(serve, piece, name: "complete", sentAtCreation: piece.count)
            let incomplete = try #require(try await Helpers.curl(Self.tus + Self.data + ["-H", "Upload-Length: 5000", "-H", "Upload-Concat: partial",
                                                                                      "--data-binary", "abc", serve.base + "/files"]).headers["location"])
            let plain = try #require(try await Helpers.curl(Self.tus + ["-X", "POST", "-H", "Upload-Length: 0", serve.base + "/files"]).headers["location"])
            let file = try Helpers.random(serve.samples, "data", piece)
            let cases: [(String, [String])] = [
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
