import Foundation
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import Testing

/// Credentials are found where the AWS tools find them, in their order.
@Suite struct S3CredentialsLookupTests {
    static let file = """
        # a comment
        [default]
        aws_access_key_id = AKIDDEFAULT
        aws_secret_access_key = secret/default+key

        [ uploads ]
        AWS_ACCESS_KEY_ID=AKIDUPLOADS
        aws_secret_access_key =  s3cr=t
        aws_session_token = token==
        ; another
        [broken]
        aws_access_key_id = AKIDONLY
        """

    /// The keys found with `environment` (the instance's metadata disabled), the credentials
    /// file `Self.file` unless `HOME` is given; nil when none, or a provider, was found.
    func lookup(_ environment: [String: String]) throws -> S3CredentialsLookup.Found? {
        let directory = try SampleDirectory()
        let path = directory.path + "/credentials"
        try Self.file.write(toFile: path, atomically: true, encoding: .utf8)
        var environment = environment
        if environment["HOME"] == nil { environment["AWS_SHARED_CREDENTIALS_FILE"] = path }
        return Self.keys(environment)
    }

    static func keys(_ environment: [String: String]) -> S3CredentialsLookup.Found? {
        var environment = environment
        environment["AWS_EC2_METADATA_DISABLED"] = "true"
        guard case .keys(let found) = resolve(environment) else { return nil }
        return found
    }

    static func resolve(_ environment: [String: String]) -> S3CredentialsLookup.Resolved? {
        try? resolving(environment)
    }

    static func resolving(_ environment: [String: String]) throws -> S3CredentialsLookup.Resolved? {
        try S3CredentialsLookup.resolve(environment: environment, region: "eu-west-1") { try? String(contentsOfFile: $0, encoding: .utf8) }
    }

    @Test func theEnvironmentComesFirst() throws {
        let found = try lookup(["AWS_ACCESS_KEY_ID": "AKIDENV", "AWS_SECRET_ACCESS_KEY": "env", "AWS_SESSION_TOKEN": "t", "AWS_PROFILE": "uploads"])
        #expect(found == .init(credentials: S3Credentials(accessKeyID: "AKIDENV", secretAccessKey: "env", sessionToken: "t"), source: "environment"))
    }

    @Test func theProfileAndTheDefault() throws {
        let uploads = try lookup(["AWS_PROFILE": "uploads"])
        #expect(uploads?.credentials == S3Credentials(accessKeyID: "AKIDUPLOADS", secretAccessKey: "s3cr=t", sessionToken: "token=="))
        #expect(uploads?.source.hasPrefix("profile uploads in ") == true)
        #expect(try lookup([:])?.credentials == S3Credentials(accessKeyID: "AKIDDEFAULT", secretAccessKey: "secret/default+key"))
        #expect(try lookup(["AWS_PROFILE": "broken"]) == nil, "a profile without a secret is no credentials")
        #expect(try lookup(["AWS_PROFILE": "missing"]) == nil)
        #expect(try lookup(["AWS_ACCESS_KEY_ID": "AKIDENV"])?.source != "environment", "a key without a secret is not taken from the environment")
    }

    @Test func theHomeDirectoryFileAndTheRegion() throws {
        let home = try SampleDirectory()
        try FileManager.default.createDirectory(atPath: home.path + "/.aws", withIntermediateDirectories: true)
        try Self.file.write(toFile: home.path + "/.aws/credentials", atomically: true, encoding: .utf8)
        #expect(Self.keys(["HOME": home.path])?.credentials.accessKeyID == "AKIDDEFAULT")
        #expect(Self.resolve(["HOME": home.path + "/nowhere", "AWS_EC2_METADATA_DISABLED": "TRUE"]) == nil)
        #expect(S3CredentialsLookup.region(environment: ["AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-east-2"]) == "eu-west-1")
        #expect(S3CredentialsLookup.region(environment: ["AWS_DEFAULT_REGION": "us-east-2"]) == "us-east-2")
        #expect(S3CredentialsLookup.region(environment: [:]) == nil)
    }

    @Test("roles, web identity, credential_process, the container and the instance, in AWS's order")
    func providers() throws {
        let home = try SampleDirectory()
        try FileManager.default.createDirectory(atPath: home.path + "/.aws", withIntermediateDirectories: true)
        try """
            [profile deploy]
            role_arn = arn:aws:iam::123456789012:role/deploy
            source_profile = base
            [profile base]
            aws_access_key_id = AKIDCONFIG
            aws_secret_access_key = from-config
            [profile pod]
            role_arn = arn:aws:iam::123456789012:role/pod
            web_identity_token_file = /var/run/token
            [profile tool]
            credential_process = /usr/local/bin/creds --json
            [profile chained]
            role_arn = arn:aws:iam::123456789012:role/chained
            source_profile = deploy
            [profile company]
            sso_session = company
            sso_account_id = 123456789012
            """.write(toFile: home.path + "/.aws/config", atomically: true, encoding: .utf8)
        try "[base]\naws_secret_access_key = from-credentials\n".write(toFile: home.path + "/.aws/credentials", atomically: true, encoding: .utf8)
        let base = ["HOME": home.path, "AWS_ENDPOINT_URL_STS": "http://127.0.0.1:9"]

        let deploy = try #require(Self.resolve(base.merging(["AWS_PROFILE": "deploy"]) { $1 }))
        guard case .provider(let role as S3RoleCredentials) = deploy, case .sourceCredentials(let keys, _) = role.assumption else {
            Issue.record("deploy: \(deploy.source)"); return
        }
        #expect(role.roleARN == "arn:aws:iam::123456789012:role/deploy" && role.endpoint == "http://127.0.0.1:9")
        #expect(keys == S3Credentials(accessKeyID: "AKIDCONFIG", secretAccessKey: "from-credentials"), "the credentials file's values win over the config's")
        #expect(Self.keys(base.merging(["AWS_PROFILE": "base"]) { $1 })?.credentials.secretAccessKey == "from-credentials")

        let pod = try #require(Self.resolve(base.merging(["AWS_PROFILE": "pod"]) { $1 }))
        guard case .provider(let podRole as S3RoleCredentials) = pod, case .webIdentity(let file) = podRole.assumption else {
            Issue.record("pod: \(pod.source)"); return
        }
        #expect(file == "/var/run/token")

        let irsa = try #require(Self.resolve(["AWS_WEB_IDENTITY_TOKEN_FILE": "/t", "AWS_ROLE_ARN": "arn:aws:iam::1:role/r", "AWS_ROLE_SESSION_NAME": "s"]))
        guard case .provider(let irsaRole as S3RoleCredentials) = irsa else { Issue.record("irsa: \(irsa.source)"); return }
        #expect(irsaRole.sessionName == "s" && irsaRole.endpoint == "https://sts.eu-west-1.amazonaws.com")

        #if os(macOS) || os(Linux)
        let tool = try #require(Self.resolve(base.merging(["AWS_PROFILE": "tool"]) { $1 }))
        guard case .provider(let process as S3ProcessCredentials) = tool else { Issue.record("tool: \(tool.source)"); return }
        #expect(process.command == "/usr/local/bin/creds --json")
        #endif

        let relative = try #require(Self.resolve(["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/x"]))
        guard case .provider(let task as S3ContainerCredentials) = relative else { Issue.record("relative: \(relative.source)"); return }
        #expect(task.url == "http://169.254.170.2/v2/credentials/x")
        let full = try #require(Self.resolve(["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:80/creds", "AWS_CONTAINER_AUTHORIZATION_TOKEN": "t"]))
        guard case .provider(let local as S3ContainerCredentials) = full else { Issue.record("full: \(full.source)"); return }
        #expect(local.url == "http://127.0.0.1:80/creds" && local.token == "t")

        // Plain HTTP to another host is no container endpoint: the instance's metadata comes next.
        let remote = try #require(Self.resolve(["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://example.com/creds"]))
        guard case .provider(let instance as S3InstanceCredentials) = remote else { Issue.record("remote: \(remote.source)"); return }
        #expect(instance.endpoint == "http://169.254.169.254")
        let moved = try #require(Self.resolve(["AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:1/"]))
        guard case .provider(let movedInstance as S3InstanceCredentials) = moved else { Issue.record("moved: \(moved.source)"); return }
        #expect(movedInstance.endpoint == "http://127.0.0.1:1")

        // What would fall through to another identity's credentials is refused instead.
        for (profile, reason) in [("nowhere", "names no profile"), ("chained", "role_arn needs"), ("company", "SSO profiles are not read")] {
            #expect {
                _ = try Self.resolving(base.merging(["AWS_PROFILE": profile]) { $1 })
            } throws: { error in
                "\(error)".contains(reason)
            }
        }
        for refused in ["http://127.0.0.1@attacker.example/creds", "http://127.attacker.example/creds", "http://[::2]/creds", "ftp://127.0.0.1/creds"] {
            #expect(!S3ContainerCredentials.allows(refused), "\(refused)")
        }
        for allowed in ["http://127.0.0.1:80/creds", "http://localhost/creds", "http://[::1]:8080/creds", "http://169.254.170.23/v1/credentials",
                        "https://credentials.example.com/creds"] {
            #expect(S3ContainerCredentials.allows(allowed), "\(allowed)")
        }
    }

    @Test("credentials are had again a quarter of their life (at most five minutes) before they expire")
    func refreshWindow() {
        #expect(S3CredentialsCache.refreshWindow(lifetime: .seconds(3600)) == .seconds(300))
        #expect(S3CredentialsCache.refreshWindow(lifetime: .seconds(8)) == .seconds(2))
    }

    /// Hands out credentials living `lifetime` seconds, counting its fetches; fails while `failing`.
    final class CountingProvider: S3CredentialsProvider, @unchecked Sendable {
        let source = "a test's provider"
        let lock = NSLock()
        var fetches = 0
        var failing = false
        var lifetime: TimeInterval

        init(lifetime: TimeInterval) { self.lifetime = lifetime }

        func fetch() async throws -> S3Credentials {
            try await Task.sleep(for: .milliseconds(50))
            let (count, failing, lifetime) = lock.withLock { () -> (Int, Bool, TimeInterval) in
                fetches += 1
                return (fetches, self.failing, self.lifetime)
            }
            if failing { throw ObjectStorageError.credentialsUnavailable(source: source, detail: "failing") }
            return S3Credentials(accessKeyID: "AKID\(count)", secretAccessKey: "s", sessionToken: "t", expiration: Date().addingTimeInterval(lifetime))
        }
    }

    @Test("the cache: one fetch for many waiting; the held credentials served while a renewal fails until the mandatory window; expired ones refused")
    func cache() async throws {
        let provider = CountingProvider(lifetime: 3600)
        let cache = S3CredentialsCache(provider: provider)
        let keys = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await cache.current().accessKeyID } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(keys == ["AKID1"] && provider.fetches == 1)
        #expect(try await cache.current().accessKeyID == "AKID1", "held, far from its expiry")

        // In the advisory window (the last 5 minutes of an hour) with the provider failing:
        // the held credentials, and a fetch tried behind them.
        provider.lock.withLock { provider.failing = true }
        let advisory = Date().addingTimeInterval(3600 - 200)
        #expect(try await cache.current(now: advisory).accessKeyID == "AKID1")
        for _ in 0..<200 where provider.lock.withLock({ provider.fetches }) < 2 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(provider.fetches == 2, "a fetch tried behind the held credentials")
        // In the mandatory window (the last 2.5 minutes): a failed renewal fails the request.
        await #expect(throws: ObjectStorageError.self) { try await cache.current(now: Date().addingTimeInterval(3600 - 100)) }

        // Credentials handed out already expired are refused.
        let expired = CountingProvider(lifetime: -1)
        await #expect(throws: ObjectStorageError.self) { try await S3CredentialsCache(provider: expired).current() }
    }
}
