import Foundation
import FormPostServer
import Multipart
import Testing

/// `formpost serve --signing-key-file`: every upload needs a URL signed by `formpost sign`
/// (or ``UploadURLSigner``), checked before a byte of its body is stored.
@Suite("formpost serve takes only signed uploads")
struct SignedUploadServeTests {
    /// A `formpost serve` with a signing key, storing into a directory of its own.
    final class SigningServer: Sendable {
        let sample: SampleDirectory
        let uploads: String
        let keyFile: String
        let port: Int
        let server: ChildProcess

        init() throws {
            sample = try SampleDirectory()
            uploads = sample.path + "/uploads"
            keyFile = sample.path + "/key"
            try Data((0..<32).map { UInt8($0 * 7 + 3) }).write(to: URL(fileURLWithPath: keyFile))
            port = try freePort()
            server = try ChildProcess(formpostBinary, ["serve", "--port", String(port), "--dir", uploads, "--signing-key-file", keyFile],
                                      stdout: .discard, stderr: .discard)
            try RawSocket.waitForListenerBlocking(port: port, attempts: 800)
        }

        var base: String { "http://127.0.0.1:\(port)" }

        /// `formpost sign` of `path` with `options`.
        func sign(_ path: String, _ options: [String] = []) throws -> String {
            let result = try formpost(["sign", "--key-file", keyFile] + options + [base + path])
            guard result.status == 0 else { throw Subprocess.Failure(description: "formpost sign exited \(result.status): \(result.stderr)") }
            return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// A sample file of `size` bytes, and `path` signed by `formpost sign` with `options`.
        func fileAndURL(_ name: String, size: Int, seed: UInt8, signing path: String, _ options: [String] = []) throws -> (file: String, url: String) {
            (try sample.file(name, size: size, seed: seed), try sign(path, options))
        }

        /// The regular files under the storage directory, the receivers' own included.
        var storedBytes: Int64 { GracefulStopTests.bytes(under: uploads) }

        /// The files stored (hidden state directories left out).
        var stored: [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: uploads)) ?? []).filter { !$0.hasPrefix(".") }
        }
    }

    /// A curl request: its status and body.
    struct Answer {
        let status: Int
        let body: String
    }

    static func curl(_ arguments: [String]) throws -> Answer {
        let result = try ChildProcess("curl", ["-s", "-w", "\n%{http_code}"] + arguments).finish()
        let text = String(decoding: result.stdout, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return Answer(status: Int(lines.last ?? "") ?? 0, body: lines.dropLast().joined(separator: "\n"))
    }

    @Test("a form without a signature is answered 401 saying why, with nothing stored; the page and the health endpoints stay open",
          .timeLimit(.minutes(2)))
    func unsignedIsUnauthorized() async throws {
        let server = try await offPool { try SigningServer() }
        let file = try server.sample.file("a.bin", size: 3 << 20, seed: 1)
        let (unsigned, page, ready) = try await offPool {
            (try Self.curl(["-F", "f=@" + file, server.base + "/upload"]), try Self.curl(["-o", "/dev/null", server.base + "/"]),
             try Self.curl([server.base + "/readyz"]))
        }
        #expect(unsigned.status == 401)
        #expect(unsigned.body.contains("needs a signed URL"), "\(unsigned.body)")
        #expect(page.status == 200 && ready.status == 200)
        #expect(server.stored.isEmpty && server.storedBytes == 0)
    }

    @Test("a URL signed by formpost sign takes the form (formpost -F): 200, the file stored intact")
    func signedIsStored() async throws {
        let server = try await offPool { try SigningServer() }
        let (file, url) = try await offPool { try server.fileAndURL("b.bin", size: 2 << 20, seed: 2, signing: "/upload", ["--expires-in", "600", "--max-bytes", "3M"]) }
        #expect(url.hasPrefix(server.base + "/upload?X-FormPost-Expires="))
        let result = try await offPool { try formpost(["-s", "-F", "f=@" + file, url]) }
        #expect(result.status == 0, "\(result.stderr)")
        let receipt = try JSONDecoder().decode(Receipt.self, from: result.stdout)
        #expect(receipt.files.map(\.sha256) == [sha256Hex(try Data(contentsOf: URL(fileURLWithPath: file)))])
        #expect(server.stored == receipt.files.map(\.storedAs))
    }

    @Test("a tampered signature or limit, an expired URL, one signed for another path or method: 403 saying why, nothing stored")
    func invalidIsForbidden() async throws {
        let server = try await offPool { try SigningServer() }
        let (file, url) = try await offPool { try server.fileAndURL("c.bin", size: 1 << 20, seed: 3, signing: "/upload", ["--max-bytes", "2M"]) }
        let signature = String(url.split(separator: "=").last ?? "")
        let flipped = String(signature.dropLast()) + (signature.hasSuffix("0") ? "1" : "0")
        let signer = try UploadURLSigner(keyFile: server.keyFile)
        let expired = server.base + signer.signedTarget(method: "POST", path: "/upload", expires: Int64(Date().timeIntervalSince1970) - 3600)
        let forPut = try await offPool { try server.sign("/upload", ["--method", "PUT"]) }
        let cases: [(String, [String], String)] = [
            ("tampered signature", ["-F", "f=@" + file, url.replacingOccurrences(of: signature, with: flipped)], "does not match"),
            ("tampered limit", ["-F", "f=@" + file, url.replacingOccurrences(of: "Max-Bytes=2097152", with: "Max-Bytes=20971520")], "does not match"),
            ("expired", ["-F", "f=@" + file, expired], "expired"),
            ("another path", ["-F", "f=@" + file, url.replacingOccurrences(of: "/upload?", with: "/elsewhere?")], "does not match"),
            ("another method", ["-F", "f=@" + file, forPut], "does not match"),
        ]
        let answers = try await offPool { try cases.map { try Self.curl($0.1) } }
        for (answer, (name, _, reason)) in zip(answers, cases) {
            #expect(answer.status == 403, "\(name): \(answer.status) \(answer.body)")
            #expect(answer.body.contains(reason), "\(name): \(answer.body)")
        }
        #expect(server.stored.isEmpty && server.storedBytes == 0)
    }

    @Test("a form over the signed limit is answered 413 and leaves nothing: declared by Content-Length (refused unread) or chunked (cut at the limit)")
    func overTheLimit() async throws {
        let server = try await offPool { try SigningServer() }
        let (file, url) = try await offPool { try server.fileAndURL("d.bin", size: 3 << 20, seed: 4, signing: "/upload", ["--max-bytes", "1M"]) }
        let (declared, chunked) = try await offPool {
            (try Self.curl(["-F", "f=@" + file, url]), try Self.curl(["-H", "Transfer-Encoding: chunked", "-F", "f=@" + file, url]))
        }
        #expect(declared.status == 413, "\(declared.body)")
        #expect(chunked.status == 413, "\(chunked.body)")
        #expect(declared.body.contains("1048576") && chunked.body.contains("1048576"))
        #expect(server.stored.isEmpty && server.storedBytes == 0)
    }

    @Test("tus: a creation needs a signature (401 without; 413 over the signed limit; 411 for a deferred length or a final upload under it); with one, formpost uploads resumably, its appends (three of 1 MiB) unsigned to the upload's own URL")
    func tusCreation() async throws {
        let server = try await offPool { try SigningServer() }
        let (file, url) = try await offPool { try server.fileAndURL("e.bin", size: 3 << 20, seed: 5, signing: "/files", ["--max-bytes", "4M"]) }
        let (unsigned, tooLarge, deferred, final, uploaded) = try await offPool {
            (try Self.curl(["-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: 10", server.base + "/files"]),
             try Self.curl(["-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Length: \(5 << 20)", url]),
             try Self.curl(["-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Defer-Length: 1", url]),
             try Self.curl(["-X", "POST", "-H", "Tus-Resumable: 1.0.0", "-H", "Upload-Concat: final;/files/0123456789abcdef0123456789abcdef", url]),
             try ChildProcess("env", ["XDG_STATE_HOME=" + server.sample.path + "/state", formpostBinary, "-s", "--resumable", "tus", "--chunk-size", "1M",
                                      "-T", file, url]).finish())
        }
        #expect(unsigned.status == 401)
        #expect(tooLarge.status == 413, "\(tooLarge.body)")
        // Past the limit later (a length declared by an append, partial uploads joined): refused now.
        #expect(deferred.status == 411 && final.status == 411, "\(deferred.status) \(deferred.body) \(final.status) \(final.body)")
        #expect(uploaded.status == 0, "\(String(decoding: uploaded.stderr, as: UTF8.self))")
        let stored = server.stored
        #expect(stored.count == 1)
        let data = try Data(contentsOf: URL(fileURLWithPath: server.uploads + "/" + (stored.first ?? "")))
        #expect(data == (try Data(contentsOf: URL(fileURLWithPath: file))))
    }

    @Test("IETF draft: a creation (Upload-Complete) needs a signature (401 without); under a signed limit it must declare its length (411 without, 413 over), and its unsigned appends are held to that length; a signed one is stored")
    func draftCreation() async throws {
        let server = try await offPool { try SigningServer() }
        let (file, url) = try await offPool { try server.fileAndURL("g.bin", size: 1 << 20, seed: 7, signing: "/upload", ["--max-bytes", "2M"]) }
        let draft = ["-H", "Upload-Draft-Interop-Version: 8", "-H", "Content-Type: application/octet-stream"]
        let (unsigned, undeclared, tooLarge, pastLength, stored) = try await offPool {
            let unsigned = try Self.curl(draft + ["-H", "Upload-Complete: ?1", "--data-binary", "@" + file, server.base + "/upload"])
            let undeclared = try Self.curl(draft + ["-H", "Upload-Complete: ?0", "-H", "Transfer-Encoding: chunked", "--data-binary", "@" + file, url])
            let tooLarge = try Self.curl(draft + ["-H", "Upload-Complete: ?0", "-H", "Upload-Length: \(3 << 20)", "--data-binary", "@" + file, url])
            // Created within the limit (its first MiB sent), then an append past the length declared.
            let created = try ChildProcess("curl", ["-s", "-o", "/dev/null", "-D", "-"] + draft + ["-H", "Upload-Complete: ?0", "-H", "Upload-Length: \(3 << 19)",
                                                                                          "--data-binary", "@" + file, url]).finish()
            let location = String(decoding: created.stdout, as: UTF8.self).split(whereSeparator: \.isNewline)
                .last { $0.lowercased().hasPrefix("location:") }.map { $0.dropFirst("location:".count).trimmingCharacters(in: .whitespaces) } ?? ""
            let pastLength = try Self.curl(["-X", "PATCH", "-H", "Upload-Draft-Interop-Version: 8", "-H", "Content-Type: application/partial-upload",
                                            "-H", "Upload-Offset: \(1 << 20)", "-H", "Upload-Complete: ?0", "-H", "Transfer-Encoding: chunked",
                                            "--data-binary", "@" + file, server.base + location])
            return (unsigned, undeclared, tooLarge, pastLength, try Self.curl(draft + ["-H", "Upload-Complete: ?1", "--data-binary", "@" + file, url]))
        }
        #expect(unsigned.status == 401)
        #expect(undeclared.status == 411, "\(undeclared.body)")
        #expect(tooLarge.status == 413, "\(tooLarge.body)")
        #expect(pastLength.status == 413, "\(pastLength.body)")
        #expect(stored.status == 200, "\(stored.body)")
        #expect(server.stored.count == 1)
    }

    @Test("a signing key file shorter than 32 bytes: formpost serve and formpost sign refuse it, saying so, with exit status 2")
    func shortKeyIsRefused() throws {
        let sample = try SampleDirectory()
        let key = sample.path + "/short"
        try Data(repeating: 9, count: 20).write(to: URL(fileURLWithPath: key))
        let serve = try formpost(["serve", "--port", "0", "--dir", sample.path + "/uploads", "--signing-key-file", key])
        let sign = try formpost(["sign", "--key-file", key, "http://127.0.0.1/upload"])
        for result in [serve, sign] {
            #expect(result.status == 2)
            #expect(result.stderr.contains("has 20 bytes: it needs at least 32"), "\(result.stderr)")
        }
    }
}
