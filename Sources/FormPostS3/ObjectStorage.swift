import FormPostReceiving
import FormPostDigests
import AsyncHTTPClient
import NIOCore
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A bucket of S3-compatible object storage (Amazon S3, MinIO, Ceph RGW, Cloudflare R2,
/// Backblaze B2, …) that a receiver stores the files of multipart forms in, instead of its
/// directory: each file streamed into an object as it arrives (one `PUT` below
/// a part, 8 MiB, else an S3 multipart upload), under ``prefix`` and a random name.
///
/// Requests are signed with AWS Signature Version 4 over the payload's SHA-256 (every
/// part is held whole before it is sent, so the store checks each one's bytes against the
/// signature) — except, as AWS's SDKs send them, a part that carries its CRC32 over TLS,
/// which goes as `UNSIGNED-PAYLOAD` — and sent with `client` (AsyncHTTPClient's shared
/// client unless given; with a CA bundle, `AWS_CA_BUNDLE` or the profile's `ca_bundle`,
/// ``clients(trustingCABundle:)``).
public struct ObjectStorage: Sendable {
    /// The bucket.
    public var bucket: String
    /// What every key begins with: empty, or a folder ending in `/` (`uploads/`).
    public var prefix: String
    /// The store's address, scheme and host (and port): `https://s3.eu-west-1.amazonaws.com`,
    /// `http://127.0.0.1:9000`.
    public var endpoint: String
    /// The region requests are signed for (`us-east-1` where the store has none; R2 takes `auto`).
    public var region: String
    /// Whether the bucket is the first segment of the path (`endpoint/bucket/key`: MinIO,
    /// most self-hosted stores) rather than of the host name (`bucket.endpoint-host/key`:
    /// Amazon S3's virtual-hosted style). Chosen by itself, as AWS's SDKs choose it, when
    /// the endpoint's host is an IP address or the bucket's name is no host name label
    /// (it has a dot, which TLS certificates of `*.s3.amazonaws.com` do not cover), or the
    /// endpoint's host is a single label such as `localhost`.
    public var pathStyle: Bool
    /// Whether `If-Match` names an ETag without its quotes. S3 compares the field with the
    /// quoted ETag it answers; Ceph's RADOS Gateway (16.2) compares it with the ETag
    /// unquoted, so that a quoted one never matches. ``checkConditionalWrites()`` finds
    /// which form the store takes; false until then.
    public var unquotedETagConditions = false
    /// Whether the store refuses a `DELETE` whose `If-Match` names another ETag (S3 does;
    /// Ceph's RADOS Gateway 16.2 removes the object all the same). ``checkConditionalWrites()``
    /// finds it; false until then, so that leases are released by conditional writes.
    public var honoursDeleteConditions = false
    /// Whether the store's listing of multipart uploads dates each when it began (moto dates
    /// every one in 2010). ``checkConditionalWrites()`` finds it; until then, and without it,
    /// ``listMultipartUploads(prefix:)`` dates none, so that no sweep takes one in progress
    /// for one begun long ago.
    public var datesMultipartUploads = false
    /// Whether the store's listing of multipart uploads takes `prefix` as a prefix of keys, as
    /// S3 does; MinIO takes it as one object's whole key, so that a listing of the receiver's
    /// prefix finds none. ``checkConditionalWrites()`` finds it; false until then.
    public var listsMultipartUploadsByPrefix = false
    /// Whether the store keeps CRC32 checksums of multipart uploads (S3's flexible checksums,
    /// which Ceph's RADOS Gateway 16.2 lacks): the multipart uploads of forms' files and of
    /// resumable uploads then declare CRC32 and send each part with its own, as AWS's SDKs
    /// do. ``checkChecksums()`` finds it; false until then.
    public var checksumsParts = false
    /// The access key id.
    public var accessKeyID: String
    /// The secret access key.
    public var secretAccessKey: String
    /// The session token of temporary credentials, sent as `x-amz-security-token`.
    public var sessionToken: String?
    /// The HTTP client requests go through: ``defaultClient`` unless another is given (one
    /// that follows no redirect: a redirect would carry the signature elsewhere).
    public var client: HTTPClient
    /// The HTTP client the leases' requests go through (``leaseTraffic``): connections of
    /// their own, so that a renewal never waits behind parts in flight. When nil,
    /// ``defaultLeaseClient`` while ``client`` is ``defaultClient``, else ``client`` itself
    /// (a client given for its TLS or proxy settings is used for every request): give one
    /// made as ``client`` was to keep the leases apart.
    public var leaseClient: HTTPClient?
    /// How long each attempt of a request may take when the request says nothing; nil for
    /// 5 minutes. Set for the leases' requests (``leaseTraffic``).
    var attemptTimeout: TimeAmount?
    /// Where the credentials come from, for the start-up line (never a secret): `environment`,
    /// `profile NAME in PATH`, a role's, the container's, the instance's, or `given` when
    /// passed to ``init(bucket:prefix:endpoint:region:pathStyle:accessKeyID:secretAccessKey:sessionToken:client:)``.
    public var credentialsSource = "given"
    /// The temporary credentials in use, had again before they expire; nil with keys that do not change.
    var credentialsCache: S3CredentialsCache?
    /// The retries the requests to the bucket may still make (AWS's standard retry quota).
    let retryQuota = S3RetryQuota()
    /// How far the store's clock is from this one, as a skewed signature's refusal showed.
    let clockOffset = S3ClockOffset()
    /// Writes to one key spaced a second apart once the store answered one 429.
    let keyWrites = S3KeyWriteSpacing()
    /// Whether the store implements object tagging.
    let tagging = S3Tagging()

    /// Whether the store implements object tagging (the SHA-256 of a multipart object is its
    /// tag `sha256`): true until ``check()`` or a tag finds that it does not (Cloudflare R2).
    public var supportsTagging: Bool { tagging.isSupported }

    /// The client of object storage unless one is given: AsyncHTTPClient's, on NIOPosix's
    /// shared event loops (sockets on every platform, never Network.framework), configured
    /// as its shared client but following no redirect and decompressing nothing. Made once
    /// per process, on first use; never shut down.
    public static let defaultClient: HTTPClient = newClient()

    /// The client of the leases' requests unless one is given (``leaseClient``): made as
    /// ``defaultClient``, with a pool of connections of its own. Made once per process, on
    /// first use; never shut down.
    public static let defaultLeaseClient: HTTPClient = newClient()

    /// A client as ``defaultClient`` is made, with a pool of connections of its own, and
    /// `tls` for its TLS connections when given.
    static func newClient(tls: TLSConfiguration? = nil) -> HTTPClient {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        if let tls { configuration.tlsConfiguration = tls }
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    /// The credentials to sign a request with now.
    func currentCredentials() async throws -> S3Credentials {
        if let credentialsCache { return try await credentialsCache.current() }
        return S3Credentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken)
    }
    /// How long a receiver's lease on a resumable upload lasts unless renewed (an append
    /// renews it while it runs): how long the upload waits, answering 423, when the receiver
    /// holding it died. 20 seconds by default: shorter than the 30 s `formpost --resumable`
    /// waits out 423s.
    public var leaseDuration: Duration = .seconds(20)
    /// How often each receiver on the bucket sweeps its resumable uploads: finishes the
    /// completions recorded and not finished, removes the uploads idle for their expiry
    /// (one listing of the uploads' state per pass). 60 seconds by default.
    public var sweepInterval: Duration = .seconds(60)

    /// Storage in `bucket` under `prefix` (a `/` is added to a prefix without one) at
    /// `endpoint`, with the given credentials.
    public init(bucket: String, prefix: String = "", endpoint: String, region: String = "us-east-1", pathStyle: Bool = false,
                accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, client: HTTPClient = ObjectStorage.defaultClient) {
        self.bucket = bucket
        self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
        self.endpoint = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        self.region = region
        self.pathStyle = pathStyle || Self.requiresPathStyle(bucket: bucket, endpoint: endpoint)
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.client = client
    }

    /// Storage named by `uri` (`s3://BUCKET` or `s3://BUCKET/PREFIX`), with credentials and
    /// region found as AWS's SDKs find them (the environment, the shared profile with its
    /// roles and `credential_process`, web identity, the container's endpoint, the EC2
    /// instance's metadata: `S3CredentialsLookup`), temporary ones had again before they
    /// expire; the region `region`, else `AWS_REGION`, else `AWS_DEFAULT_REGION`, else
    /// `us-east-1`. Without `endpoint`, Amazon S3's own for the region, virtual-hosted.
    /// Credentials that must be fetched are fetched with the first request (``check()``).
    /// With a CA bundle (`AWS_CA_BUNDLE`, else the profile's `ca_bundle` in the shared config
    /// or credentials file), TLS connections to STS, and to the store when no `client` is given, trust the
    /// CA certificates of that PEM file instead of the system's
    /// (``clients(trustingCABundle:)``), as AWS's SDKs do; those to the container's and the
    /// instance's credential endpoints keep the system's.
    ///
    /// - Throws: `ObjectStorageError/invalidURI(_:)`, `ObjectStorageError/noCredentials`,
    ///   `ObjectStorageError/credentialsUnavailable(source:detail:)` for a profile that
    ///   cannot be used, `ObjectStorageError/unreadableCABundle(path:detail:)`.
    public static func fromEnvironment(uri: String, endpoint: String? = nil, region: String? = nil, pathStyle: Bool = false,
                                       environment: [String: String] = ProcessInfo.processInfo.environment,
                                       client: HTTPClient = ObjectStorage.defaultClient) throws -> ObjectStorage {
        guard uri.hasPrefix("s3://") else { throw ObjectStorageError.invalidURI(uri) }
        let rest = uri.dropFirst(5)
        let bucket = String(rest.prefix { $0 != "/" })
        guard Self.isBucketName(bucket) else { throw ObjectStorageError.invalidURI(uri) }
        let prefix = String(rest.dropFirst(bucket.count).drop { $0 == "/" })
        let region = region ?? S3CredentialsLookup.region(environment: environment) ?? "us-east-1"
        let readFile: (String) -> String? = { try? String(contentsOfFile: $0, encoding: .utf8) }
        guard var resolved = try S3CredentialsLookup.resolve(environment: environment, region: region, readFile: readFile) else {
            throw ObjectStorageError.noCredentials
        }
        // The CA bundle is read only for connections that use it: the store's own (unless a
        // client is given) and STS's.
        var trusting: (client: HTTPClient, leaseClient: HTTPClient)?
        var role: S3RoleCredentials?
        if case .provider(let provider) = resolved { role = provider as? S3RoleCredentials }
        if client === defaultClient || role != nil, let bundle = S3CredentialsLookup.caBundle(environment: environment, readFile: readFile) {
            do {
                trusting = try clients(trustingCABundle: bundle.path)
            } catch ObjectStorageError.unreadableCABundle(let path, let detail) {
                throw ObjectStorageError.unreadableCABundle(path: path, detail: "named by \(bundle.namedBy); \(detail)")
            }
        }
        if let trusting, let role {
            resolved = .provider(role.asking(with: trusting.client))
        }
        let keys: S3Credentials
        var cache: S3CredentialsCache?
        switch resolved {
        case .keys(let found): keys = found.credentials
        case .provider(let provider):
            keys = S3Credentials(accessKeyID: "", secretAccessKey: "")
            cache = S3CredentialsCache(provider: provider)
        }
        var storage = ObjectStorage(bucket: bucket, prefix: prefix, endpoint: endpoint ?? "https://s3.\(region).amazonaws.com", region: region,
                                    pathStyle: pathStyle, accessKeyID: keys.accessKeyID, secretAccessKey: keys.secretAccessKey,
                                    sessionToken: keys.sessionToken, client: client)
        storage.credentialsCache = cache
        storage.credentialsSource = resolved.source
        if let trusting, client === defaultClient {
            (storage.client, storage.leaseClient) = trusting
        }
        return storage
    }

    /// Whether `name` can be a bucket's: 3–63 lower-case letters, digits, `.` and `-`.
    static func isBucketName(_ name: String) -> Bool {
        (3...63).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
    }

    /// The size of every part of a multipart upload but the last, for files of at most
    /// `maxFileSize` bytes: 8 MiB (the AWS CLI's own; S3 takes 5 MiB at least), or the next
    /// power of two that fits such a file in S3's 10,000 parts (a part's buffer has such a
    /// size anyway). At most three parts of a file are held in memory at once (two in flight).
    public static func partSize(maxFileSize: Int64) -> Int {
        var size: Int64 = 8 << 20
        while size * 10_000 < maxFileSize, size < 4 << 30 { size *= 2 }
        return Int(size)
    }

    /// Checks that the bucket exists and takes an object under ``prefix`` from these
    /// credentials: a `HEAD` of the bucket, then a small object written, tagged (finding
    /// whether the store implements tagging: ``supportsTagging``) and removed (each within
    /// 15 s, sent twice at most).
    ///
    /// - Throws: `ObjectStorageError` saying what the store answered.
    public func check() async throws {
        let client = S3Client(storage: self)
        do {
            _ = try await client.send(.HEAD, key: nil, what: "looking at the bucket \(bucket)", attempts: 2, timeout: .seconds(15))
        } catch ObjectStorageError.refused(let what, let status, nil, nil) where status == 404 || status == 403 {
            // An answer to HEAD has no body to say why.
            throw ObjectStorageError.refused(what: what, status: status, code: status == 404 ? "NoSuchBucket" : "AccessDenied",
                                             message: status == 404 ? "the bucket does not exist" : "the credentials are refused, or may not list the bucket")
        }
        let probe = prefix + ".formpost-probe-" + UploadStore.randomName()
        _ = try await client.send(.PUT, key: probe, body: .init(string: "probe"), what: "writing a probe object", attempts: 2, timeout: .seconds(15))
        do {
            try await client.tagSHA256(of: probe, SignatureV4.hex(SHA256Hasher.digest(of: Array("probe".utf8))), probing: true)
        } catch {
            _ = try? await client.send(.DELETE, key: probe, what: "removing the probe object", attempts: 2, timeout: .seconds(15))
            throw error
        }
        _ = try await client.send(.DELETE, key: probe, what: "removing the probe object", attempts: 2, timeout: .seconds(15))
    }

    /// Finds whether the store keeps CRC32 checksums of multipart uploads
    /// (``checksumsParts``), as they are used: a probe multipart upload begun with
    /// `x-amz-checksum-algorithm: CRC32`, its one part sent with its CRC32, completed naming
    /// it, then read with `x-amz-checksum-mode: ENABLED`, which must answer a CRC32; then
    /// removed. A store that refuses any step, or answers none, is taken to keep none (its
    /// parts then go without).
    public mutating func checkChecksums() async {
        let (client, key) = (S3Client(storage: self), prefix + ".formpost-probe-" + UploadStore.randomName())
        guard let uploadID = try? await client.beginMultipartUpload(of: key, fields: [("x-amz-checksum-algorithm", "CRC32")]) else {
            checksumsParts = false
            return
        }
        var kept = false
        do {
            let part = try await client.sendPart(ByteBuffer(string: "probe"), number: 1, of: key, uploadID: uploadID, checksummed: true, timeout: .seconds(15))
            try await client.completeMultipartUpload(of: key, uploadID: uploadID, parts: [part])
            let answer = try await client.send(.HEAD, key: key, fields: [("x-amz-checksum-mode", "ENABLED")], what: "reading the probe object's CRC32",
                                               attempts: 2, timeout: .seconds(15))
            kept = !(answer.headers.first(name: "x-amz-checksum-crc32") ?? "").isEmpty
        } catch {
            await client.abortMultipartUpload(of: key, uploadID: uploadID, attempts: 2)
        }
        _ = try? await client.send(.DELETE, key: key, what: "removing the probe object", attempts: 2, timeout: .seconds(15))
        checksumsParts = kept
    }

    /// Checks that the store honours conditional writes, on which resumable uploads rely
    /// (`TusReceiver` on object storage: its leases and states): a probe object written
    /// with `If-None-Match: *` twice must be refused the second time (412), written
    /// with `If-Match` on an ETag it does not have, refused too, and written with `If-Match`
    /// on the ETag it has, taken — quoted as S3 answers it, else unquoted as Ceph's RADOS
    /// Gateway compares it (``unquotedETagConditions`` is set to the form taken). A store
    /// that ignores the condition would let two receivers append to one upload at once, and
    /// one that refuses a correct one every append, so either is refused here, at start.
    /// Last, whether it refuses a `DELETE` with a stale `If-Match` (``honoursDeleteConditions``).
    ///
    /// - Throws: `ObjectStorageError/refused(what:status:code:message:)` naming the store's
    ///   answer, or saying that it ignored the condition or refused a correct one.
    public mutating func checkConditionalWrites() async throws {
        let client = S3Client(storage: self)
        let probe = prefix + ".formpost-probe-" + UploadStore.randomName()
        let what = "writing a probe object with If-None-Match: *"
        let written = try await client.send(.PUT, key: probe, fields: [("if-none-match", "*")], body: .init(string: "probe"), what: what, attempts: 2,
                                            timeout: .seconds(15))
        let refusedAgain: Bool
        do {
            _ = try await client.send(.PUT, key: probe, fields: [("if-none-match", "*")], body: .init(string: "again"), what: what, attempts: 2,
                                      timeout: .seconds(15))
            refusedAgain = false
        } catch ObjectStorageError.refused(_, let status, _, _) where status == 412 || status == 409 {
            refusedAgain = true
        }
        var refusedStale = false
        if refusedAgain {
            do {
                _ = try await client.send(.PUT, key: probe, fields: [("if-match", "\"formpost-no-such-etag\"")], body: .init(string: "stale"),
                                          what: "writing a probe object with a stale If-Match", attempts: 2, timeout: .seconds(15))
            } catch let error as ObjectStorageError where error.isConditionFailure {
                refusedStale = true
            }
        }
        var unquoted: Bool?
        if refusedAgain, refusedStale, let etag = written.etag {
            unquoted = try await Self.matchingForm(of: etag, writing: probe, with: client)
            if unquoted == true {
                // The form taken must be held to as well: a stale unquoted ETag refused.
                do {
                    _ = try await client.send(.PUT, key: probe, fields: [("if-match", "formpost-no-such-etag")], body: .init(string: "stale"),
                                              what: "writing a probe object with a stale unquoted If-Match", attempts: 2, timeout: .seconds(15))
                    refusedStale = false
                } catch let error as ObjectStorageError where error.isConditionFailure {}
            }
        }
        let honoursDelete = await Self.refusesStaleDelete(of: probe, unquoted: unquoted == true, with: client)
        let listing = await Self.listsMultipartUploads(probe + "-multipart", byPrefix: probe, with: client)
        _ = try? await client.send(.DELETE, key: probe, what: "removing the probe object", attempts: 2, timeout: .seconds(15))
        guard refusedAgain, refusedStale else {
            let gcs = endpoint.lowercased().contains("storage.googleapis.com")
                ? " (Google Cloud Storage's XML API honours If-Match and If-None-Match on reads only; its writes take x-goog-if-generation-match)" : ""
            throw ObjectStorageError.refused(what: what, status: 200, code: "ConditionalWritesIgnored",
                                             message: "the store wrote over an existing object: it does not support conditional writes, which resumable uploads need"
                                                + gcs + "; store forms only with resumable uploads switched off (formpost serve --no-tus --no-resumable)")
        }
        guard let unquoted else {
            throw ObjectStorageError.refused(what: "writing a probe object with If-Match on its own ETag", status: 412, code: "CorrectETagRefused",
                                             message: "the store refused If-Match on the object's own ETag, quoted and unquoted: every append would be refused")
        }
        unquotedETagConditions = unquoted
        honoursDeleteConditions = honoursDelete
        datesMultipartUploads = listing.dated
        listsMultipartUploadsByPrefix = listing.byPrefix
    }

    /// Whether the store's listing of multipart uploads finds one of `key`, begun now, when
    /// asked for `prefix` (a prefix of `key`, as the sweep asks for the receiver's prefix) and
    /// lists nothing outside `prefix`, and whether it dates it within an hour of this clock;
    /// the upload is aborted after. Only a listing by prefix that succeeds and lacks it is
    /// followed by one of the whole key, which tells a store that lists a key's uploads alone
    /// (MinIO); a store whose listing fails, or lists uploads outside the prefix asked for
    /// (which the sweep would take for its own), is taken to do neither.
    private static func listsMultipartUploads(_ key: String, byPrefix prefix: String, with client: S3Client) async -> (byPrefix: Bool, dated: Bool) {
        guard let uploadID = try? await client.beginMultipartUpload(of: key, fields: []) else { return (false, false) }
        let found: (byPrefix: Bool, upload: ListedMultipartUpload?)
        do {
            let listed = try await client.listMultipartUploads(prefix: prefix, attempts: 2, timeout: .seconds(15))
            if let upload = listed.first(where: { $0.uploadID == uploadID }) {
                found = listed.allSatisfy { $0.key.hasPrefix(prefix) } ? (true, upload) : (false, nil)
            } else {
                let whole = try await client.listMultipartUploads(prefix: key, attempts: 2, timeout: .seconds(15))
                found = (false, whole.first { $0.uploadID == uploadID })
            }
        } catch {
            found = (false, nil)
        }
        await client.abortMultipartUpload(of: key, uploadID: uploadID, attempts: 2)
        guard let initiated = found.upload?.initiated else { return (found.byPrefix, false) }
        return (found.byPrefix, abs(initiated.timeIntervalSinceNow) < 3600)
    }

    /// Whether the store refuses to remove `probe` with `If-Match` on an ETag it does not
    /// have (in the form it compares). A store that removes it, or fails otherwise, is taken
    /// not to honour the condition.
    private static func refusesStaleDelete(of probe: String, unquoted: Bool, with client: S3Client) async -> Bool {
        do {
            _ = try await client.send(.DELETE, key: probe, fields: [("if-match", unquoted ? "formpost-no-such-etag" : "\"formpost-no-such-etag\"")],
                                      what: "removing a probe object with a stale If-Match", attempts: 2, timeout: .seconds(15))
            return false
        } catch let error as ObjectStorageError where error.isConditionFailure {
            return true
        } catch {
            return false
        }
    }

    /// What the probes found the store to honour, for the start-up line: the form of
    /// `If-Match` it compares, and how leases are released.
    public var conditionsReport: String {
        (unquotedETagConditions ? "If-Match with unquoted ETags" : "If-Match with quoted ETags")
            + (honoursDeleteConditions ? ", conditional DELETE" : ", DELETE ignores If-Match: leases released by conditional writes")
            + multipartUploadsReport
    }

    /// What the sweep can do with the store's listing of multipart uploads, for the start-up line.
    private var multipartUploadsReport: String {
        switch (listsMultipartUploadsByPrefix, datesMultipartUploads) {
        case (true, true): ""
        case (true, false): ", multipart uploads not dated: left to the lifecycle rule"
        case (false, true): ", multipart uploads listed by whole key only: left to the store's expiry of stale uploads"
        case (false, false): ", multipart uploads not listed: left to the lifecycle rule"
        }
    }

    /// Whether the store takes `If-Match` with `etag` (the probe object's, as answered)
    /// unquoted (true) or quoted (false): nil when it takes neither.
    private static func matchingForm(of etag: String, writing probe: String, with client: S3Client) async throws -> Bool? {
        for unquoted in [false, true] {
            let field = ("if-match", unquoted ? unquote(etag) : etag)
            do {
                _ = try await client.send(.PUT, key: probe, fields: [field], body: .init(string: "probe"),
                                          what: "writing a probe object with If-Match on its own ETag", attempts: 2, timeout: .seconds(15))
                return unquoted
            } catch let error as ObjectStorageError where error.isConditionFailure {
                continue
            }
        }
        return nil
    }

    /// The `If-Match` field on `etag` (as the store answered it), in the form the store takes.
    func ifMatch(_ etag: String) -> SignatureV4.Field {
        ("if-match", unquotedETagConditions ? Self.unquote(etag) : etag)
    }

    /// `etag` without the quotes around it (and a weak validator's `W/`).
    static func unquote(_ etag: String) -> String {
        var value = Substring(etag)
        if value.hasPrefix("W/") { value = value.dropFirst(2) }
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
        return String(value)
    }

    /// Whether requests to `bucket` at `endpoint` must name the bucket in the path: the
    /// endpoint's host is an IP address (`http://127.0.0.1:9000`) or a single label
    /// (`http://localhost:9000`, `http://minio:9000`), or the bucket's name
    /// is not one DNS label of lowercase letters, digits and hyphens (a dot in it breaks TLS
    /// under `*.s3.amazonaws.com`; capitals and underscores are no host name).
    static func requiresPathStyle(bucket: String, endpoint: String) -> Bool {
        let label = !bucket.isEmpty && bucket.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
        guard label else { return true }
        let afterScheme = endpoint.firstRange(of: "://").map { endpoint[$0.upperBound...] } ?? endpoint[...]
        let authority = afterScheme.prefix { $0 != "/" }
        let host: Substring
        if authority.hasPrefix("[") {
            return true  // an IPv6 address
        } else {
            host = authority.prefix { $0 != ":" }
        }
        // A single label (`localhost`, `minio`) takes no bucket before it in DNS either.
        var v4 = in_addr()
        return inet_pton(AF_INET, String(host), &v4) == 1 || !host.contains(".")
    }
}
