#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import CMultipartSystem
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPostServer
import Hummingbird
import Logging
import NIOSSL
import ServiceLifecycle

/// `formpost serve`: receives multipart uploads and stores files under `--dir`.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Receive multipart/form-data uploads and store the files.")

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"
    @Option(help: "The port to listen on (0 for any free port).")
    var port = 8080
    @Option(help: "Where to store received files.")
    var dir = "./uploads"
    @Option(name: .customLong("max-body-size"), help: "The largest request body: bytes or K/M/G.")
    var maxBodySize = "10G"
    @Option(name: .customLong("max-file-size"), help: "The largest file part: bytes or K/M/G.")
    var maxFileSize = "10G"
    @Option(name: .customLong("max-parts"), help: "The most parts in a form.")
    var maxParts = 1000
    @Option(name: .customLong("file-mode"), help: "The permissions of stored files, in octal (600: readable by the server's user only).")
    var fileMode = "600"
    @Option(name: .customLong("tls-cert"), help: "Serve HTTPS with this PEM certificate chain (HTTP/2 by ALPN, else HTTP/1.1); needs --tls-key.")
    var tlsCertificate: String?
    @Option(name: .customLong("tls-key"), help: "The PEM private key of --tls-cert.")
    var tlsKey: String?
    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may send nothing of its request (head or body) before it is closed.")
    var idleTimeout: Double = 60
    @Option(name: .customLong("max-connections"), help: "The most connections open at once; others wait until one closes.")
    var maxConnections = 1024
    @Option(name: .customLong("max-connections-per-address"),
            help: "The most connections open at once from one client address (IPv6: per /56); a further one is closed unread. A --trusted-proxy's connections are not counted.")
    var maxConnectionsPerAddress = 32
    @Option(name: .customLong("trusted-proxy"),
            help: "A reverse proxy or load balancer in front of the server, as a CIDR range or an address (repeatable): requests from it count, and are logged, under the client address it forwards in --forwarded-header (the rightmost address that is not a trusted proxy; a malformed entry ends the walk at the good hop right of it), and its connections are exempt from --max-connections-per-address.")
    var trustedProxy: [String] = []
    @Option(name: .customLong("forwarded-header"),
            help: "The field a --trusted-proxy's client is read from, the one your proxy writes: x-forwarded-for (the default: nginx, HAProxy and most load balancers) or forwarded (RFC 7239). The other field is never read: a client could write it itself.")
    var forwardedHeader = ForwardedField.xForwardedFor.rawValue
    @Option(name: .customLong("tus-path"), help: "Where resumable uploads (tus 1.0) are created; each lives under it.")
    var tusPath = "/files"
    @Option(name: [.customLong("resumable-expiry"), .customLong("tus-expiry")], help: "Seconds a resumable upload (tus or IETF draft) is kept after it began, complete or not.")
    var resumableExpiry: Double = 86_400
    @Flag(name: .customLong("no-tus"), help: "Do not receive tus uploads.")
    var noTus = false
    @Option(name: .customLong("resumable-path"), help: "Where the upload resources of the IETF draft's resumable uploads live (any POST or PUT with Upload-Complete creates one).")
    var resumablePath = "/uploads"
    @Option(name: .customLong("max-uploads-in-progress"), help: "The most resumable uploads in progress at once, per protocol; past it, creation answers 503. With --store, each receiver counts the uploads it created (reading their states again from the bucket before it refuses one).")
    var maxUploadsInProgress = 1000
    @Option(name: .customLong("max-uploads-in-progress-per-client"),
            help: "The most resumable uploads in progress at once from one client address (IPv6: per /56), per protocol; past it, that address's creations answer 503. Behind a reverse proxy every client has the proxy's address, unless it is a --trusted-proxy.")
    var maxUploadsInProgressPerClient = 10
    @Option(name: .customLong("max-bytes-in-progress-per-client"),
            help: "The bytes the resumable uploads in progress from one client address may hold (bytes or K/M/G), per protocol; past it, that address's creations answer 503.")
    var maxBytesInProgressPerClient = "20G"
    @Option(name: .customLong("idle-upload-expiry"), help: "Seconds a resumable upload in progress may go without receiving a byte before it is removed.")
    var idleUploadExpiry: Double = 3600
    @Option(name: .customLong("state-dir"),
            help: "Where resumable uploads in progress are kept (tus/ and resumable/ in it), on the file system of --dir; by default .tus/ and .resumable/ in --dir.")
    var stateDir: String?
    @Option(name: .customLong("durability"),
            help: "synced: each stored file of a multipart upload, and its directory, is synced to the disk before the receipt (the default); page-cache: left to the kernel's writeback, so a power loss may lose files a receipt named. Resumable uploads are synced before every answer either way.")
    var durability = ReceiptDurability.synced.rawValue
    @Flag(name: .customLong("no-resumable"), help: "Do not receive resumable uploads of the IETF draft (Upload-Complete).")
    var noResumable = false
    @Flag(name: .customLong("no-page"), help: "Do not serve the upload page at GET / (which then answers 405, as every method but POST).")
    var noPage = false
    @Option(name: .customLong("shutdown-grace"),
            help: "Seconds the requests in flight have to finish after SIGTERM or SIGINT, while no new connection is taken; then their connections are closed (a resumable upload goes on from what was stored when the server runs again; a cut multipart upload leaves nothing).")
    var shutdownGrace: Double = 30
    @Option(name: .customLong("shutdown-delay"),
            help: "Seconds, after SIGTERM or SIGINT, during which /readyz answers 503 while new connections and requests are still taken, so that a load balancer stops sending any; then the stop of --shutdown-grace begins.")
    var shutdownDelay: Double = 0
    @Flag(name: .customLong("no-health"), help: "Do not answer GET /healthz (alive) and GET /readyz (storage writable, not stopping).")
    var noHealth = false
    @Option(name: .customLong("signing-key-file"),
            help: "Take only uploads whose URL is signed with this key (raw bytes, at least 32; see 'formpost sign'): 401 without a signature, 403 for an invalid or expired one.")
    var signingKeyFile: String?
    @Option(name: .customLong("hook-url"),
            help: "Ask this HTTP service whether each upload may begin, before its body is read: it receives JSON about the request ({\"type\":\"pre-create\",\"upload\":{...}}) and answers with a verdict: 2xx with {\"allow\": true} (optionally \"maxBytes\" and \"metadata\") allows it; 2xx with {\"allow\": false} (optionally \"status\" 4xx, \"message\") or a 4xx (with its {\"error\": ...}) refuses it (403 by default). Anything else — an empty, HTML or other body, a redirect (never followed), a 5xx, no complete answer within --hook-timeout, no connection — is no verdict: the upload is answered 503 with Retry-After, nothing stored. A user:password@ in the URL is sent as Basic authorization and never logged. See --hook-events for the events it is told.")
    var hookURL: String?
    @Option(name: .customLong("hook-timeout"), help: "Seconds --hook-url has for each exchange, from connecting to the last byte of its answer; past them the upload is answered 503 (pre-create) or the event posted again later (post-finish).")
    var hookTimeout: Double = 5
    @Option(name: .customLong("hook-events"),
            help: "The events posted to --hook-url, comma-separated: pre-create (asks whether an upload may begin; the default), post-finish (an upload's receipt once stored — a multipart form, a tus or IETF-draft upload — recorded on the disk (with --store, in the bucket, for any receiver on it to post) before it is answered complete, and posted until the hook answers 2xx, after a restart too, each event on its own schedule (see --events-max-age)), post-terminate (a resumable upload its client ended with DELETE, recorded and posted the same way).")
    var hookEvents = "pre-create"
    @Option(name: .customLong("events-max-count"),
            help: "The most events (post-finish, post-terminate) that may wait in the outbox (in the bucket with --store) for the hook; past it, uploads whose event cannot be recorded are answered 503 with Retry-After (nothing stored), rather than an event being dropped.")
    var eventsMaxCount = UploadEventOutbox.defaultMaxCount
    @Option(name: .customLong("events-max-bytes"), help: "The most bytes the events waiting in the outbox may hold (bytes or K/M/G); past it, as past --events-max-count. (In a bucket, with --store, each event is held to 256 KiB and --events-max-count bounds them.)")
    var eventsMaxBytes = "64M"
    @Option(name: .customLong("events-max-attempts"),
            help: "The most attempts to post an event before it is given up on: moved to dead/ in the outbox (in the bucket with --store), logged at error level, counted in formpost_events_dead_lettered_total (default: no bound but --events-max-age).")
    var eventsMaxAttempts: Int?
    @Option(name: .customLong("events-max-age"),
            help: "Seconds after its first failed attempt that an event is still posted (each on its own schedule: 1, 2, 4… s apart, at most 60, with jitter); then it is given up on as past --events-max-attempts.")
    var eventsMaxAge: Double = 86_400
    @Option(name: .customLong("log-format"),
            help: "text (the default: one line per message, fields as key=value) or json (one JSON object per line: time, level, label, source, message and each field — a request's method, path, status, bytes, duration, client, upload).")
    var logFormat = "text"
    @Option(name: .customLong("cors-origin"),
            help: "Let pages of this origin (https://app.example.com, or * for any) upload from the browser (CORS): preflights answered, the tus and draft fields allowed, Location and Upload-* exposed. Repeatable. Without it no CORS field is answered.")
    var corsOrigins: [String] = []
    @Flag(name: .customLong("metrics"),
          help: "Answer GET /metrics in Prometheus's text format: requests, bytes received, uploads created/completed/failed/expired by protocol, open connections. It answers whoever reaches the port.")
    var metrics = false
    @Option(name: .customLong("store"),
            help: "Store the files of multipart uploads in object storage instead of --dir: s3://BUCKET or s3://BUCKET/PREFIX (S3 or a compatible store; credentials found as AWS's SDKs find them: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, AWS_PROFILE with its role or credential_process, AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, the container's endpoint, the EC2 instance's metadata). tus and IETF-draft uploads are kept in the bucket too (under PREFIX.tus/ and PREFIX.resumable/), so that every receiver on it can continue them; the store must honour conditional writes. Resumable multipart forms are then refused (415) and the upload page sends its forms in one request.")
    var store: String?
    @Option(name: .customLong("s3-endpoint"), help: "The object store's address (scheme, host, port), for a store other than Amazon S3: http://127.0.0.1:9000.")
    var s3Endpoint: String?
    @Option(name: .customLong("s3-region"), help: "The region requests to the object store are signed for (else AWS_REGION, else us-east-1).")
    var s3Region: String?
    @Flag(name: .customLong("s3-path-style"), help: "Address the bucket in the path (endpoint/bucket/key), as most self-hosted stores need, not in the host name. Chosen by itself for an endpoint whose host is an IP address, and for a bucket whose name has a dot.")
    var s3PathStyle = false
    @Option(name: .customLong("s3-lease"),
            help: "Seconds a receiver's lease on a resumable upload in the bucket lasts unless renewed (appends renew it): how long an upload waits, answering 423, after the receiver appending to it died.")
    var s3Lease: Double = 20
    @Option(name: .customLong("s3-sweep"),
            help: "Seconds between two sweeps of the resumable uploads in the bucket: completions recorded and not finished are finished, uploads idle for --resumable-expiry removed; and between two looks for the events (--hook-events) that other receivers on the bucket recorded and did not deliver.")
    var s3Sweep: Double = 60
    @Option(name: .customLong("s3-memory"),
            help: "MiB that the parts being gathered may hold at once with --store (each file or append gathers its first 64 KiB, then a part — 8 MiB, more with a --max-file-size past 80 GB — before it is sent; three let two be sent while the next gathers): past it, uploads wait for memory, first come first served, so that slow uploads holding it make the others wait.")
    var s3Memory: Int = 64
    @Option(name: .customLong("resumable-max-lifetime"),
            help: "With --store: seconds after its creation a resumable upload expires, however active: its next request is answered 410 and removes it (a stored file stays; one no request comes for is removed once idle past --resumable-expiry). The bucket's lifecycle rule aborting incomplete multipart uploads must be longer.")
    var resumableMaxLifetime: Double = 518_400

    /// The exit status when the object store of `--store` refuses its bucket or credentials,
    /// or cannot be reached, at start (sysexits' `EX_UNAVAILABLE`).
    static let objectStoreUnavailableStatus: Int32 = 69

    /// For tests of crash safety: the server kills itself (SIGKILL) at this step of storing a
    /// complete resumable upload (a ``CompletionStep``'s name).
    @Option(name: .customLong("kill-at-completion-step"), help: .hidden)
    var killAtCompletionStep: String?

    /// The exit status when another process keeps resumable uploads in the same state
    /// directory (sysexits' `EX_TEMPFAIL`: it may work once that process has stopped).
    static let stateDirectoryInUseStatus: Int32 = 75

    func run() async throws {
        // Before any logger is made: every logger made from now on writes in this format.
        switch logFormat {
        case "text": break
        case "json": LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        default: throw fail(UsageError("--log-format \(logFormat): expected text or json"))
        }
        // Before anything counts: the backend of every metric made from now on.
        let metricsEndpoint = metrics ? PrometheusExport.bootstrap() : nil
        guard let bodyLimit = ByteSize.parse(maxBodySize) else { throw fail(UsageError("--max-body-size \(maxBodySize): expected bytes or K/M/G")) }
        guard let fileLimit = ByteSize.parse(maxFileSize) else { throw fail(UsageError("--max-file-size \(maxFileSize): expected bytes or K/M/G")) }
        guard maxParts > 0 else { throw fail(UsageError("--max-parts must be positive")) }
        let crossOrigin: CrossOriginPolicy?
        do {
            crossOrigin = corsOrigins.isEmpty ? nil : try CrossOriginPolicy(allowedOrigins: corsOrigins)
        } catch {
            throw fail(UsageError("--cors-origin: \(error)"))
        }
        guard idleTimeout > 0, idleTimeout <= 86_400 else { throw fail(UsageError("--idle-timeout \(idleTimeout): expected seconds between 0 and 86400")) }
        guard maxUploadsInProgress > 0 else { throw fail(UsageError("--max-uploads-in-progress must be positive")) }
        guard maxUploadsInProgressPerClient > 0 else { throw fail(UsageError("--max-uploads-in-progress-per-client must be positive")) }
        guard idleUploadExpiry > 0, idleUploadExpiry <= 315_360_000 else {
            throw fail(UsageError("--idle-upload-expiry \(idleUploadExpiry): expected seconds between 0 and ten years"))
        }
        guard maxConnections > 0 else { throw fail(UsageError("--max-connections must be positive")) }
        guard shutdownGrace >= 0, shutdownGrace <= 86_400 else { throw fail(UsageError("--shutdown-grace \(shutdownGrace): expected seconds between 0 and 86400")) }
        guard shutdownDelay >= 0, shutdownDelay <= 86_400 else { throw fail(UsageError("--shutdown-delay \(shutdownDelay): expected seconds between 0 and 86400")) }
        var signer: UploadURLSigner?
        if let signingKeyFile {
            do {
                signer = try UploadURLSigner(keyFile: signingKeyFile)
            } catch {
                throw fail(UsageError("--signing-key-file: \(error)"))
            }
        }
        var hook: UploadAuthorizationHook?
        var eventHook: UploadEventHook?
        let events = Set(hookEvents.split(separator: ",").map { String($0.filter { $0 != " " }) })
        if let unknown = events.subtracting(["pre-create", UploadEvent.postFinish, UploadEvent.postTerminate]).sorted().first {
            throw fail(UsageError("--hook-events: no event \"\(unknown)\" (expected pre-create, post-finish, post-terminate)"))
        }
        if hookURL == nil, events != ["pre-create"] {
            throw fail(UsageError("--hook-events \(hookEvents): the events go to --hook-url, which is not given"))
        }
        if let hookURL {
            guard let url = URL(string: hookURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host?.isEmpty == false else {
                throw fail(UsageError("--hook-url \(UploadAuthorizationHook.redacted(hookURL)): expected an http or https URL"))
            }
            guard hookTimeout > 0, hookTimeout <= 3600 else { throw fail(UsageError("--hook-timeout \(hookTimeout): expected seconds between 0 and 3600")) }
            let timeout = Duration.milliseconds(Int64(hookTimeout * 1000))
            if events.contains("pre-create") { hook = UploadAuthorizationHook(url: hookURL, timeout: timeout) }
            if !events.isDisjoint(with: [UploadEvent.postFinish, UploadEvent.postTerminate]) { eventHook = UploadEventHook(url: hookURL, timeout: timeout) }
        }
        guard eventsMaxCount > 0 else { throw fail(UsageError("--events-max-count must be positive")) }
        guard let eventsBytes = ByteSize.parse(eventsMaxBytes), eventsBytes > 0 else {
            throw fail(UsageError("--events-max-bytes \(eventsMaxBytes): expected bytes or K/M/G"))
        }
        guard eventsMaxAttempts.map({ $0 > 0 }) ?? true else { throw fail(UsageError("--events-max-attempts must be positive")) }
        guard eventsMaxAge > 0, eventsMaxAge <= 315_360_000 else { throw fail(UsageError("--events-max-age \(eventsMaxAge): expected seconds between 0 and ten years")) }
        guard maxConnectionsPerAddress > 0 else { throw fail(UsageError("--max-connections-per-address must be positive")) }
        var trustedProxies: TrustedProxies
        do {
            trustedProxies = try TrustedProxies(trustedProxy)
        } catch {
            throw fail(UsageError("--trusted-proxy: \(error)"))
        }
        guard let field = ForwardedField(rawValue: forwardedHeader) else {
            throw fail(UsageError("--forwarded-header \(forwardedHeader): expected x-forwarded-for or forwarded, the field your proxy writes"))
        }
        trustedProxies.field = field
        guard let bytesPerClient = ByteSize.parse(maxBytesInProgressPerClient), bytesPerClient > 0 else {
            throw fail(UsageError("--max-bytes-in-progress-per-client \(maxBytesInProgressPerClient): expected bytes or K/M/G"))
        }
        guard let mode = UInt16(fileMode, radix: 8), mode <= 0o777 else { throw fail(UsageError("--file-mode \(fileMode): expected octal permissions such as 600 or 640")) }
        guard let receiptDurability = ReceiptDurability(rawValue: durability) else {
            throw fail(UsageError("--durability \(durability): expected synced or page-cache"))
        }
        var objectStorage: ObjectStorage?
        if let store {
            // glibc raises its mmap threshold to the size of each large block freed, so the
            // object store's part buffers (8 MiB) soon come from the heap, and what the heap
            // grew by stays: a 1 GiB upload peaked at 95 MiB, 48 MiB with the threshold fixed.
            _ = cmultipart_fix_mmap_threshold(1 << 20)
            do {
                objectStorage = try ObjectStorage.fromEnvironment(uri: store, endpoint: s3Endpoint, region: s3Region, pathStyle: s3PathStyle)
                guard s3Lease >= 1, s3Lease <= 3600 else { throw UsageError("--s3-lease \(s3Lease): expected seconds between 1 and 3600") }
                objectStorage?.leaseDuration = .milliseconds(Int64(s3Lease * 1000))
                guard s3Sweep >= 1, s3Sweep <= 86_400 else { throw UsageError("--s3-sweep \(s3Sweep): expected seconds between 1 and 86400") }
                objectStorage?.sweepInterval = .milliseconds(Int64(s3Sweep * 1000))
                guard s3Memory >= 1, s3Memory <= 1 << 20 else { throw UsageError("--s3-memory \(s3Memory): expected MiB between 1 and 1048576") }
            } catch {
                throw fail(UsageError("--store \(store): \(error)"))
            }
        }
        if var checked = objectStorage {
            // Before any receiver is made: the form of If-Match the store takes is found here.
            do {
                try await checked.check()
                await checked.checkChecksums()
                // Resumable uploads and the events in the bucket take leases.
                if !noTus || !noResumable || eventHook != nil { try await checked.checkConditionalWrites() }
            } catch {
                Descriptor.standardError.print("formpost: --store \(store ?? ""): \(error)\n")
                throw ExitCode(Self.objectStoreUnavailableStatus)
            }
            objectStorage = checked
        }
        var configuration = ReceiverConfiguration(directory: dir, maxBodySize: bodyLimit, maxFileSize: fileLimit, maxParts: maxParts, storedFileMode: mode,
                                                  maxUploadsInProgress: maxUploadsInProgress, maxUploadsInProgressPerClient: maxUploadsInProgressPerClient,
                                                  maxBytesInProgressPerClient: bytesPerClient, idleUploadExpiry: .seconds(idleUploadExpiry), stateDirectory: stateDir, durability: receiptDurability, objectStorage: objectStorage)
        configuration.partMemory = PartMemoryBudget(limit: s3Memory << 20)
        guard resumableMaxLifetime >= 1, resumableMaxLifetime <= 315_360_000 else {
            throw fail(UsageError("--resumable-max-lifetime \(resumableMaxLifetime): expected seconds between 1 and ten years"))
        }
        configuration.resumableMaxLifetime = .milliseconds(Int64(resumableMaxLifetime * 1000))
        let receiver: UploadReceiver
        var delivery: UploadEventDelivery?
        do {
            if let eventHook {
                // In object storage the events wait in the bucket: a receiver killed with its
                // disk leaves them to the others.
                let directoryOutbox = stateDir.map { $0 + "/events" } ?? dir + "/.events"
                let outbox: any UploadEventQueue = try objectStorage.map { ObjectEventQueue(store: $0, maxCount: eventsMaxCount) }
                    ?? UploadEventOutbox(directory: directoryOutbox, maxCount: eventsMaxCount, maxBytes: eventsBytes)
                let stranded = objectStorage == nil ? 0 : ((try? FileManager.default.contentsOfDirectory(atPath: directoryOutbox)) ?? [])
                    .filter { !$0.hasPrefix(".") && $0.hasSuffix(".json") }.count
                if stranded > 0 {
                    Descriptor.standardError.print("formpost: \(stranded) events recorded without --store wait in \(directoryOutbox): with --store the events are posted from the bucket; serve once without --store to post those\n")
                }
                configuration.events = outbox
                // The receivers record every kind of event; those not asked for are dropped here.
                var eventDelivery = UploadEventDelivery(outbox: outbox) { event in
                    if events.contains(event.type) { try await eventHook.deliver(event) }
                }
                eventDelivery.maxAttempts = eventsMaxAttempts
                eventDelivery.maxAge = .milliseconds(Int64(eventsMaxAge * 1000))
                delivery = eventDelivery
            }
            receiver = try UploadReceiver(configuration: configuration)
        } catch {
            throw fail(UsageError("cannot use \(dir): \(error)"))
        }
        let tls: TLSConfiguration?
        switch (tlsCertificate, tlsKey) {
        case (nil, nil):
            tls = nil
        case (let certificate?, let key?):
            do {
                tls = try UploadServer.serverTLSConfiguration(certificateChainPath: certificate, privateKeyPath: key)
            } catch {
                throw fail(UsageError("--tls-cert/--tls-key: \(error)"))
            }
        default:
            throw fail(UsageError("--tls-cert and --tls-key go together"))
        }
        guard resumableExpiry > 0, resumableExpiry <= 315_360_000 else { throw fail(UsageError("--resumable-expiry \(resumableExpiry): expected seconds between 0 and ten years")) }
        for (option, path) in [("--tus-path", tusPath), ("--resumable-path", resumablePath)] where !path.hasPrefix("/") || path.count < 2 {
            throw fail(UsageError("\(option) \(path): expected a path below /"))
        }
        let nested = { (inner: String, outer: String) in inner == outer || inner.hasPrefix(outer.hasSuffix("/") ? outer : outer + "/") }
        guard noTus || noResumable || !(nested(tusPath, resumablePath) || nested(resumablePath, tusPath)) else {
            throw fail(UsageError("--tus-path \(tusPath) and --resumable-path \(resumablePath) must not lie one within the other"))
        }
        var tus: TusReceiver?
        var resumable: ResumableUploadReceiver?
        do {
            tus = noTus ? nil : try TusReceiver(configuration: configuration, basePath: tusPath, expiry: .seconds(resumableExpiry))
            resumable = noResumable ? nil : try ResumableUploadReceiver(receiver: receiver, basePath: resumablePath, expiry: .seconds(resumableExpiry))
        } catch let error as ReceiverSetupError {
            if case .stateDirectoryInUse = error {
                // Another server keeps its uploads there: exit 75 (EX_TEMPFAIL), nothing touched.
                Descriptor.standardError.print("formpost: \(error)\n")
                throw ExitCode(Self.stateDirectoryInUseStatus)
            }
            throw fail(UsageError("cannot keep resumable uploads in \(stateDir ?? dir): \(error)"))
        } catch {
            throw fail(UsageError("cannot keep resumable uploads in \(stateDir ?? dir): \(error)"))
        }
        if let killAtCompletionStep {
            guard let step = CompletionStep(rawValue: killAtCompletionStep) else { throw fail(UsageError("--kill-at-completion-step \(killAtCompletionStep): no such step")) }
            let fault: CompletionFault = { if $0 == step { kill(getpid(), SIGKILL) } }
            tus?.completionFault = fault
            resumable?.completionFault = fault
        }
        let directory = objectStorage.map {
            "s3://\($0.bucket)/\($0.prefix) at \($0.endpoint) (\($0.pathStyle ? "path-style" : "virtual-hosted")\(!noTus || !noResumable ? ", " + $0.conditionsReport : "")\($0.supportsTagging ? "" : ", no object tagging")\($0.checksumsParts ? ", CRC32 checksums of parts" : ""); credentials from \($0.credentialsSource))"
        } ?? dir
        let scheme = tls == nil ? "http" : "https"
        let page = noPage ? "" : "; an upload page is at /"
        let health = noHealth ? nil : ServerHealth(directory: dir, objectStorage: objectStorage)
        var server = UploadServer(receiver: receiver, host: host, port: port, tlsConfiguration: tls,
                                  connectionLimits: ConnectionLimits(idleTimeout: .seconds(idleTimeout), maxConnections: maxConnections,
                                                                    maxConnectionsPerAddress: maxConnectionsPerAddress), tus: tus,
                                  resumable: resumable, uploadPage: !noPage, health: health, uploadSigner: signer,
                                  metrics: metricsEndpoint)
        server.trustedProxies = trustedProxies
        server.crossOrigin = crossOrigin
        server.authorize = hook?.authorize
        // The server's own lines: prose on standard error, or in JSON a log message like the others.
        let inJSON = logFormat == "json"
        let announce: @Sendable (String) -> Void = { text in
            if inJSON {
                Logger(label: "formpost.serve").notice("\(text)")
            } else {
                Descriptor.standardError.print("formpost: \(text)\n")
            }
        }
        let app = try server.application { boundPort in
            announce("receiving on \(scheme)://\(host):\(boundPort)/, storing files in \(directory)\(page) (Ctrl-C stops)")
        }
        // SIGTERM or SIGINT: the listening socket closes, each connection ends after its
        // request in flight, for at most --shutdown-grace; then the rest are cancelled.
        let deliveries = delivery.map { [ServiceGroupConfiguration.ServiceConfiguration(service: EventDeliveryService(delivery: $0), successTerminationBehavior: .ignore)] } ?? []
        var group = ServiceGroupConfiguration(services: deliveries + [.init(service: app),
                                                                      .init(service: StopAnnouncement(grace: shutdownGrace, delay: shutdownDelay, health: health, announce: announce),
                                                                            successTerminationBehavior: .ignore, failureTerminationBehavior: .ignore)],
                                              gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger)
        group.maximumGracefulShutdownDuration = .milliseconds(Int64((shutdownDelay + shutdownGrace) * 1000))
        try await ServiceGroup(configuration: group).run()
    }
}
