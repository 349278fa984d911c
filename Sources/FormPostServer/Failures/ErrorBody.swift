/// The body of an error response: `{"error": "…"}`.
struct ErrorBody: Codable {
    let error: String
}
