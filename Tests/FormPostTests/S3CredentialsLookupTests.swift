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

    func lookup(_ environment: [String: String]) throws -> S3CredentialsLookup.Found? {
        let directory = try SampleDirectory()
        let path = directory.path + "/credentials"
        try Self.file.write(toFile: path, atomically: true, encoding: .utf8)
        var environment = environment
        if environment["HOME"] == nil { environment["AWS_SHARED_CREDENTIALS_FILE"] = path }
        return S3CredentialsLookup.credentials(environment: environment) { try? String(contentsOfFile: $0, encoding: .utf8) }
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
        let found = S3CredentialsLookup.credentials(environment: ["HOME": home.path]) { try? String(contentsOfFile: $0, encoding: .utf8) }
        #expect(found?.credentials.accessKeyID == "AKIDDEFAULT")
        #expect(S3CredentialsLookup.credentials(environment: ["HOME": home.path + "/nowhere"]) { try? String(contentsOfFile: $0, encoding: .utf8) } == nil)
        #expect(S3CredentialsLookup.region(environment: ["AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-east-2"]) == "eu-west-1")
        #expect(S3CredentialsLookup.region(environment: ["AWS_DEFAULT_REGION": "us-east-2"]) == "us-east-2")
        #expect(S3CredentialsLookup.region(environment: [:]) == nil)
    }
}
