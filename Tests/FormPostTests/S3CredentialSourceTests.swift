import Foundation
@testable import FormPostReceiving
@testable import FormPostS3
import FormPostServer
import Multipart
import NIOCore
import Testing

/// Temporary credentials from each source AWS's SDKs know, fetched again before they expire:
/// stand-ins for STS, the container's endpoint and the instance's metadata hand out
/// credentials that live 4 seconds, and a proxy in front of moto refuses a request whose
/// signature or credentials it cannot check, or whose credentials have expired
/// (Tests/Interop/aws_credential_standins.py). A multipart upload spanning two expiries
/// completes.
@Suite struct S3CredentialSourceTests {
    /// The sources tried, by the stand-in's name for the credentials each hands out.
    enum Source: String, CaseIterable, Sendable {
        case webIdentity = "web-identity"
        case assumeRole = "assume-role"
        case container
        case imds
        case process = "credential-process"
    }

    /// The environment (and files in `directory`) that lead to `source` at the stand-ins on `port`.
    func environment(for source: Source, standins port: Int, in directory: SampleDirectory) throws -> [String: String] {
        let config = directory.path + "/config"
        let credentials = directory.path + "/credentials"
        try "".write(toFile: credentials, atomically: true, encoding: .utf8)
        var environment = ["AWS_CONFIG_FILE": config, "AWS_SHARED_CREDENTIALS_FILE": credentials, "AWS_EC2_METADATA_DISABLED": "true",
                           "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        var configText = ""
        let standins = "http://127.0.0.1:\(port)"
        switch source {
        case .webIdentity:
            let token = directory.path + "/token"
            try "formpost-web-identity-token".write(toFile: token, atomically: true, encoding: .utf8)
            environment["AWS_WEB_IDENTITY_TOKEN_FILE"] = token
            environment["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/formpost"
            environment["AWS_ENDPOINT_URL_STS"] = standins
        case .assumeRole:
            configText = """
                [profile uploader]
                role_arn = arn:aws:iam::123456789012:role/formpost
                source_profile = base
                [profile base]
                aws_access_key_id = AKIDFORMPOSTSOURCE
                aws_secret_access_key = formpost-source-secret
                """
            environment["AWS_PROFILE"] = "uploader"
            environment["AWS_ENDPOINT_URL_STS"] = standins
        case .container:
            let token = directory.path + "/container-token"
            try "formpost-container-token\n".write(toFile: token, atomically: true, encoding: .utf8)
            environment["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = standins + "/container/credentials"
            environment["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = token
        case .imds:
            environment["AWS_EC2_METADATA_DISABLED"] = nil
            environment["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = standins + "/"
        case .process:
            // A command that takes the container's credentials and prints them as credential_process does.
            let script = directory.path + "/credentials.py"
            try """
                import json, sys, urllib.request
                request = urllib.request.Request(sys.argv[1], headers={"Authorization": "formpost-container-token"})
                given = json.load(urllib.request.urlopen(request))
                print(json.dumps({"Version": 1, "AccessKeyId": given["AccessKeyId"], "SecretAccessKey": given["SecretAccessKey"],
                                  "SessionToken": given["Token"], "Expiration": given["Expiration"]}))
                """.write(toFile: script, atomically: true, encoding: .utf8)
            configText = "[default]\ncredential_process = python3 \(script) \(standins)/container/credentials\n"
        }
        try configText.write(toFile: config, atomically: true, encoding: .utf8)
        return environment
    }

    /// The stand-ins and their proxy before `store`, credentials living `lifetime` seconds,
    /// in `mode` if any, the stand-ins over HTTPS with `tls`'s certificate if given: the
    /// process, the stand-ins' port and the proxy's, both listening.
    static func standins(before store: MotoStore, lifetime: String, mode: String? = nil, tls: TLSFixtures? = nil) async throws -> (ChildProcess, Int, Int) {
        let (standinPort, proxyPort) = (try freePort(), try freePort())
        let https = tls.map { ["STANDINS_TLS=\($0.certificatePath):\($0.keyPath)"] } ?? []
        let standins = try ChildProcess("env", https + ["python3", Subprocess.interopScript("aws_credential_standins.py"), String(standinPort), String(proxyPort),
                                                        String(store.port), lifetime] + (mode.map { [$0] } ?? []), stdout: .discard)
        try await RawSocket.waitForListener(port: standinPort)
        try await RawSocket.waitForListener(port: proxyPort)
        return (standins, standinPort, proxyPort)
    }

    /// What the stand-ins counted.
    struct Stats: Decodable, CustomStringConvertible {
        let issued: [String: Int]
        let accepted: Int
        let expired: Int
        let throttled: Int

        var description: String { "issued \(issued), accepted \(accepted), expired \(expired), throttled \(throttled)" }

        /// What the stand-ins on `port` (over HTTPS with `tls`'s CA if given) counted so far.
        static func of(standins port: Int, tls: TLSFixtures? = nil) async throws -> Stats {
            let address = tls.map { ["--cacert", $0.caPath, "https://127.0.0.1:\(port)/stats"] } ?? ["http://127.0.0.1:\(port)/stats"]
            let data = try await offPool { try Subprocess.runForBytes("curl", ["-sS"] + address) }
            return try JSONDecoder().decode(Stats.self, from: data)
        }
    }

    @Test("credentials from each source are had again before they expire: an upload spanning two expiries completes", arguments: Source.allCases)
    func spanningExpiries(source: Source) async throws {
        let store = try await MotoStore()
        let (standins, standinPort, proxyPort) = try await Self.standins(before: store, lifetime: "4")
        defer { standins.stop() }
        let directory = try SampleDirectory()
        let environment = try environment(for: source, standins: standinPort, in: directory)
        let storage = try ObjectStorage.fromEnvironment(uri: "s3://\(store.bucket)/uploads", endpoint: "http://127.0.0.1:\(proxyPort)", pathStyle: true,
                                                        environment: environment)
        #expect(storage.credentialsCache != nil, "\(source): \(storage.credentialsSource)")
        try await storage.check()

        let client = S3Client(storage: storage)
        let key = "uploads/spanning-\(source.rawValue)"
        let id = try await client.beginMultipartUpload(of: key, fields: [])
        var parts: [ObjectPart] = []
        for number in 1...3 {
            if number > 1 { try await Task.sleep(for: .seconds(4)) }
            parts.append(try await client.sendPart(ByteBuffer(repeating: UInt8(number), count: number < 3 ? 5 << 20 : 1000), number: number, of: key,
                                                   uploadID: id))
        }
        try await client.completeMultipartUpload(of: key, uploadID: id, parts: parts)

        let contents = try await store.contents()
        #expect(contents.objects.first { $0.key == key }?.size == (10 << 20) + 1000)
        let stats = try await Stats.of(standins: standinPort)
        #expect(stats.expired == 0, "a request was signed with expired credentials")
        let kind = source == .process ? "container" : source.rawValue
        #expect((stats.issued[kind] ?? 0) >= 3, "\(source): credentials handed out \(stats.issued)")
    }

    @Test("formpost serve with web identity: the start-up line names the source, and curl's 9 MiB form is stored across an expiry")
    func serveWithWebIdentity() async throws {
        let store = try await MotoStore()
        let (standinPort, proxyPort, port) = (try freePort(), try freePort(), try freePort())
        let standins = try ChildProcess("python3", [Subprocess.interopScript("aws_credential_standins.py"), String(standinPort), String(proxyPort),
                                                    String(store.port), "4"], stdout: .discard)
        defer { standins.stop() }
        try await RawSocket.waitForListener(port: standinPort)
        let directory = try SampleDirectory()
        let environment = try environment(for: .webIdentity, standins: standinPort, in: directory)
        let unset = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"].flatMap { ["-u", $0] }
        let serve = try ChildProcess("env", unset + environment.map { "\($0.key)=\($0.value)" }.sorted() + [
            formpostBinary, "serve", "--port", String(port), "--dir", directory.path + "/unused",
            "--store", "s3://\(store.bucket)/pods", "--s3-endpoint", "http://127.0.0.1:\(proxyPort)",
        ], stdout: .discard, stderr: .capture)
        defer { serve.stop() }
        guard try await serve.waitUntilListening(port: port, seconds: 60) else {
            let finished = try await offPool { try serve.finish(timeout: 5) }
            Issue.record("formpost serve did not start (\(finished.status)): \(String(decoding: finished.stderr, as: UTF8.self))")
            return
        }
        try await Task.sleep(for: .seconds(4))
        let path = directory.path + "/nine.bin"
        try Data((0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: path))
        let answer = try await offPool { try Subprocess.run("curl", ["-sS", "-F", "file=@\(path)", "http://127.0.0.1:\(port)/"]) }
        let file = try #require(try JSONDecoder().decode(Receipt.self, from: Data(answer.utf8)).files.first)
        #expect(try await store.contents().objects.map(\.key) == [file.storedAs])
        let finished = try await offPool { () -> ChildProcess.Finished in
            serve.stop()
            return try serve.finish(timeout: 10)
        }
        let lines = String(decoding: finished.stderr, as: UTF8.self)
        #expect(lines.contains("credentials from web identity (\(directory.path)/token) for the role arn:aws:iam::123456789012:role/formpost"), "\(lines)")
        #expect(!lines.contains("formpost-web-identity-token"))
    }

    @Test("STS over HTTPS behind a private CA: trusted through AWS_CA_BUNDLE or the profile's ca_bundle, the role's credentials come and the store takes the probe; with neither, STS's certificate is refused")
    func stsTrustingCABundle() async throws {
        let tls = try TLSFixtures()
        let store = try await MotoStore()
        let (standins, standinPort, proxyPort) = try await Self.standins(before: store, lifetime: "600", tls: tls)
        defer { standins.stop() }
        for trust in ["AWS_CA_BUNDLE", "ca_bundle", "none"] {
            let directory = try SampleDirectory()
            var environment = try environment(for: .assumeRole, standins: standinPort, in: directory)
            environment["AWS_ENDPOINT_URL_STS"] = "https://127.0.0.1:\(standinPort)"
            if trust == "AWS_CA_BUNDLE" { environment["AWS_CA_BUNDLE"] = tls.caPath }
            if trust == "ca_bundle", let config = environment["AWS_CONFIG_FILE"] {
                let text = try String(contentsOfFile: config, encoding: .utf8)
                try text.replacingOccurrences(of: "[profile uploader]\n", with: "[profile uploader]\nca_bundle = \(tls.caPath)\n")
                    .write(toFile: config, atomically: true, encoding: .utf8)
            }
            let storage = try ObjectStorage.fromEnvironment(uri: "s3://\(store.bucket)/uploads", endpoint: "http://127.0.0.1:\(proxyPort)", pathStyle: true,
                                                            environment: environment)
            guard trust == "none" else {
                try await storage.check()
                continue
            }
            do {
                try await storage.check()
                Issue.record("STS's certificate was trusted without the CA bundle")
            } catch let error as ObjectStorageError {
                guard case .credentialsUnavailable = error else { Issue.record("\(error)"); continue }
                #expect(error.description.lowercased().contains("certificate"), "\(error)")
            }
        }
        let stats = try await Stats.of(standins: standinPort, tls: tls)
        #expect(stats.issued["assume-role"] == 2 && stats.accepted >= 2, "\(stats)")
    }

    @Test("the instance's metadata with IMDSv1 only (its token answered 403): credentials had without a token, as AWS's SDKs fall back; refused with AWS_EC2_METADATA_V1_DISABLED=true")
    func instanceMetadataV1() async throws {
        let store = try await MotoStore()
        let (standins, standinPort, proxyPort) = try await Self.standins(before: store, lifetime: "600", mode: "imdsv1")
        defer { standins.stop() }
        let directory = try SampleDirectory()
        var environment = try environment(for: .imds, standins: standinPort, in: directory)
        let storage = try ObjectStorage.fromEnvironment(uri: "s3://\(store.bucket)/uploads", endpoint: "http://127.0.0.1:\(proxyPort)", pathStyle: true,
                                                        environment: environment)
        try await storage.check()
        environment["AWS_EC2_METADATA_V1_DISABLED"] = "true"
        let refusing = try ObjectStorage.fromEnvironment(uri: "s3://\(store.bucket)/uploads", endpoint: "http://127.0.0.1:\(proxyPort)", pathStyle: true,
                                                         environment: environment)
        do {
            try await refusing.check()
            Issue.record("the check passed with IMDSv1 disabled and no token")
        } catch let error as ObjectStorageError {
            guard case .credentialsUnavailable = error else { Issue.record("\(error)"); return }
            #expect(error.description.contains("403") && error.description.contains("AWS_EC2_METADATA_V1_DISABLED"), "\(error)")
        }
        let stats = try await Stats.of(standins: standinPort)
        #expect(stats.issued["imds"] == 1 && stats.accepted >= 1, "\(stats)")
    }

    @Test("STS answering Throttling (400) to its first two requests: the role's credentials had on the third attempt, as AWS's SDKs retry it")
    func throttledSTS() async throws {
        let store = try await MotoStore()
        let (standins, standinPort, proxyPort) = try await Self.standins(before: store, lifetime: "600", mode: "throttled-sts")
        defer { standins.stop() }
        let directory = try SampleDirectory()
        let storage = try ObjectStorage.fromEnvironment(uri: "s3://\(store.bucket)/uploads", endpoint: "http://127.0.0.1:\(proxyPort)", pathStyle: true,
                                                        environment: try environment(for: .webIdentity, standins: standinPort, in: directory))
        try await storage.check()
        let stats = try await Stats.of(standins: standinPort)
        #expect(stats.throttled == 2 && stats.issued["web-identity"] == 1 && stats.accepted >= 1, "\(stats)")
    }

    @Test("no source of credentials: the check says the instance's metadata gave none, and which sources were looked for")
    func noSource() async throws {
        let port = try freePort()
        let storage = try ObjectStorage.fromEnvironment(uri: "s3://formpost-test", endpoint: "http://127.0.0.1:\(port)",
                                                        environment: ["AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:\(port)"])
        do {
            try await storage.check()
            Issue.record("the check passed without credentials")
        } catch let error as ObjectStorageError {
            guard case .credentialsUnavailable = error else { Issue.record("\(error)"); return }
            #expect(error.description.contains("the instance's metadata at http://127.0.0.1:\(port)"), "\(error)")
            #expect(error.description.contains("AWS_ACCESS_KEY_ID"), "\(error)")
        }
    }
}
