/// What an upload is to tus's concatenation (`Upload-Concat`): a partial upload, whose
/// bytes are stored only as part of a final upload, or the final upload that joins
/// partial uploads, in their order.
enum TusConcatenation: Codable, Equatable, Sendable {
    /// `Upload-Concat: partial`.
    case partial
    /// `Upload-Concat: final;URL URL…`: the IDs of the partial uploads joined.
    case final(partials: [String])

    /// The reading of an `Upload-Concat` field for uploads under `basePath`: `partial`, or
    /// `final;` and the partial uploads' URLs — absolute (`http://host/files/ID`, as
    /// tus-js-client sends them) or paths (`/files/ID`), a query ignored — separated by
    /// spaces; nil when it is neither, names no upload under `basePath`, names one twice,
    /// or none.
    init?(field: String, basePath: String) {
        if field == "partial" {
            self = .partial
            return
        }
        guard field.hasPrefix("final;") else { return nil }
        var partials: [String] = []
        for url in field.dropFirst("final;".count).split(separator: " ") {
            guard case .upload(let id) = UploadResourcePath(Self.path(of: url), basePath: basePath), !partials.contains(id) else { return nil }
            partials.append(id)
        }
        guard !partials.isEmpty else { return nil }
        self = .final(partials: partials)
    }

    /// The field for this upload, naming partial uploads by their paths under `basePath`.
    func field(basePath: String) -> String {
        switch self {
        case .partial: "partial"
        case .final(let partials): "final;" + partials.map { basePath + "/" + $0 }.joined(separator: " ")
        }
    }

    /// The path of `url`: what follows its authority when it has a scheme, else itself,
    /// without its query (a signed upload URL's token).
    private static func path(of url: Substring) -> String {
        let whole = url.firstIndex(of: "?").map { url[..<$0] } ?? url
        guard let scheme = whole.firstRange(of: "://") else { return String(whole) }
        let rest = whole[scheme.upperBound...]
        return rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? ""
    }
}
