import Multipart

/// Something that happened to an upload, told to an application after the fact, at least
/// once (see ``UploadEventOutbox``). As `formpost serve --hook-events post-finish` posts it,
/// for `curl -F t=x -F f=@a.txt` (`a.txt` holding `hi` and a newline):
///
/// ```json
/// {"id":"00001795741954768621839-a871936f787032b5","type":"post-finish","upload":{"client":"127.0.0.1","method":"POST","path":"/upload","protocol":"multipart","receipt":{"fields":[{"name":"t","value":"x"}],"files":[{"contentType":"text/plain","filename":"a.txt","name":"f","sha256":"98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4","size":3,"storedAs":"037d952d9e6b44b58a78671b685cc4a3"}]}}}
/// ```
///
/// ``id`` is the same on every delivery of one event: an application that must act once
/// keeps the ids it has acted on.
///
/// An event is held to ``UploadEventOutbox/maxEventBytes`` of JSON (256 KiB by default): a
/// larger one — a form of thousands of files or long values — is summarised
/// (``summarised(within:)``), its receipt listing its first files and fields only, long
/// texts cut, and `upload.truncated` giving the whole upload's counts:
/// `"truncated":{"fields":3000,"files":5000,"metadata":0}`.
public struct UploadEvent: Codable, Equatable, Sendable {
    /// The upload the event is about.
    public struct Upload: Codable, Equatable, Sendable {
        /// How the upload was sent.
        public let `protocol`: UploadProtocol
        /// The request's method.
        public let method: String
        /// The request's path, without its query.
        public let path: String
        /// The client's address (as ``TrustedProxies`` tell it), or nil when unknown.
        public let client: String?
        /// What was stored: the receipt the client was answered.
        public let receipt: Receipt
        /// The metadata the upload's authorization granted (``UploadGrant/metadata``), or
        /// nil when it granted none (absent from the JSON then).
        public let metadata: [String: String]?
        /// How large the upload's description was when the event had to be summarised to
        /// fit ``UploadEventOutbox/maxEventBytes`` (``UploadEvent/summarised(within:)``);
        /// nil, and absent from the JSON, when it is whole.
        public let truncated: Truncation?

        /// Creates the description of an upload.
        public init(protocol: UploadProtocol, method: String, path: String, client: String?, receipt: Receipt, metadata: [String: String]? = nil,
                    truncated: Truncation? = nil) {
            self.protocol = `protocol`
            self.method = method
            self.path = path
            self.client = client
            self.receipt = receipt
            self.metadata = metadata
            self.truncated = truncated
        }
    }

    /// The event's identifier, unique, the same on each of its deliveries; outbox names sort by it.
    public let id: String
    /// What happened: ``postFinish``, the upload is stored and its receipt answered; or
    /// ``postTerminate``, its client ended it.
    public let type: String
    /// The upload.
    public let upload: Upload

    /// Creates an event.
    public init(id: String, type: String, upload: Upload) {
        self.id = id
        self.type = type
        self.upload = upload
    }

    /// The type of an event recorded before an upload's receipt is answered.
    public static let postFinish = "post-finish"
    /// The type of an event recorded when a client ends a resumable upload (`DELETE`),
    /// before the upload is removed and the end answered; its receipt names what the upload
    /// had stored, if it was complete.
    public static let postTerminate = "post-terminate"
}
