import Foundation
@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import FormPostDigests
import Testing

/// FormPost's Signature Version 4 gives, for the same request at the same moment, the
/// signature botocore's own S3 signer gives (Tests/Interop/sigv4_sign.py): GET, PUT and POST,
/// query strings, keys that need percent-encoding, session tokens, signed and unsigned
/// payloads.
@Suite("Signature Version 4")
struct SignatureV4Tests {
    struct Case: Encodable {
        var method: String
        var scheme = "https"
        var host: String
        var key: String
        var query: [[String]] = []
        var headers: [[String]] = []
        var body: [UInt8] = []
        var unsigned = false
        var access_key = "AKIDEXAMPLE"
        var secret_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
        var token: String?
        var region = "us-east-1"
        var time: Int64 = 1_796_029_200   // 2026-11-30T09:00:00Z
    }

    struct Answer: Decodable {
        let path: String
        let fields: [String: String]
    }

    static let cases: [Case] = [
        Case(method: "GET", host: "bucket.s3.amazonaws.com", key: "uploads/photo.jpg"),
        Case(method: "GET", scheme: "http", host: "127.0.0.1:5000", key: "bucket/a b+c~d/é日本.bin",
             query: [["list-type", "2"], ["prefix", "a b/+"], ["continuation-token", "x/y=z"], ["delimiter", "/"]]),
        Case(method: "PUT", host: "bucket.s3.eu-west-1.amazonaws.com", key: "tus/0123.info",
             headers: [["Content-Type", "application/json"], ["If-None-Match", "*"], ["x-amz-meta-sha256", "  spaced   value "]],
             body: Array("{\"size\":5}".utf8), region: "eu-west-1"),
        Case(method: "PUT", scheme: "http", host: "localhost:9000", key: "bucket/big.bin",
             query: [["partNumber", "3"], ["uploadId", "2~abc/def+ghi="]], body: Array(repeating: 0x61, count: 70_000), unsigned: true),
        Case(method: "POST", host: "bucket.s3.amazonaws.com", key: "forms/a%20b.txt", query: [["uploads", ""]],
             headers: [["Content-Type", "text/plain"]], token: "FwoGZXIvYXdzEJr//////////wEaDOvTemporaryToken+/="),
        Case(method: "POST", scheme: "http", host: "127.0.0.1:5000", key: "bucket/x", query: [["uploadId", "u 1"]],
             body: Array("<CompleteMultipartUpload/>".utf8), token: "session token", region: "auto", time: 946_684_799),
        Case(method: "DELETE", host: "s3.amazonaws.com", key: "bucket/../../leaf", query: [["uploadId", "ü"]], time: 4_102_444_800),
    ]

    @Test("each signature equals botocore's for the same request at the same moment")
    func matchesBotocore() throws {
        let input = try JSONEncoder().encode(Self.cases)
        let finished = try ChildProcess("python3", [Subprocess.interopScript("sigv4_sign.py")], input: input).finish()
        try #require(finished.status == 0, "botocore's signer failed: \(String(decoding: finished.stderr, as: UTF8.self))")
        let answers = try JSONDecoder().decode([Answer].self, from: finished.stdout)
        try #require(answers.count == Self.cases.count)
        for (request, expected) in zip(Self.cases, answers) {
            let path = "/" + S3URIEncoding.encode(request.key, keepingSlash: true)
            #expect(path == expected.path, "the key \(request.key) encodes differently")
            let payload = request.unsigned ? SignatureV4.unsignedPayload : SignatureV4.hex(SHA256Hasher.digest(of: request.body))
            let signer = SignatureV4(credentials: S3Credentials(accessKeyID: request.access_key, secretAccessKey: request.secret_key,
                                                                 sessionToken: request.token), region: request.region)
            let fields = signer.fields(method: request.method, host: request.host, encodedPath: path,
                                       query: request.query.map { ($0[0], $0[1]) }, fields: request.headers.map { ($0[0], $0[1]) },
                                       payloadHash: payload, at: SigningTime(secondsSince1970: request.time))
            let ours = Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            #expect(ours == expected.fields, "\(request.method) \(request.key)")
        }
    }

    @Test("signing times are written as x-amz-date, across leap years and centuries")
    func signingTimes() {
        #expect(SigningTime(secondsSince1970: 0).timestamp == "19700101T000000Z")
        #expect(SigningTime(secondsSince1970: 951_782_400).timestamp == "20000229T000000Z")
        #expect(SigningTime(secondsSince1970: 1_796_029_200).timestamp == "20261130T090000Z")
        #expect(SigningTime(secondsSince1970: 4_102_444_799).timestamp == "20991231T235959Z")
        #expect(SigningTime(secondsSince1970: -1).timestamp == "19691231T235959Z")
    }
}
