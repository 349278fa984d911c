import FormPostReceiving
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes

/// The verdict in the body of a hook's `2xx` answer (``UploadAuthorizationHook``): a JSON
/// object of these keys only —
///
/// - `{"allow": true}`, with optionally `"maxBytes": 1048576` (a byte limit, not negative)
///   and `"metadata": {"user": "42"}` (strings): the upload is allowed, with that
///   `UploadGrant` when either is there;
/// - `{"allow": false}`, with optionally `"status": 403` (400–499; 403 when absent) and
///   `"message": "…"`: the upload is refused with that status and message;
/// - with no `allow`, an object with `maxBytes` or `metadata` (the answer of earlier
///   versions, which had no `allow`) allows the upload with that grant.
///
/// Anything else is no verdict: an empty body, text, HTML, a JSON array or string, `{}`, an
/// object with a key not listed or a value of the wrong type, `status`/`message` beside
/// `"allow": true`, `maxBytes`/`metadata` beside `"allow": false`.
struct HookVerdict: Decodable {
    var allow: Bool?
    var maxBytes: Int64?
    var metadata: [String: String]?
    var status: Int?
    var message: String?

    /// What a refusal says when the hook gives no message.
    static let defaultRefusal = "The upload was not authorized."

    /// Any key of a JSON object, to find those not listed.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static let keys: Set<String> = ["allow", "maxBytes", "metadata", "status", "message"]

    init(from decoder: any Decoder) throws {
        let object = try decoder.container(keyedBy: AnyKey.self)
        if let unknown = object.allKeys.first(where: { !Self.keys.contains($0.stringValue) }) {
            throw DecodingError.dataCorrupted(.init(codingPath: [unknown], debugDescription: "no key \(unknown.stringValue) in a verdict"))
        }
        allow = try object.decodeIfPresent(Bool.self, forKey: AnyKey(stringValue: "allow"))
        maxBytes = try object.decodeIfPresent(Int64.self, forKey: AnyKey(stringValue: "maxBytes"))
        metadata = try object.decodeIfPresent([String: String].self, forKey: AnyKey(stringValue: "metadata"))
        status = try object.decodeIfPresent(Int.self, forKey: AnyKey(stringValue: "status"))
        message = try object.decodeIfPresent(String.self, forKey: AnyKey(stringValue: "message"))
    }

    /// What a `2xx` answer with `body` decides; nil when it holds no verdict.
    static func authorization(of body: [UInt8]) -> UploadAuthorization? {
        guard body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{"),
              let verdict = try? JSONDecoder().decode(HookVerdict.self, from: Data(body)) else { return nil }
        let grants = verdict.maxBytes != nil || verdict.metadata != nil
        let refuses = verdict.status != nil || verdict.message != nil
        switch verdict.allow {
        case false?:
            guard !grants else { return nil }
            let status = verdict.status ?? 403
            guard (400..<500).contains(status) else { return nil }
            return .deny(status: HTTPResponse.Status(code: status), message: verdict.message ?? defaultRefusal)
        case true?, nil:
            guard !refuses, verdict.allow == true || grants, (verdict.maxBytes ?? 0) >= 0 else { return nil }
            let metadata = verdict.metadata ?? [:]
            if verdict.maxBytes == nil, metadata.isEmpty { return .allow }
            return .allowWith(UploadGrant(maxBytes: verdict.maxBytes, metadata: metadata))
        }
    }
}
