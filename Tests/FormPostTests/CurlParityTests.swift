import Foundation
import Multipart
import Testing

/// Options and errors that curl users type daily, run against curl itself where curl has
/// the same option: the same arguments, the same exit code, and what the server received.
@Suite("curl parity")
struct CurlParityTests {
    /// One command line: the arguments before the URL, the path on the test server, and the exit code both must end with.
    struct Case: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let path: String
        let exitCode: Int32
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let cases: [Case] = [
        Case(arguments: ["-u", "ann:s3cret:with:colons", "-F", "a=1"], path: "echo", exitCode: 0),
        Case(arguments: ["-A", "MyAgent/2.0", "-F", "a=1"], path: "echo", exitCode: 0),
        Case(arguments: ["-i", "-F", "a=1"], path: "reply?status=201&type=text/plain&body64=aGk=", exitCode: 0),
        Case(arguments: ["-f", "-F", "a=1"], path: "reply?status=404&type=text/plain&body64=bm9wZQ==", exitCode: 22),
        Case(arguments: ["--fail-with-body", "-F", "a=1"], path: "reply?status=404&type=text/plain&body64=bm9wZQ==", exitCode: 22),
        Case(arguments: ["-Fa=1"], path: "echo", exitCode: 0),
        Case(arguments: ["-#", "-F", "a=1"], path: "echo", exitCode: 0),
        Case(arguments: ["-f", "-w", "code=%{http_code}", "-F", "a=1"], path: "reply?status=404&type=text/plain&body64=bm9wZQ==", exitCode: 22),
        Case(arguments: ["-w", "code=%{http_code}\\n", "-F", "a=1"], path: "reply?status=202&type=text/plain&body64=aGk=", exitCode: 0),
        Case(arguments: ["-D", "-", "-F", "a=1"], path: "reply?status=201&type=text/plain&body64=aGk=", exitCode: 0),
    ]

    @Test("the same arguments give the same exit code, output and request as curl", arguments: cases)
    func sameAsCurl(_ parityCase: Case) async throws {
        let server = try TestServer()
        let (ours, theirs) = try await server.run { base in
            let url = base.absoluteString + "/" + parityCase.path
            let ours = try await offPool { try formpost(["-s"] + parityCase.arguments + [url]) }
            let theirs = try await offPool { () -> (Int32, Data) in
                let finished = try ChildProcess("curl", ["-s"] + parityCase.arguments + [url], stderr: .inherit).finish()
                return (finished.status, finished.stdout)
            }
            return (ours, theirs)
        }
        #expect(ours.status == parityCase.exitCode, "\(ours.stderr)")
        #expect(theirs.0 == parityCase.exitCode)
        if parityCase.path == "echo" {
            let ourEcho = try JSONDecoder().decode(Echo.self, from: ours.stdout)
            let curlEcho = try JSONDecoder().decode(Echo.self, from: theirs.1)
            for field in ["authorization", "content-type"] where field != "content-type" {
                #expect(ourEcho.header(field) == curlEcho.header(field), "\(field)")
            }
            if parityCase.arguments.contains("-A") { #expect(ourEcho.header("user-agent") == curlEcho.header("user-agent")) }
            #expect(ourEcho.method == curlEcho.method)
        } else if parityCase.arguments.contains("-i") || parityCase.arguments.contains("-D") {
            let ourStatus = ours.text.components(separatedBy: "\r\n").first
            let curlStatus = String(decoding: theirs.1, as: UTF8.self).components(separatedBy: "\r\n").first
            #expect(ourStatus == "HTTP/1.1 201 Created" && curlStatus == "HTTP/1.1 201 Created", "\(ourStatus ?? "") / \(curlStatus ?? "")")
            #expect(ours.text.hasSuffix("\r\n\r\nhi"))
        } else {
            #expect(ours.stdout == theirs.1, "the body is printed (or not) as curl does")
        }
    }

    @Test("-w is written for a transfer that failed too, http_code 000, as curl's")
    func writeOutOnFailure() async throws {
        let port = try freePort()   // nothing listens there
        let arguments = ["-s", "-w", "code=%{http_code} sent=%{size_upload}", "-F", "a=1", "http://127.0.0.1:\(port)/"]
        let ours = try await offPool { try formpost(arguments) }
        let curl = try await offPool { try ChildProcess("curl", arguments).finish() }
        #expect(ours.status == 7 && curl.status == 7)
        #expect(ours.text == "code=000 sent=0" && curl.stdout == Data("code=000 sent=0".utf8), "\(ours.text) / \(String(decoding: curl.stdout, as: UTF8.self))")
    }

    @Test("--create-dirs makes the directories of -o's path, as curl's does")
    func createDirectories() async throws {
        let directory = try SampleDirectory()
        let server = try TestServer()
        let (ours, theirs) = try await server.run { base in
            let url = base.absoluteString + "/reply?status=200&type=text/plain&body64=aGk="
            let ours = try await offPool { try formpost(["-s", "--create-dirs", "-o", directory.path + "/ours/a/b.txt", "-F", "a=1", url]) }
            let theirs = try await offPool { try Subprocess.run("curl", ["-s", "--create-dirs", "-o", directory.path + "/curl/a/b.txt", "-F", "a=1", url]) }
            return (ours, theirs)
        }
        #expect(ours.status == 0, "\(ours.stderr)")
        #expect(theirs.isEmpty)
        #expect(FileManager.default.contents(atPath: directory.path + "/ours/a/b.txt") == Data("hi".utf8))
        #expect(FileManager.default.contents(atPath: directory.path + "/curl/a/b.txt") == Data("hi".utf8))
    }

    @Test("URLs as curl reads them: no scheme is http, another scheme exits 1, a malformed one 3")
    func urls() async throws {
        let server = try TestServer()
        let schemeless = try await server.run { base in
            try await offPool { try formpost(["-s", "-F", "a=1", "127.0.0.1:\(base.port ?? 0)/echo"]) }
        }
        #expect(schemeless.status == 0, "\(schemeless.stderr)")
        let other = try await offPool { try formpost(["-sS", "-F", "a=1", "htp://example.com/"]) }
        #expect(other.status == 1 && other.stderr.contains("Protocol \"htp\" not supported"), "\(other.stderr)")
        let malformed = try await offPool { try formpost(["-sS", "-F", "a=1", "http://[::1"]) }
        #expect(malformed.status == 3, "\(malformed.stderr)")
    }
}
