/// The body of an error response: `{"error": "…"}`.
package struct ErrorBody: Codable {
    package let error: String
}
