#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The body of a hook's 2xx answer (``UploadAuthorizationHook``) that allows an upload with
/// a grant: `{"maxBytes": 1048576, "metadata": {"user": "42"}}`, both keys optional.
struct HookGrantAnswer: Decodable {
    var maxBytes: Int64?
    var metadata: [String: String]?

    /// What a 2xx answer with `body` decides: no JSON object (an empty body, text) allows
    /// the upload as it is; an object with neither key too; one with either allows it
    /// with that grant. Nil when the body is a JSON object that is no grant (a key of the
    /// wrong type, a negative `maxBytes`): a hook that meant to restrict the upload and
    /// said it wrongly does not let it through unrestricted.
    static func authorization(of body: [UInt8]) -> UploadAuthorization? {
        guard body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") else { return .allow }
        guard let answer = try? JSONDecoder().decode(HookGrantAnswer.self, from: Data(body)), (answer.maxBytes ?? 0) >= 0 else { return nil }
        let metadata = answer.metadata ?? [:]
        if answer.maxBytes == nil, metadata.isEmpty { return .allow }
        return .allowWith(UploadGrant(maxBytes: answer.maxBytes, metadata: metadata))
    }
}
