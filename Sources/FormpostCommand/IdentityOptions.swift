import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FormPost

/// Who the request says it comes from, with curl's options: `-u user:password` (HTTP Basic)
/// and `-A`/`--user-agent`.
struct IdentityOptions: ParsableArguments {
    @Option(name: [.customShort("u"), .customLong("user")], help: "HTTP Basic credentials, user:password (dropped on redirects to other origins).")
    var user: String?
    @Option(name: [.customShort("A"), .customLong("user-agent")], help: "The User-Agent to send (default formpost/VERSION).")
    var userAgent: String?

    /// The header fields these options add, replacing defaults of the same name.
    func headers() throws -> HTTPFields {
        var fields: HTTPFields = [:]
        if let user {
            guard let colon = user.firstIndex(of: ":") else {
                throw UsageError("-u \(user): expected user:password (formpost does not prompt for a password)")
            }
            let credentials = "\(user[..<colon]):\(user[user.index(after: colon)...])"
            fields[.authorization] = "Basic " + Data(credentials.utf8).base64EncodedString()
        }
        if let userAgent { fields[.userAgent] = userAgent }
        return fields
    }
}
