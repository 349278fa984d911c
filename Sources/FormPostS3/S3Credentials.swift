#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The credentials requests to S3-compatible object storage are signed with: an access key,
/// its secret, the session token of temporary credentials, and when those expire.
package struct S3Credentials: Sendable, Equatable {
    /// `AWS_ACCESS_KEY_ID`.
    package var accessKeyID: String
    /// `AWS_SECRET_ACCESS_KEY`.
    package var secretAccessKey: String
    /// `AWS_SESSION_TOKEN`: sent as `x-amz-security-token` (and signed) when present.
    package var sessionToken: String?
    /// When temporary credentials stop being accepted; nil for long-term keys.
    package var expiration: Date?

    package init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, expiration: Date? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }
}
