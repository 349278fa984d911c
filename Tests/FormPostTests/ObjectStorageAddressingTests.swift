@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import Testing

/// How ``ObjectStorage`` addresses a bucket and names an ETag in a condition, as AWS's SDKs
/// do and as the store takes it.
@Suite("Object storage addressing")
struct ObjectStorageAddressingTests {
    @Test("path-style by itself for an IP-address or single-label endpoint and for a bucket that is no host name label; virtual-hosted otherwise unless asked")
    func pathStyleChosen() {
        func storage(_ bucket: String, _ endpoint: String, pathStyle: Bool = false) -> ObjectStorage {
            ObjectStorage(bucket: bucket, endpoint: endpoint, pathStyle: pathStyle, accessKeyID: "a", secretAccessKey: "s")
        }
        for (bucket, endpoint) in [("uploads", "http://127.0.0.1:7480"), ("uploads", "http://10.1.2.3"), ("uploads", "http://[::1]:9000"),
                                   ("my.uploads", "https://s3.eu-west-1.amazonaws.com"), ("Uploads", "https://s3.amazonaws.com"),
                                   ("up_loads", "https://s3.amazonaws.com"), ("uploads", "http://localhost:9000"), ("uploads", "http://minio:9000")] {
            #expect(storage(bucket, endpoint).pathStyle, "\(bucket) at \(endpoint)")
        }
        for (bucket, endpoint) in [("uploads", "https://s3.eu-west-1.amazonaws.com"), ("uploads-2", "https://minio.example.com")] {
            #expect(!storage(bucket, endpoint).pathStyle, "\(bucket) at \(endpoint)")
        }
        #expect(storage("uploads", "https://minio.example.com", pathStyle: true).pathStyle)
    }

    @Test("If-Match names the ETag as the store answered it, or unquoted where the probe found the store takes that form")
    func ifMatchForms() {
        var storage = ObjectStorage(bucket: "b", endpoint: "http://127.0.0.1:1", accessKeyID: "a", secretAccessKey: "s")
        #expect(storage.ifMatch("\"abc\"") == ("if-match", "\"abc\""))
        storage.unquotedETagConditions = true
        #expect(storage.ifMatch("\"abc\"") == ("if-match", "abc"))
        #expect(storage.ifMatch("W/\"abc\"") == ("if-match", "abc"))
        #expect(storage.ifMatch("abc") == ("if-match", "abc"))
    }
}
