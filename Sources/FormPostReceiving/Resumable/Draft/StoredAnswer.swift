/// An answer kept to be given again: its status and JSON body.
struct StoredAnswer: Codable, Equatable, Sendable {
    var status: Int
    var json: String
}
