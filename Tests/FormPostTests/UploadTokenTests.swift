import Foundation
import FormPostServer
import Logging
import Testing

/// With signed URLs, a resumable upload is bound to the creation that began it: its
/// `Location` carries a token (an HMAC of its ID and expiry) that every later request on it
/// must carry; and a signed URL lives at most 7 days.
@Suite("Upload tokens and the signed URLs' lifetime")
struct UploadTokenTests {
    static let key = Array(repeating: UInt8(0x5A), count: 32)
    static let id = "00112233445566778899aabbccddeeff"

    @Test("a token is HMAC-SHA256 of the documented string, as Python's hmac computes it; it verifies for its upload until it expires, and for no other")
    func tokenRoundTrip() throws {
        let signer = try UploadURLSigner(key: Self.key)
        let location = signer.uploadLocation("/files/" + Self.id, id: Self.id, expires: 1_767_225_600)
        #expect(location.hasPrefix("/files/\(Self.id)?X-FormPost-Upload-Expires=1767225600&X-FormPost-Upload-Signature="))
        #expect(UploadURLSigner.uploadStringToSign(id: Self.id, expires: 7) == "FORMPOST-UPLOAD-HMAC-SHA256\n\(Self.id)\n7")
        let code = String(location.split(separator: "=").last ?? "")
        let script = "import hmac, hashlib; print(hmac.new(b'\\x5a' * 32, b'FORMPOST-UPLOAD-HMAC-SHA256\\n\(Self.id)\\n1767225600', hashlib.sha256).hexdigest())"
        let python = try ChildProcess("python3", ["-c", script]).finish()
        #expect(String(decoding: python.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == code)

        try signer.verifyUpload(id: Self.id, target: location, now: 1_767_225_600)
        try signer.verifyUpload(id: Self.id, target: location + "&other=1", now: 1_767_225_600 + 60)
        let other = "ffeeddccbbaa99887766554433221100"
        #expect(throws: UploadSignatureRefusal.uploadTokenInvalid) { try signer.verifyUpload(id: other, target: location, now: 1_767_225_600) }
        #expect(throws: UploadSignatureRefusal.uploadTokenInvalid) { try signer.verifyUpload(id: Self.id, target: location, now: 1_767_225_600 + 61) }
        let later = location.replacingOccurrences(of: "Expires=1767225600", with: "Expires=1767229200")
        #expect(throws: UploadSignatureRefusal.uploadTokenInvalid) { try signer.verifyUpload(id: Self.id, target: later, now: 1_767_225_600) }
        #expect(throws: UploadSignatureRefusal.uploadTokenMissing) { try signer.verifyUpload(id: Self.id, target: "/files/" + Self.id, now: 0) }
        let otherKey = try UploadURLSigner(key: Array(repeating: 0x5B, count: 32))
        #expect(throws: UploadSignatureRefusal.uploadTokenInvalid) { try otherKey.verifyUpload(id: Self.id, target: location, now: 1_767_225_600) }
        // A signed URL's signature is no upload token, nor the other way round.
        let signedURL = signer.signedTarget(method: "POST", path: "/files/" + Self.id, expires: 1_767_225_600)
        #expect(throws: UploadSignatureRefusal.uploadTokenMissing) { try signer.verifyUpload(id: Self.id, target: signedURL, now: 1_767_225_600) }
    }

    @Test("a signed URL lives at most 7 days: verify refuses an expiry further ahead, formpost sign refuses to make one")
    func sevenDays() throws {
        let signer = try UploadURLSigner(key: Self.key)
        let now: Int64 = 1_767_225_600
        let week = signer.signedTarget(method: "POST", path: "/upload", expires: now + 7 * 86_400)
        #expect(try signer.verify(method: "POST", target: week, now: now).expires == now + 7 * 86_400)
        let decade = signer.signedTarget(method: "POST", path: "/upload", expires: now + 315_360_000)
        #expect(throws: UploadSignatureRefusal.tooLong(expires: now + 315_360_000, now: now)) { try signer.verify(method: "POST", target: decade, now: now) }
        let eightDays = signer.signedTarget(method: "POST", path: "/upload", expires: now + 8 * 86_400)
        #expect(throws: UploadSignatureRefusal.tooLong(expires: now + 8 * 86_400, now: now)) { try signer.verify(method: "POST", target: eightDays, now: now) }

        let sample = try SampleDirectory()
        try Data(Self.key).write(to: URL(fileURLWithPath: sample.path + "/key"))
        let refused = try formpost(["sign", "--key-file", sample.path + "/key", "--expires-in", "604801", "http://127.0.0.1/upload"])
        #expect(refused.status == 2 && refused.stderr.contains("expected seconds between 1 and 604800 (7 days"), "\(refused.stderr)")
        let taken = try formpost(["sign", "--key-file", sample.path + "/key", "--expires-in", "604800", "http://127.0.0.1/upload"])
        #expect(taken.status == 0, "\(taken.stderr)")
    }

    @Test("tus and the draft with signed URLs: the creation's Location (and the draft's 104) carries the upload's token; HEAD, PATCH, GET and DELETE without it are 401, with another upload's 403, with it answered; the upload completes",
          .timeLimit(.minutes(2)), arguments: ReceiverAdapter.allCases)
    func followUpsNeedTheToken(adapter: ReceiverAdapter) async throws {
        let sample = try SampleDirectory()
        let directory = sample.path + "/uploads"
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let configuration = ReceiverConfiguration(directory: directory)
        let receiver = try UploadReceiver(configuration: configuration, logger: logger)
        let signer = try UploadURLSigner(key: Self.key)
        let server = UploadServer(receiver: receiver, port: 0, serverLogLevel: .critical, tus: try TusReceiver(configuration: configuration, logger: logger),
                                  resumable: try ResumableUploadReceiver(receiver: receiver, logger: logger), uploadSigner: signer)
        let expires = Int64(Date().timeIntervalSince1970) + 600
        let results = try await whileServing(server, on: adapter) { port in
            try await offPool { () -> [String: SourcedHTTP.Answer] in
                func send(_ method: String, _ target: String, _ headers: [String: String], body: String = "") throws -> SourcedHTTP.Answer {
                    try SourcedHTTP.send(method, target, port: port, from: "127.0.0.1", headers: headers, body: Array(body.utf8))
                }
                var answers: [String: SourcedHTTP.Answer] = [:]
                let tus = ["Tus-Resumable": "1.0.0"]
                let creation = tus.merging(["Upload-Length": "10"]) { $1 }
                let tusCreation = signer.signedTarget(method: "POST", path: "/files", expires: expires)
                let first = try send("POST", tusCreation, creation)
                let second = try send("POST", tusCreation, creation)
                answers["create"] = first
                let location = first.headers["location"] ?? ""
                let bare = String(location.split(separator: "?").first ?? "")
                let othersToken = (second.headers["location"] ?? "").split(separator: "?").last.map(String.init) ?? ""
                let append = tus.merging(["Upload-Offset": "0", "Content-Type": "application/offset+octet-stream"]) { $1 }
                answers["head bare"] = try send("HEAD", bare, tus)
                answers["head other"] = try send("HEAD", bare + "?" + othersToken, tus)
                answers["patch bare"] = try send("PATCH", bare, append, body: "01234")
                answers["get bare"] = try send("GET", bare, tus)
                answers["delete bare"] = try send("DELETE", bare, tus)
                answers["head"] = try send("HEAD", location, tus)
                answers["patch"] = try send("PATCH", location, append, body: "0123456789")
                answers["get"] = try send("GET", location, tus)

                let draftCreation = signer.signedTarget(method: "POST", path: "/upload", expires: expires)
                let draft = try send("POST", draftCreation, ["Upload-Draft-Interop-Version": "6", "Upload-Complete": "?0", "Upload-Length": "4"], body: "ab")
                answers["draft create"] = draft
                let draftLocation = draft.headers["location"] ?? ""
                let draftBare = String(draftLocation.split(separator: "?").first ?? "")
                let draftAppend = ["Upload-Draft-Interop-Version": "6", "Upload-Offset": "2", "Upload-Complete": "?1", "Content-Type": "application/partial-upload"]
                answers["draft patch bare"] = try send("PATCH", draftBare, draftAppend, body: "cd")
                answers["draft options bare"] = try send("OPTIONS", draftBare, [:])
                answers["draft patch"] = try send("PATCH", draftLocation, draftAppend, body: "cd")
                return answers
            }
        }
        let created = try #require(results["create"])
        #expect(created.status == 201, "\(created.text)")
        let location = created.headers["location"] ?? ""
        #expect(location.contains("?X-FormPost-Upload-Expires=") && location.contains("&X-FormPost-Upload-Signature="), "\(location)")
        for name in ["head bare", "patch bare", "get bare", "delete bare", "draft patch bare", "draft options bare"] {
            #expect(results[name]?.status == 401, "\(name): \(results[name]?.text ?? "")")
            // A HEAD's answer has no body to say why.
            #expect(name == "head bare" || results[name]?.text.contains("X-FormPost-Upload-Signature") == true, "\(name): \(results[name]?.text ?? "")")
        }
        #expect(results["head other"]?.status == 403, "\(results["head other"]?.text ?? "")")
        #expect(results["head"]?.status == 200 && results["head"]?.headers["upload-offset"] == "0", "\(results["head"]?.headers ?? [:])")
        #expect(results["patch"]?.status == 204, "\(results["patch"]?.text ?? "")")
        #expect(results["get"]?.status == 200 && results["get"]?.text.contains("\"complete\":true") == true, "\(results["get"]?.text ?? "")")

        let draft = try #require(results["draft create"])
        #expect(draft.status == 201, "\(draft.text)")
        let draftLocation = draft.headers["location"] ?? ""
        #expect(draftLocation.contains("?X-FormPost-Upload-Expires="), "\(draftLocation)")
        // The 104 names the upload with its token too (Vapor sends no interim answer).
        if adapter == .hummingbird {
            #expect(draft.interim.count == 1 && draft.interim.first?.hasPrefix("HTTP/1.1 104") == true, "\(draft.interim)")
            #expect(draft.interim.first?.lowercased().contains("location: " + draftLocation.lowercased()) == true, "\(draft.interim)")
        } else {
            #expect(draft.interim.isEmpty, "\(draft.interim)")
        }
        #expect(results["draft patch"]?.status == 200, "\(results["draft patch"]?.text ?? "")")
        let stored = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }
        #expect(stored.count == 2, "\(stored)")
    }
}
