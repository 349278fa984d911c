import Foundation
import Multipart
import FormPostServer
import Testing

/// Runs an HTTPS receiver (`formpost serve`'s, with the fixtures' valid certificate) storing
/// into a new directory, and `body` with its port.
func withTLSReceiver<T: Sendable>(_ fixtures: TLSFixtures, limits: ConnectionLimits = ConnectionLimits(),
                                  _ body: @Sendable (Int) async throws -> T) async throws -> T {
    let directory = try SampleDirectory()
    let tls = try UploadServer.serverTLSConfiguration(certificateChainPath: fixtures.certificatePath, privateKeyPath: fixtures.keyPath)
    return try await withUploadServer(directory: directory.path, tlsConfiguration: tls, limits: limits, body)
}

/// `formpost serve`'s receiver over TLS, HTTP/2 by ALPN and HTTP/1.1, with certificates
/// openssl made for the test; formpost, curl and Python requests as clients.
@Suite("Receiver over TLS")
struct TLSServerTests {
    @Test("formpost, curl and Python requests upload over HTTP/2 and HTTP/1.1; every SHA-256 matches")
    func clients() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        let directory = try SampleDirectory()
        let path = try directory.file("photo.bin", size: 2_500_000, seed: 3)
        let expected = sha256Hex(try Data(contentsOf: URL(fileURLWithPath: path)))
        let answers = try await withTLSReceiver(fixtures) { port in
            let url = "https://localhost:\(port)/upload"
            let form = ["-F", "title=hi", "-F", "photo=@\(path)", url]
            var answers: [(String, Data)] = []
            for flag in ["--http2", "--http1.1"] {
                let ours = try await offPool { try formpost(["-s", "--cacert", fixtures.caPath, flag] + form) }
                #expect(ours.status == 0, "formpost \(flag): \(ours.stderr)")
                answers.append(("formpost \(flag)", ours.stdout))
                let curl = try await offPool { try Subprocess.runForBytes("curl", ["-s", "--cacert", fixtures.caPath, flag, "-w", "\n%{http_version}"] + form) }
                let text = String(decoding: curl, as: UTF8.self)
                let version = text.split(separator: "\n").last.map(String.init) ?? ""
                #expect(version == (flag == "--http2" ? "2" : "1.1"), "curl \(flag) used HTTP/\(version)")
                answers.append(("curl \(flag)", Data(text.split(separator: "\n").dropLast().joined(separator: "\n").utf8)))
            }
            let python = try await offPool { try Subprocess.runForBytes("python3", [Subprocess.interopScript("upload_requests.py"), url, fixtures.caPath, path]) }
            answers.append(("python requests", python))
            return answers
        }
        #expect(answers.count == 5)
        for (client, answer) in answers {
            let receipt = try JSONDecoder().decode(Receipt.self, from: answer)
            #expect(receipt.fields == [.init(name: "title", value: "hi")], "\(client)")
            #expect(receipt.files.map(\.sha256) == [expected], "\(client)")
        }
    }

    @Test("a client that does not trust the CA fails the handshake (curl exits 60), and the server goes on serving")
    func untrustedClient() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        let (refused, after) = try await withTLSReceiver(fixtures) { port in
            let url = "https://localhost:\(port)/upload"
            let refused = try await offPool { try Subprocess.status("curl", ["-s", "-F", "a=1", url]) }
            let after = try await offPool { try formpost(["-s", "--cacert", fixtures.caPath, "-F", "a=1", url]) }
            return (refused, after)
        }
        #expect(refused == 60)
        #expect(after.status == 0, "\(after.stderr)")
        #expect(try JSONDecoder().decode(Receipt.self, from: after.stdout).fields == [.init(name: "a", value: "1")])
    }

    // The idle timeout is 5 s, not less: it applies to the client that follows too, and a
    // loaded machine once kept that client (a debug build starting, then its handshake) idle
    // for longer than 1 s, so the receiver rightly closed it (exit 55).
    @Test("a connection that never begins its TLS handshake, or stops in the middle of it, is closed after the idle timeout; clients go on")
    func stalledHandshakes() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        let (outcomes, after) = try await withTLSReceiver(fixtures, limits: ConnectionLimits(idleTimeout: .seconds(5))) { port in
            let silent = try HeldConnection(port: port)
            let halfHello = try HeldConnection(port: port)
            try halfHello.send([0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4, 0x03, 0x03])   // a ClientHello's first bytes of 200
            var outcomes: [(String, Bool)] = []
            for (name, connection) in [("silent", silent), ("half a ClientHello", halfHello)] {
                outcomes.append((name, try await offPool { try connection.readUntilClosed(seconds: 45) }.1))
            }
            let after = try await offPool { try formpost(["-s", "--cacert", fixtures.caPath, "-F", "a=1", "https://localhost:\(port)/upload"]) }
            return (outcomes, after)
        }
        for (name, closed) in outcomes { #expect(closed, "\(name): still open 45 s after the 5 s idle timeout") }
        #expect(after.status == 0, "\(after.stderr)")
    }

    @Test("formpost serve refuses TLS files it cannot use, naming them")
    func badFiles() async throws {
        let fixtures = try await offPool { try TLSFixtures() }
        let cases: [([String], String)] = [
            (["--tls-cert", fixtures.directory + "/missing.pem", "--tls-key", fixtures.keyPath], "missing.pem holds no readable PEM certificate"),
            (["--tls-cert", fixtures.certificatePath, "--tls-key", fixtures.caPath], "ca.pem holds no readable PEM private key"),
            (["--tls-cert", fixtures.certificatePath, "--tls-key", fixtures.directory + "/ca.key"], "does not belong to the certificate"),
            (["--tls-cert", fixtures.certificatePath], "--tls-cert and --tls-key go together"),
        ]
        for (arguments, message) in cases {
            let result = try await offPool { try formpost(["serve", "--port", "0", "--dir", fixtures.directory + "/uploads"] + arguments) }
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }
}
