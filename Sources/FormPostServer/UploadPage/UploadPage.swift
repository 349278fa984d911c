import FormPostDigests
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Hummingbird

/// The page ``UploadServer`` answers at `GET /`: a form to upload files from a browser to
/// the receiver on the same origin, with nothing loaded from elsewhere.
///
/// Its form (a text field `title`, files chosen or dropped on the drop zone as `files`) is
/// sent by `XMLHttpRequest` with a progress bar; the receipt the receiver answers is shown
/// as a table (field, filename, size, SHA-256), an error answer (`{"error": …}`) as a
/// message with its status. A second form is plain HTML, sent by the browser itself, which
/// then shows the receipt's JSON. Everything the server sends back is put into the page as
/// text, never as markup.
///
/// Element ids, for tests and scripts: `upload-form`, `title`, `files`, `drop-zone`,
/// `file-list`, `submit`, `progress`, `progress-text`, `status`, `error`, `receipt`,
/// `receipt-fields`, `receipt-files` (each file's row has `data-bytes` with its exact
/// size), `receipt-json` (hidden: the receipt as the server answered it); the plain form
/// `plain-form`, `plain-title`, `plain-files`, `plain-submit`. The body's `data-state`
/// is `idle`, `uploading`, `done` or `failed`.
public enum UploadPage {
    /// The page: HTML with its style and script inline, UTF-8.
    public static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>FormPost upload</title>
        <link rel="icon" href="data:,">
        <style>\(style)</style>
        </head>
        <body data-state="idle">
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

    /// The `Content-Security-Policy` the page is served with: its own inline style and
    /// script (by their SHA-256) and requests to its own origin only.
    public static let contentSecurityPolicy = "default-src 'none'; style-src '\(digest(of: style))'; script-src '\(digest(of: script))'; "
        + "connect-src 'self'; form-action 'self'; img-src data:; base-uri 'none'; frame-ancestors 'none'"

    /// The answer to `GET /` (or, with `head`, to `HEAD /`: the same head, no body).
    static func response(head: Bool) -> Response {
        let headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-cache",
            .contentSecurityPolicy: contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
        ]
        let response = Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
        return head ? response.createHeadResponse() : response
    }

    private static func digest(of text: String) -> String {
        "sha256-" + Data(SHA256Hasher.digest(of: Array(text.utf8))).base64EncodedString()
    }

    private static let style = #"""

        :root { color-scheme: light dark; --accent: #2563eb; --line: #8884; --soft: #8881; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
        main { max-width: 56rem; margin: 0 auto; padding: 1.5rem; }
        h1 { margin: 0 0 .25rem; font-size: 1.6rem; }
        h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
        .lead, .muted { color: #888; }
        .lead { margin-top: 0; }
        form { display: grid; gap: .4rem; }
        label { font-weight: 600; margin-top: .4rem; }
        input[type=text] { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 6px; }
        .drop-zone { border: 2px dashed var(--line); border-radius: 10px; padding: 1.4rem; text-align: center; color: #888; cursor: pointer; }
        .drop-zone.over { border-color: var(--accent); background: #2563eb1a; color: inherit; }
        .file-list { list-style: none; margin: 0; padding: 0; }
        .file-list li { display: flex; justify-content: space-between; gap: 1rem; padding: .2rem .4rem; border-bottom: 1px solid var(--soft); }
        .actions { display: flex; align-items: center; gap: .8rem; margin-top: .6rem; flex-wrap: wrap; }
        button { font: inherit; font-weight: 600; padding: .5rem 1.2rem; border: 0; border-radius: 6px; background: var(--accent); color: #fff; cursor: pointer; }
        button:disabled { opacity: .5; cursor: default; }
        progress { width: 16rem; height: .9rem; }
        .error { border: 1px solid #dc2626; background: #dc26261a; border-radius: 8px; padding: .7rem 1rem; margin: 1rem 0; }
        .error strong { color: #dc2626; display: block; }
        table { border-collapse: collapse; width: 100%; margin-bottom: 1rem; }
        caption { text-align: left; font-weight: 600; padding: .3rem 0; }
        th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        td.size { white-space: nowrap; text-align: right; }
        td.digest { font: 12px/1.5 ui-monospace, "SFMono-Regular", Menlo, monospace; word-break: break-all; }
        td.name { word-break: break-word; }
        .plain { margin-top: 2rem; padding-top: .5rem; border-top: 1px solid var(--line); }

        """#

    private static let script = #"""

        "use strict";
        (() => {
          const $ = (id) => document.getElementById(id);
          const form = $("upload-form"), input = $("files"), zone = $("drop-zone"), list = $("file-list");
          const button = $("submit"), progress = $("progress"), progressText = $("progress-text");
          const status = $("status"), errorBox = $("error"), receipt = $("receipt");
          let busy = false;

          function formatSize(bytes) {
            const units = ["KiB", "MiB", "GiB", "TiB"];
            if (bytes < 1024) return bytes + (bytes === 1 ? " byte" : " bytes");
            let value = bytes / 1024, unit = 0;
            while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
            return value.toFixed(value < 10 ? 2 : 1) + " " + units[unit];
          }

          function cell(row, text, className) {
            const td = document.createElement("td");
            td.textContent = text;
            if (className) td.className = className;
            row.appendChild(td);
            return td;
          }

          function showSelection() {
            list.replaceChildren();
            for (const file of input.files) {
              const item = document.createElement("li");
              const name = document.createElement("span");
              name.textContent = file.name;
              const size = document.createElement("span");
              size.className = "muted";
              size.textContent = formatSize(file.size);
              item.append(name, size);
              list.appendChild(item);
            }
          }

          function addFiles(files) {
            const transfer = new DataTransfer();
            for (const file of input.files) transfer.items.add(file);
            for (const file of files) transfer.items.add(file);
            input.files = transfer.files;
            showSelection();
          }

          input.addEventListener("change", showSelection);
          zone.addEventListener("click", () => input.click());
          zone.addEventListener("keydown", (event) => {
            if (event.key === "Enter" || event.key === " ") { event.preventDefault(); input.click(); }
          });
          for (const type of ["dragenter", "dragover"]) {
            zone.addEventListener(type, (event) => {
              event.preventDefault();
              if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
              zone.classList.add("over");
            });
          }
          zone.addEventListener("dragleave", () => zone.classList.remove("over"));
          zone.addEventListener("drop", (event) => {
            event.preventDefault();
            zone.classList.remove("over");
            if (event.dataTransfer && event.dataTransfer.files.length > 0) addFiles(event.dataTransfer.files);
          });
          // A file dropped beside the drop zone and the file inputs is ignored: the browser
          // would otherwise leave the page to show it.
          const elsewhere = (event) => !zone.contains(event.target) && !(event.target instanceof HTMLInputElement && event.target.type === "file");
          window.addEventListener("dragover", (event) => {
            if (!elsewhere(event)) return;
            event.preventDefault();
            if (event.dataTransfer) event.dataTransfer.dropEffect = "none";
          });
          window.addEventListener("drop", (event) => { if (elsewhere(event)) event.preventDefault(); });

          function setState(state, message) {
            document.body.dataset.state = state;
            status.textContent = message;
          }

          function showError(title, detail) {
            errorBox.replaceChildren();
            const heading = document.createElement("strong");
            heading.textContent = title;
            const text = document.createElement("span");
            text.textContent = detail;
            errorBox.append(heading, text);
            errorBox.hidden = false;
            setState("failed", "The upload failed.");
          }

          function showReceipt(answer, raw) {
            const files = receipt.querySelector("#receipt-files tbody");
            const fields = receipt.querySelector("#receipt-fields tbody");
            files.replaceChildren();
            fields.replaceChildren();
            for (const file of answer.files) {
              const row = files.insertRow();
              row.dataset.bytes = String(file.size);
              cell(row, file.name, "name");
              cell(row, file.filename, "name");
              cell(row, formatSize(file.size), "size").title = file.size + " bytes";
              cell(row, file.sha256, "digest");
            }
            for (const field of answer.fields) {
              const row = fields.insertRow();
              cell(row, field.name, "name");
              cell(row, field.value, "name");
            }
            $("receipt-fields").hidden = answer.fields.length === 0;
            $("receipt-json").textContent = raw;
            receipt.hidden = false;
            const total = answer.files.reduce((sum, file) => sum + file.size, 0);
            setState("done", "Stored " + answer.files.length + (answer.files.length === 1 ? " file" : " files")
              + " (" + formatSize(total) + ") and " + answer.fields.length + (answer.fields.length === 1 ? " field." : " fields."));
          }

          function finish(xhr) {
            busy = false;
            button.disabled = false;
            let answer = null;
            try { answer = JSON.parse(xhr.responseText); } catch (_) { answer = null; }
            if (xhr.status >= 200 && xhr.status < 300 && answer && Array.isArray(answer.files) && Array.isArray(answer.fields)) {
              showReceipt(answer, xhr.responseText);
            } else if (answer && typeof answer.error === "string") {
              showError("The server refused the upload (HTTP " + xhr.status + ")", answer.error);
            } else {
              const text = (xhr.responseText || "").slice(0, 500);
              showError("Unexpected answer (HTTP " + xhr.status + ")", text || "The answer had no body.");
            }
          }

          form.addEventListener("submit", (event) => {
            event.preventDefault();
            if (busy) return;
            busy = true;
            button.disabled = true;
            errorBox.hidden = true;
            receipt.hidden = true;
            progress.max = 1;
            progress.value = 0;
            progressText.textContent = "";
            setState("uploading", "Uploading…");
            const xhr = new XMLHttpRequest();
            xhr.open("POST", window.location.pathname + window.location.search);
            xhr.setRequestHeader("Accept", "application/json");
            xhr.upload.addEventListener("progress", (progressEvent) => {
              if (!progressEvent.lengthComputable) return;
              progress.max = progressEvent.total;
              progress.value = progressEvent.loaded;
              const percent = progressEvent.total > 0 ? Math.floor(100 * progressEvent.loaded / progressEvent.total) : 100;
              progressText.textContent = percent + " % — " + formatSize(progressEvent.loaded) + " of " + formatSize(progressEvent.total);
            });
            xhr.upload.addEventListener("load", () => { status.textContent = "Sent; waiting for the receipt…"; });
            xhr.addEventListener("load", () => finish(xhr));
            const lost = (why) => () => {
              busy = false;
              button.disabled = false;
              showError("The upload did not complete", why);
            };
            xhr.addEventListener("error", lost("The connection failed before the server answered."));
            xhr.addEventListener("abort", lost("The upload was aborted."));
            xhr.addEventListener("timeout", lost("The server did not answer in time."));
            xhr.send(new FormData(form));
          });
        })();

        """#
}
