import Foundation
@testable import FormPostS3
import FormPostReceiving
import Testing

/// `AWS_CA_BUNDLE` (else the profile's `ca_bundle`), as AWS's SDKs read it: the CA
/// certificates the store's and STS's TLS connections trust. `PartChecksumTests.unsignedOverTLS`
/// runs a receiver trusting a test CA so, `S3CredentialSourceTests.stsTrustingCABundle` STS.
@Suite struct S3CABundleTests {
    let keys = ["AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "secret"]

    @Test("AWS_CA_BUNDLE naming a file without a PEM certificate, or no file: refused at once, the file and the variable named")
    func unreadableBundle() throws {
        let samples = try SampleDirectory()
        let notPEM = samples.path + "/not.pem"
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: notPEM))
        for path in [notPEM, samples.path + "/missing.pem"] {
            var environment = keys
            environment["AWS_CA_BUNDLE"] = path
            #expect {
                _ = try ObjectStorage.fromEnvironment(uri: "s3://formpost-test", endpoint: "https://127.0.0.1:9", environment: environment)
            } throws: { error in
                guard case .unreadableCABundle(path, _)? = error as? ObjectStorageError else { return false }
                return "\(error)".contains("the CA bundle \(path) gives no CA certificates for TLS: named by AWS_CA_BUNDLE;")
                    && !(error as! ObjectStorageError).isTransient
            }
        }
    }

    @Test("the CA bundle is AWS_CA_BUNDLE, else the ca_bundle of the profile AWS_PROFILE (else default) in the shared files, the credentials file's winning, as botocore reads it; each named with where it was read")
    func bundleLookup() {
        let config = """
            [default]
            ca_bundle = /etc/default.pem
            [profile uploader]
            ca_bundle = /etc/uploader.pem
            [profile plain]
            region = eu-west-1
            """
        let credentials = "[uploader]\nca_bundle = /etc/credentials-file.pem\n"
        func bundle(_ environment: [String: String]) -> String? {
            let files = ["AWS_CONFIG_FILE": "/config", "AWS_SHARED_CREDENTIALS_FILE": "/credentials"]
            return S3CredentialsLookup.caBundle(environment: environment.merging(files) { old, _ in old }) { path in
                path == "/config" ? config : path == "/credentials" ? credentials : nil
            }.map { "\($0.path) (\($0.namedBy))" }
        }
        #expect(bundle([:]) == "/etc/default.pem (ca_bundle of the profile default in /config)")
        #expect(bundle(["AWS_PROFILE": "uploader"]) == "/etc/credentials-file.pem (ca_bundle of the profile uploader in /config and /credentials)")
        #expect(bundle(["AWS_PROFILE": "uploader", "AWS_SHARED_CREDENTIALS_FILE": "/none"]) == "/etc/uploader.pem (ca_bundle of the profile uploader in /config)")
        #expect(bundle(["AWS_PROFILE": "plain"]) == nil)
        #expect(bundle(["AWS_PROFILE": "uploader", "AWS_CA_BUNDLE": "/etc/variable.pem"]) == "/etc/variable.pem (AWS_CA_BUNDLE)")
        #expect(bundle(["AWS_CONFIG_FILE": "/elsewhere"]) == nil)
    }

    @Test("a CA bundle no connection uses is not read: a client of the caller's with keys from the environment asks no STS and takes no bundle, however unreadable")
    func unusedBundleNotRead() throws {
        var environment = keys
        environment["AWS_CA_BUNDLE"] = "/nonexistent/ca.pem"
        let storage = try ObjectStorage.fromEnvironment(uri: "s3://formpost-test", endpoint: "https://127.0.0.1:9", environment: environment,
                                                        client: ObjectStorage.defaultLeaseClient)
        #expect(storage.client === ObjectStorage.defaultLeaseClient && storage.leaseClient == nil)
        #expect(throws: ObjectStorageError.self) {
            _ = try ObjectStorage.fromEnvironment(uri: "s3://formpost-test", endpoint: "https://127.0.0.1:9", environment: environment)
        }
    }

    @Test("a readable AWS_CA_BUNDLE gives the storage clients of its own (one per file, made once), and none without it")
    func clientsPerBundle() throws {
        let tls = try TLSFixtures()
        var environment = keys
        environment["AWS_CA_BUNDLE"] = tls.caPath
        let trusting = try ObjectStorage.fromEnvironment(uri: "s3://formpost-test", endpoint: "https://127.0.0.1:9", environment: environment)
        let again = try ObjectStorage.fromEnvironment(uri: "s3://formpost-test", endpoint: "https://127.0.0.1:9", environment: environment)
        let plain = try ObjectStorage.fromEnvironment(uri: "s3://formpost-test", endpoint: "https://127.0.0.1:9", environment: keys)
        #expect(trusting.client !== ObjectStorage.defaultClient && trusting.client === again.client)
        #expect(trusting.leaseClient != nil && trusting.leaseClient !== trusting.client && trusting.leaseClient === again.leaseClient)
        #expect(plain.client === ObjectStorage.defaultClient && plain.leaseClient == nil)
    }
}
