import HTTPTypes
import NIOCore
import ResumableHTTP

/// Which requests can begin an upload, and by which protocol: a `POST` or `PUT` anywhere
/// but on an existing upload resource (`tusBasePath/ID`, `resumableBasePath/ID`). A tus
/// creation is one on the tus base path; one that asks for a resumable upload of the IETF
/// draft (`Upload-Complete`) is the draft's; every other is a multipart form. Requests on
/// an existing upload resource go on with an upload that was allowed when it began.
struct UploadBeginning: Sendable {
    let tusBasePath: String?
    let resumableBasePath: String?

    /// The protocol by which `request` begins an upload, or nil when it cannot begin one.
    func uploadProtocol(of request: ReceiverRequest) -> UploadProtocol? {
        guard request.method == .post || request.method == .put else { return nil }
        let path = request.path
        if [tusBasePath, resumableBasePath].contains(where: { base in base.map { path.hasPrefix($0 + "/") } ?? false }) { return nil }
        if let tusBasePath, path == tusBasePath { return .tus }
        if resumableBasePath != nil, path == resumableBasePath || DraftInterop.asksForResumableUpload(request.headers) { return .ietf }
        return .multipart
    }
}
