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

    /// The answer to a raw request: its status, head fields (names lowercased) and body.
    struct Answer: Sendable {
        let status: Int
        let text: String

        /// The last value of `name` in the final answer's head.
        func field(_ name: String) -> String? {
            let finalHead = text.components(separatedBy: "\r\n\r\n").dropLast().last ?? ""
            return finalHead.split(separator: "\r\n").last { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { $0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces) }
        }
    }

    /// Sends `head` (and `body`) to `port` with `Connection: close`, and reads the whole answer.
    static func exchange(_ port: Int, _ head: String, body: String = "") throws -> Answer {
        guard let descriptor = try RawSocket.connect(port: port) else { throw Subprocess.Failure(description: "connect failed") }
        defer { close(descriptor) }
        let bytes = Array((head + "Host: 127.0.0.1\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body).utf8)
        _ = bytes.withUnsafeBytes { POSIX.send(descriptor, $0) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        let statuses = text.split(separator: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }.compactMap { Int($0.split(separator: " ")[1]) }
        return Answer(status: statuses.last { $0 >= 200 } ?? 0, text: text)
    }

    @Test("tus and the draft with signed URLs: the creation's Location (and the draft's 104) carries the upload's token; HEAD, PATCH, GET and DELETE without it are 401, with another upload's 403, with it answered; the upload completes",
          .timeLimit(.minutes(2)))
    func followUpsNeedTheToken() async throws {
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
        let results = try await whileRunning({ onStarted in try server.application(onStarted: onStarted) }) { port in
            try await offPool { () -> [String: Answer] in
                var answers: [String: Answer] = [:]
                let tusCreation = signer.signedTarget(method: "POST", path: "/files", expires: expires)
                let first = try Self.exchange(port, "POST \(tusCreation) HTTP/1.1\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 10\r\n")
                let second = try Self.exchange(port, "POST \(tusCreation) HTTP/1.1\r\nTus-Resumable: 1.0.0\r\nUpload-Length: 10\r\n")
                answers["create"] = first
                let location = first.field("Location") ?? ""
                let bare = String(location.split(separator: "?").first ?? "")
                let othersToken = (second.field("Location") ?? "").split(separator: "?").last.map(String.init) ?? ""
                let tus = "Tus-Resumable: 1.0.0\r\n"
                answers["head bare"] = try Self.exchange(port, "HEAD \(bare) HTTP/1.1\r\n\(tus)")
                answers["head other"] = try Self.exchange(port, "HEAD \(bare)?\(othersToken) HTTP/1.1\r\n\(tus)")
                answers["patch bare"] = try Self.exchange(port, "PATCH \(bare) HTTP/1.1\r\n\(tus)Upload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n", body: "01234")
                answers["get bare"] = try Self.exchange(port, "GET \(bare) HTTP/1.1\r\n\(tus)")
                answers["delete bare"] = try Self.exchange(port, "DELETE \(bare) HTTP/1.1\r\n\(tus)")
                answers["head"] = try Self.exchange(port, "HEAD \(location) HTTP/1.1\r\n\(tus)")
                answers["patch"] = try Self.exchange(port, "PATCH \(location) HTTP/1.1\r\n\(tus)Upload-Offset: 0\r\nContent-Type: application/offset+octet-stream\r\n", body: "0123456789")
                answers["get"] = try Self.exchange(port, "GET \(location) HTTP/1.1\r\n\(tus)")

                let draftCreation = signer.signedTarget(method: "POST", path: "/upload", expires: expires)
                let draft = try Self.exchange(port, "POST \(draftCreation) HTTP/1.1\r\nUpload-Draft-Interop-Version: 6\r\nUpload-Complete: ?0\r\nUpload-Length: 4\r\n", body: "ab")
                answers["draft create"] = draft
                let draftLocation = draft.field("Location") ?? ""
                let draftBare = String(draftLocation.split(separator: "?").first ?? "")
                let append = "Upload-Draft-Interop-Version: 6\r\nUpload-Offset: 2\r\nUpload-Complete: ?1\r\nContent-Type: application/partial-upload\r\n"
                answers["draft patch bare"] = try Self.exchange(port, "PATCH \(draftBare) HTTP/1.1\r\n\(append)", body: "cd")
                answers["draft options bare"] = try Self.exchange(port, "OPTIONS \(draftBare) HTTP/1.1\r\n")
                answers["draft patch"] = try Self.exchange(port, "PATCH \(draftLocation) HTTP/1.1\r\n\(append)", body: "cd")
                return answers
            }
        }
        let created = try #require(results["create"])
        #expect(created.status == 201, "\(created.text)")
        let location = created.field("Location") ?? ""
        #expect(location.contains("?X-FormPost-Upload-Expires=") && location.contains("&X-FormPost-Upload-Signature="), "\(location)")
        for name in ["head bare", "patch bare", "get bare", "delete bare", "draft patch bare", "draft options bare"] {
            #expect(results[name]?.status == 401, "\(name): \(results[name]?.text ?? "")")
            // A HEAD's answer has no body to say why.
            #expect(name == "head bare" || results[name]?.text.contains("X-FormPost-Upload-Signature") == true, "\(name): \(results[name]?.text ?? "")")
        }
        #expect(results["head other"]?.status == 403, "\(results["head other"]?.text ?? "")")
        #expect(results["head"]?.status == 200 && results["head"]?.field("Upload-Offset") == "0", "\(results["head"]?.text ?? "")")
        #expect(results["patch"]?.status == 204, "\(results["patch"]?.text ?? "")")
        #expect(results["get"]?.status == 200 && results["get"]?.text.contains("\"complete\":true") == true, "\(results["get"]?.text ?? "")")

        let draft = try #require(results["draft create"])
        #expect(draft.status == 201, "\(draft.text)")
        let draftLocation = draft.field("Location") ?? ""
        #expect(draftLocation.contains("?X-FormPost-Upload-Expires="), "\(draftLocation)")
        // The 104 names the upload with its token too.
        let interim = draft.text.components(separatedBy: "\r\n\r\n").first ?? ""
        #expect(interim.hasPrefix("HTTP/1.1 104") && interim.contains(draftLocation), "\(draft.text)")
        #expect(results["draft patch"]?.status == 200, "\(results["draft patch"]?.text ?? "")")
        let stored = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { !$0.hasPrefix(".") }
        #expect(stored.count == 2, "\(stored)")
    }
}
