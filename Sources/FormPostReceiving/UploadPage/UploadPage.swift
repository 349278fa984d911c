import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HTTPTypes
import NIOCore

/// The page `UploadServer` answers at `GET /`: a form to upload files from a browser to
/// the receiver on the same origin, with nothing loaded from elsewhere.
///
/// Its script sends each chosen (or dropped) file as a resumable upload of the IETF draft
/// (``ResumableUploadReceiver``), as a form of its own: the form's text fields, then the
/// file as a part named `files` — the receipt the server keeps for it is the one a
/// multipart request would have had. An upload is created by an empty `POST` to the page's
/// URL (`Upload-Complete: ?0`, `Upload-Length`), and appended to by `PATCH` requests, the
/// last with `Upload-Complete: ?1`: a file from 8 MiB up as the form's framing, slices of
/// the `File` (which the browser sends from its path) and the framing after it; a smaller
/// file's form in slices. Each append is sized to take about 2 s at the pace of the one
/// before, from 16 to 64 MiB: a request lost whole — through a proxy that holds bodies
/// until they are whole, then a reload — costs at most 16 MiB or about 2 s of sending,
/// whichever is more, never the file from zero. At most three files are sent at once;
/// each shows its progress, speed and state, and can be paused and resumed. After a
/// failure (no answer, a 5xx, 409, 423 or 429) the file waits — 1, 2, 4, 8, 16, then 30 s,
/// the delay counted down on the page, longer when the server's `Retry-After` says so —
/// asks the server its offset (`HEAD`) and goes on from there; it fails after 10 failures
/// in a row with no byte acknowledged between them, and at once on the server's refusal
/// (its words shown). While the browser is offline, uploads wait for it to be online again
/// instead of retrying. Each upload's URL is kept in `localStorage` under the file's name,
/// size, last-modified time and the page's origin and path, with a hash of its first and
/// last MiB and of eight 64 KiB pieces between: the same file chosen again after a reload
/// resumes from the server's offset, while a file whose sampled bytes differ starts a new
/// upload (the old one is deleted); a file resumed keeps the text fields it began with.
/// Finished, refused, missing and expired uploads are forgotten. When the server takes no resumable uploads (the body's `data-resumable` is
/// `false`), or no file is chosen, the form is sent in one `XMLHttpRequest`.
///
/// The form also works without script: the browser then sends it itself and shows the
/// receipt's JSON; so does the second, plain form. Everything the server sends back is put
/// into the page as text, never as markup.
///
/// The document's contract, for tests and scripts:
/// - the form `upload-form`, its text field `title`, the file input `files`, the drop zone
///   `drop-zone`, the start button `submit`, the overall `progress` and `progress-text`,
///   `status`, `error` (what failed, in words), `receipt` with the tables `receipt-files`
///   (each row's `data-bytes` holds its file's exact size) and `receipt-fields`, and
///   `receipt-json` (hidden: the receipt as JSON, `{"fields", "files"}`, the files of every
///   stored upload in order); the plain form `plain-form`, `plain-title`, `plain-files`,
///   `plain-submit`. The body's `data-state` is `idle`, `uploading`, `done` or `failed`.
/// - in `file-list`, one `li` per chosen file, its `data-file-name` the file's name, and:
///   `data-state` — `queued`, `uploading`, `paused`, `waiting` (for a retry, or for the
///   network: `data-waiting-for` is then `retry` or `online`), `done` or `failed`;
///   `data-offset` — the file's bytes the server has acknowledged; `data-resumed-from` —
///   the file's bytes already on the server when this page began the file (0 for a new
///   upload); `data-retries` — retries made so far; once done, `data-sha256` — the SHA-256
///   the server computed. Its `progress` element has `role="progressbar"` and
///   `aria-valuenow` (bytes sent); its button pauses and resumes.
public enum UploadPage {
    /// The page: HTML with its style and script inline, UTF-8, for a server that takes
    /// resumable uploads of the IETF draft.
    public static let html = html(resumable: true)

    /// The page for a server that takes resumable uploads (`data-resumable` on its body),
    /// or not: its script then sends the whole form in one request.
    static func html(resumable: Bool) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>FormPost upload</title>
        <link rel="icon" href="data:,">
        <style>\(style)</style>
        </head>
        <body data-state="idle" data-resumable="\(resumable)">
        <main>
        <h1>Upload files</h1>
        <p class="lead">Files are stored by the server under random names, with their SHA-256; the receipt lists what arrived.</p>
        <form id="upload-form" method="post" enctype="multipart/form-data">
          <label for="title">Title</label>
          <input id="title" name="title" type="text" autocomplete="off" placeholder="A few words about the files">
          <label for="files">Files</label>
          <input id="files" name="files" type="file" multiple>
          <div id="drop-zone" class="drop-zone" tabindex="0" role="button">Drop files here, or click to choose them</div>
          <ul id="file-list" class="file-list"></ul>
          <div class="actions">
            <button id="submit" type="submit">Upload</button>
            <progress id="progress" max="1" value="0"></progress>
            <span id="progress-text" class="muted"></span>
          </div>
        </form>
        <p id="status" class="muted" role="status"></p>
        <div id="error" class="error" role="alert" hidden></div>
        <section id="receipt" hidden>
          <h2>Receipt</h2>
          <table id="receipt-files">
            <caption>Files</caption>
            <thead><tr><th scope="col">Field</th><th scope="col">Filename</th><th scope="col">Size</th><th scope="col">SHA-256</th></tr></thead>
            <tbody></tbody>
          </table>
          <table id="receipt-fields">
            <caption>Text fields</caption>
            <thead><tr><th scope="col">Field</th><th scope="col">Value</th></tr></thead>
            <tbody></tbody>
          </table>
          <pre id="receipt-json" hidden></pre>
        </section>
        <section class="plain">
          <h2>Without JavaScript</h2>
          <p class="muted">The browser sends this form itself and shows the receipt as JSON.</p>
          <form id="plain-form" method="post" enctype="multipart/form-data">
            <label for="plain-title">Title</label>
            <input id="plain-title" name="title" type="text" autocomplete="off">
            <label for="plain-files">Files</label>
            <input id="plain-files" name="files" type="file" multiple>
            <div class="actions"><button id="plain-submit" type="submit">Upload without JavaScript</button></div>
          </form>
        </section>
        </main>
        <script>\(script)</script>
        </body>
        </html>

        """
    }

    /// The `Content-Security-Policy` the page is served with: its own inline style and
    /// script (by their SHA-256) and requests to its own origin only.
    public static let contentSecurityPolicy = "default-src 'none'; style-src '\(digest(of: style))'; script-src '\(digest(of: script))'; "
        + "connect-src 'self'; form-action 'self'; img-src data:; base-uri 'none'; frame-ancestors 'none'"

    /// The page as an answer (with `head`, to a `HEAD`: the same head, no body), for a
    /// server that takes resumable uploads of the IETF draft on the page's own path
    /// (`resumable`) or forms alone there. Its script sends to the URL it was loaded from:
    /// serve it on the path the receiver answers `POST` on.
    public static func response(head: Bool = false, resumable: Bool = true) -> ReceiverResponse {
        let headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-cache",
            .contentSecurityPolicy: contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
        ]
        let response = ReceiverResponse(status: .ok, headers: headers, body: ByteBuffer(string: resumable ? html : withoutResumable))
        return head ? response.forHead() : response
    }

    private static let withoutResumable = html(resumable: false)

    private static func digest(of text: String) -> String {
        "sha256-" + Data(SHA256Hasher.digest(of: Array(text.utf8))).base64EncodedString()
    }
}
