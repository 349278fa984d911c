/// Why object storage could not be used.
public enum ObjectStorageError: Error, Equatable, CustomStringConvertible {
    /// Not `s3://BUCKET` or `s3://BUCKET/PREFIX` with a valid bucket name.
    case invalidURI(String)
    /// No access key and secret in the environment, nor in the credentials file's profile.
    case noCredentials
    /// The store answered `status` (with S3's error `code` and `message`, when it sent them)
    /// to the request made for `what`.
    case refused(what: String, status: Int, code: String?, message: String?)
    /// The store could not be reached, or its connection failed, for `what`.
    case unreachable(what: String, detail: String)
    /// The credentials could not be had, or renewed, from `source` (a role's, the container's,
    /// the instance's): `detail` says why.
    case credentialsUnavailable(source: String, detail: String)
    /// The CA certificates to trust for the store's and STS's TLS connections (`AWS_CA_BUNDLE`,
    /// else the profile's `ca_bundle`) could not be read from the file at `path`: `detail` says
    /// why, and which of the two named it.
    case unreadableCABundle(path: String, detail: String)

    /// The failure, as a sentence.
    public var description: String {
        switch self {
        case .invalidURI(let uri):
            return "\(uri) is not an object store: expected s3://BUCKET or s3://BUCKET/PREFIX, the bucket's name of 3 to 63 lower-case letters, digits, dots and hyphens"
        case .noCredentials:
            return "no credentials for the object store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with ~/.aws/credentials"
        case .refused(let what, let status, let code, let message):
            let detail = [code, message].compactMap { $0 }.joined(separator: ": ")
            return "the object store answered \(status) to \(what)" + (detail.isEmpty ? "" : " (\(detail))")
        case .unreachable(let what, let detail):
            return "the object store could not be reached for \(what): \(detail)"
        case .credentialsUnavailable(let source, let detail):
            return "no credentials for the object store from \(source): \(detail)"
        case .unreadableCABundle(let path, let detail):
            return "the CA bundle \(path) gives no CA certificates for TLS: \(detail)"
        }
    }

    /// Whether sending the same request again may succeed: a store busy (429, S3's
    /// `SlowDown`, another throttling code) or failing for a moment (500, 502, 503, 504,
    /// `InternalError`, a request timeout: 408, S3's `RequestTimeout`), a connection that
    /// failed, credentials that could not be renewed just now.
    package var isTransient: Bool {
        switch self {
        case .refused(_, let status, let code, _):
            if let code, Self.transientCodes.contains(code) { return true }
            return [408, 429, 500, 502, 503, 504].contains(status)
        case .unreachable, .credentialsUnavailable: return true
        case .invalidURI, .noCredentials, .unreadableCABundle: return false
        }
    }

    /// The codes of a store busy or failing for a moment, whatever the status: AWS's
    /// throttling codes, `InternalError` and request timeouts.
    package static let transientCodes: Set<String> = throttlingCodes.union(["RequestTimeout", "RequestTimeoutException", "InternalError"])

    /// The codes with which AWS's services say they are busy (throttling requests).
    package static let throttlingCodes: Set<String> = [
        "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException", "TooManyRequestsException",
        "ProvisionedThroughputExceededException", "TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
        "LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete", "EC2ThrottledException",
    ]

    /// Whether the store says a multipart upload is not there (`NoSuchUpload`), or not with
    /// the parts named (`InvalidPart`): aborted, or its parts gone.
    package var isLostMultipartUpload: Bool {
        guard case .refused(_, _, let code, _) = self else { return false }
        return code == "NoSuchUpload" || code == "InvalidPart"
    }

    /// The status the store answered, or nil when it gave none.
    package var status: Int? {
        if case .refused(_, let status, _, _) = self { return status }
        return nil
    }

    /// Whether the store refused a conditional write because its condition did not hold:
    /// 412, or 409 (S3's `ConditionalRequestConflict`, two conditional writes at once).
    package var isConditionFailure: Bool {
        status == 412 || status == 409
    }
}
