import Foundation
import FormPost
import Multipart
import Testing

/// Credentials stay with the origin they were given for: a redirect to another scheme,
/// host or port drops `Authorization`, `Cookie` and `Proxy-Authorization`, as curl and
/// browsers do; the command follows redirects only with `-L`, as curl does.
@Suite("Redirects and credentials")
struct RedirectCredentialTests {
    static let credentialFields = ["authorization", "cookie", "proxy-authorization"]

    /// Runs `body` with two servers: A (127.0.0.1) and B (reached as `localhost`, on another port).
    private func withTwoOrigins<T: Sendable>(_ body: @Sendable (_ a: URL, _ b: URL) async throws -> T) async throws -> T {
        let first = try TestServer(), second = try TestServer()
        return try await first.run { a in
            try await second.run { b in
                try await body(a, URL(string: "http://localhost:\(b.port ?? 0)")!)
            }
        }
    }

    private func send(_ client: FormPostClient, to url: URL, options: UploadOptions = UploadOptions()) async throws -> Echo {
        var form = MultipartForm()
        form.append(name: "a", value: "1")
        let headers: HTTPFields = [.cookie: "session=1", .proxyAuthorization: "Basic cHJveHk6cw==", HTTPField.Name("X-Trace")!: "t"]
        return try await client.upload(form, to: url, headers: headers, options: options).validate().decode(Echo.self)
    }

    @Test("the library drops credentials on a redirect to another origin and keeps them on the same one")
    func library() async throws {
        var serializer = RequestSerializer()
        serializer.authorize(bearerToken: "secret")
        let client = FormPostClient(requestSerializer: serializer)
        let (crossed, same, trusted) = try await withTwoOrigins { a, b in
            let crossing = URL(string: "\(a)/redirect/307?to=\(b)/echo")!
            return (try await send(client, to: crossing),
                    try await send(client, to: URL(string: "\(a)/redirect/307?to=/echo")!),
                    try await send(client, to: crossing, options: UploadOptions(keepsCredentialsAcrossOrigins: true)))
        }
        for field in Self.credentialFields {
            #expect(crossed.header(field) == nil, "\(field) went to another origin")
            #expect(same.header(field) != nil, "\(field) was dropped on the same origin")
            #expect(trusted.header(field) != nil, "\(field) was dropped although the caller trusts the redirect")
        }
        #expect(crossed.header("x-trace") == "t" && crossed.bodyBytes.count > 0, "other fields and the body follow a 307")
    }

    @Test("an https URL redirecting to http never carries credentials, even when trusted")
    func downgrade() {
        let headers: HTTPFields = [.authorization: "Bearer s", HTTPField.Name("cookie")!: "c=1", .accept: "*/*"]
        let kept = RedirectRule.headers(headers, from: URL(string: "https://example.com/a")!, to: URL(string: "http://example.com/b")!, trusted: true)
        #expect(kept.map(\.name.rawName) == ["Accept"])
        let upgraded = RedirectRule.headers(headers, from: URL(string: "http://example.com/a")!, to: URL(string: "https://example.com/b")!, trusted: false)
        #expect(upgraded.map(\.name.rawName) == ["Accept"], "a change of scheme is a change of origin")
        let samePort = RedirectRule.headers(headers, from: URL(string: "https://EXAMPLE.com/a")!, to: URL(string: "https://example.com:443/b")!, trusted: false)
        #expect(samePort.count == 3, "the default port and the host's case do not change the origin")
    }

    @Test("the command follows redirects only with -L, drops credentials across origins as curl -L does, keeps them with --location-trusted")
    func command() async throws {
        let results = try await withTwoOrigins { a, b in
            let url = "\(a)/redirect/307?to=\(b)/echo"
            let arguments = ["-s", "-H", "Authorization: Bearer secret", "-H", "Cookie: session=1", "-F", "a=1"]
            var results: [String: (status: Int32, echo: Echo?)] = [:]
            for (name, extra) in [("none", [String]()), ("-L", ["-L"]), ("--location-trusted", ["--location-trusted"])] {
                let ours = try await offPool { try formpost(arguments + extra + [url]) }
                results["formpost " + name] = (ours.status, try? JSONDecoder().decode(Echo.self, from: ours.stdout))
                let curl = try await offPool { try Subprocess.runForBytes("curl", arguments + extra + [url]) }
                results["curl " + name] = (0, try? JSONDecoder().decode(Echo.self, from: curl))
            }
            return results
        }
        for client in ["formpost", "curl"] {
            let unfollowed = try #require(results["\(client) none"])
            #expect(unfollowed.status == 0 && unfollowed.echo == nil, "\(client) without -L prints the 307 answer itself")
            let followed = try #require(results["\(client) -L"]?.echo, "\(client) -L reached the second server")
            #expect(followed.header("authorization") == nil && followed.header("cookie") == nil, "\(client) -L: \(followed.headers)")
            #expect(followed.method == "POST")
            let trusted = try #require(results["\(client) --location-trusted"]?.echo)
            #expect(trusted.header("authorization") == "Bearer secret" && trusted.header("cookie") == "session=1", "\(client) --location-trusted")
        }
    }
}
