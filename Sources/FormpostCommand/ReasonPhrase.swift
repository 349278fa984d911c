import NIOHTTP1

/// The standard reason phrase of a status code (`201` → `Created`), as curl prints it with
/// `-i` and `-v`.
enum ReasonPhrase {
    static func of(_ status: Int) -> String {
        HTTPResponseStatus(statusCode: status).reasonPhrase
    }
}
