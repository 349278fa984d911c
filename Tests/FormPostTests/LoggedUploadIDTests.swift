@testable import FormPostHooks
@testable import FormPostReceiving
@testable import FormPostS3
@testable import FormPostServer
import Testing

/// No log line holds a whole upload ID, the capability to go on with the upload where signed
/// URLs are off: paths and error texts name an upload by its first 8 hex digits.
@Suite("Upload IDs in logs")
struct LoggedUploadIDTests {
    static let id = "0123456789abcdef0123456789abcdef"

    @Test("a request's logged path cuts each upload ID to 8 hex digits; other segments stay as they came")
    func loggedPath() {
        #expect(ReceiverRequest(method: .patch, path: "/files/" + Self.id).loggedPath == "/files/01234567…")
        #expect(ReceiverRequest(method: .patch, path: "/uploads/" + Self.id + "/x").loggedPath == "/uploads/01234567…/x")
        #expect(ReceiverRequest(method: .post, path: "/upload").loggedPath == "/upload")
        #expect(ReceiverRequest(method: .post, path: "/files/" + Self.id.uppercased()).loggedPath == "/files/" + Self.id.uppercased())
    }

    @Test("an error's text (an object's key, a state's path) has each upload ID cut; longer or shorter hex runs stay")
    func redacting() {
        let key = "shared/.tus/" + Self.id + ".info"
        #expect(RequestLogLine.redacting("saving the upload \(Self.id) failed: PUT \(key) answered 500")
            == "saving the upload 01234567… failed: PUT shared/.tus/01234567….info answered 500")
        let longer = Self.id + "ab"
        #expect(RequestLogLine.redacting("etag \(longer) and 0123abcd") == "etag \(longer) and 0123abcd")
        #expect(!RequestLogLine.redacting("a \(Self.id)\(".")\(Self.id)").contains(Self.id))
    }
}
