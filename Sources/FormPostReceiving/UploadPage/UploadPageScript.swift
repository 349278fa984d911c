extension UploadPage {
    /// The page's script, inline in its `<script>` (allowed by its digest in the
    /// ``contentSecurityPolicy``): sends each chosen file as a resumable upload of the IETF
    /// draft, as ``UploadPage`` describes. No library, nothing loaded from elsewhere.
    static let script = scriptBeginning + "\n" + scriptEnd

    /// The script's first half: its constants, its state, and an upload's sending.
    private static let scriptBeginning = #"""

        "use strict";
        (() => {
          const $ = (id) => document.getElementById(id);
          const form = $("upload-form"), input = $("files"), zone = $("drop-zone"), list = $("file-list");
          const button = $("submit"), progress = $("progress"), progressText = $("progress-text");
          const status = $("status"), errorBox = $("error"), receipt = $("receipt");
          // A file from WHOLE_FILE bytes up is sent as the form's framing before it, then the file in
          // slices of the File itself (which Chromium sends from its path, faster than slices of the
          // whole form), then its last bytes with the framing after it. Anything else — a smaller
          // file's whole form, everything after a server refused the framing alone — goes in slices
          // of the form. Each
          // append is sized to take about APPEND_SECONDS at the pace of the one before, from
          // MIN_APPEND to MAX_APPEND bytes, and is acknowledged with the server's offset: a request
          // lost whole (a proxy that holds a body until it has all of it, then a reload or a dropped
          // network) costs at most MIN_APPEND bytes or APPEND_SECONDS of sending, whichever is more,
          // and appends stay few on a fast link. A request cut short loses nothing the server
          // received (it keeps every byte that reached its disk), but one a browser re-sends on its
          // own after a kept-alive connection failed is refused (409) only once all of it is sent.
          const WHOLE_FILE = 8 * 1024 * 1024;
          const MIN_APPEND = 16 * 1024 * 1024;
          const MAX_APPEND = 64 * 1024 * 1024;
          const APPEND_SECONDS = 2;
          // Files sent at once.
          const IN_FLIGHT = 3;
          // Seconds before each retry after a failure, the last repeated; past MAX_FAILURES failures
          // in a row (with no byte acknowledged between them) the file fails.
          const DELAYS = [1, 2, 4, 8, 16, 30];
          const MAX_FAILURES = 10;
          // A request that sends nothing and hears nothing for this long is given up and retried.
          const STALL_MS = 60000;
          const RECORD = "formpost-upload ";
          let uploads = [];
          let busy = false;
          // Whether the server takes resumable uploads, as it says in the page.
          const resumable = document.body.dataset.resumable !== "false";

          function formatSize(bytes) {
            const units = ["KiB", "MiB", "GiB", "TiB"];
            if (bytes < 1024) return bytes + (bytes === 1 ? " byte" : " bytes");
            let value = bytes / 1024, unit = 0;
            while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
            return value.toFixed(value < 10 ? 2 : 1) + " " + units[unit];
          }

          function element(tag, className, text) {
            const node = document.createElement(tag);
            if (className) node.className = className;
            if (text !== undefined) node.textContent = text;
            return node;
          }

          function cell(row, text, className) {
            const td = element("td", className, text);
            row.appendChild(td);
            return td;
          }

          // MARK: the uploads remembered across reloads, in localStorage

          function storage() {
            try { return window.localStorage; } catch (_) { return null; }
          }

          function recordKey(file) {
            return RECORD + JSON.stringify([location.origin + location.pathname, file.name, file.size, file.lastModified]);
          }

          function loadRecord(key) {
            const store = storage();
            if (!store) return null;
            try {
              const record = JSON.parse(store.getItem(key) || "null");
              return record && typeof record.url === "string" ? record : null;
            } catch (_) { return null; }
          }

          function saveRecord(key, record) {
            const store = storage();
            try { if (store) store.setItem(key, JSON.stringify(record)); } catch (_) { /* full or refused: the upload goes on, unremembered */ }
          }

          function forget(key) {
            const store = storage();
            try { if (store) store.removeItem(key); } catch (_) { /* nothing to forget */ }
          }

          function forgetExpired() {
            const store = storage();
            if (!store) return;
            const now = Date.now();
            for (let index = store.length - 1; index >= 0; index -= 1) {
              const key = store.key(index);
              if (!key || !key.startsWith(RECORD)) continue;
              const record = loadRecord(key);
              if (!record || !(record.expires > now)) forget(key);
            }
          }

          // A check of a file's content, for a file chosen again: a hash of its first and last MiB
          // and of 64 KiB at eight points between. A file of the same name, size and time whose
          // sampled bytes differ is not the file an upload began with.
          async function sampleOf(file) {
            const piece = 1 << 20, spot = 1 << 16, ranges = [[0, Math.min(piece, file.size)]];
            if (file.size > 2 * piece) {
              for (let index = 1; index <= 8; index += 1) {
                const start = Math.floor((file.size - spot) * index / 9);
                ranges.push([start, start + spot]);
              }
            }
            if (file.size > piece) ranges.push([Math.max(piece, file.size - piece), file.size]);
            let h1 = 0x9e3779b9 ^ file.size, h2 = 0x85ebca6b ^ Math.floor(file.size / 4294967296);
            for (const [start, end] of ranges) {
              const bytes = new Uint8Array(await file.slice(start, end).arrayBuffer());
              for (let index = 0; index < bytes.length; index += 1) {
                h1 = Math.imul(h1 ^ bytes[index], 2654435761);
                h2 = Math.imul(h2 ^ bytes[index], 1597334677);
              }
              h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ start;
              h2 = Math.imul(h2 ^ (h2 >>> 13), 3266489909) ^ end;
            }
            return (h1 >>> 0).toString(16).padStart(8, "0") + (h2 >>> 0).toString(16).padStart(8, "0");
          }

          // MARK: the form each file travels in

          function randomBoundary() {
            const bytes = new Uint8Array(12);
            crypto.getRandomValues(bytes);
            return "----FormPostPage" + Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
          }

          // Quotes, CR and LF in a name, escaped as browsers do in a form.
          const escapeName = (name) => name.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A");

          function textFields() {
            const fields = [];
            for (const [name, value] of new FormData(form)) {
              if (typeof value === "string") fields.push([name, value.replace(/\r\n|\r|\n/g, "\r\n")]);
            }
            return fields;
          }

          // The form of one file: the text fields, then the file as a part named as the file input.
          function formBody(plan, file) {
            let head = "";
            for (const [name, value] of plan.fields) {
              head += "--" + plan.boundary + "\r\nContent-Disposition: form-data; name=\"" + escapeName(name) + "\"\r\n\r\n" + value + "\r\n";
            }
            head += "--" + plan.boundary + "\r\nContent-Disposition: form-data; name=\"" + escapeName(plan.name) + "\"; filename=\""
              + escapeName(file.name) + "\"\r\nContent-Type: " + (file.type || "application/octet-stream") + "\r\n\r\n";
            const encoder = new TextEncoder();
            const headBytes = encoder.encode(head);
            const body = new Blob([headBytes, file, encoder.encode("\r\n--" + plan.boundary + "--\r\n")]);
            return { body, head: headBytes.length };
          }

          // MARK: requests

          class Failure extends Error {
            // final: the server's answer ends this file (no retry); gone: its upload no longer exists.
            constructor(message, { final = false, gone = false, retryAfter = 0 } = {}) {
              super(message);
              this.final = final;
              this.gone = gone;
              this.retryAfter = retryAfter;
            }
          }

          // What an answer says in words: its JSON error or problem, or its first characters.
          function answerText(status, text) {
            let answer = null;
            try { answer = JSON.parse(text); } catch (_) { answer = null; }
            let detail = "";
            if (answer && typeof answer.error === "string") detail = answer.error;
            else if (answer && (answer.detail || answer.title)) detail = String(answer.detail || answer.title);
            else detail = (text || "").slice(0, 300) || "the answer had no body";
            return "HTTP " + status + ": " + detail;
          }

          // One request by XMLHttpRequest; resolves with the XHR once answered, rejects with a
          // Failure when no answer came (network, abort, stall).
          function request(upload, method, url, headers, body) {
            return new Promise((resolve, reject) => {
              const xhr = new XMLHttpRequest();
              upload.xhr = xhr;
              let stall = 0, stalled = false;
              const watch = () => {
                clearTimeout(stall);
                stall = setTimeout(() => { stalled = true; xhr.abort(); }, STALL_MS);
              };
              xhr.open(method, url);
              for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
              if (body) {
                const start = upload.offset;
                xhr.upload.addEventListener("progress", (event) => {
                  watch();
                  upload.sent(start + event.loaded);
                });
              }
              const done = (failure) => () => {
                clearTimeout(stall);
                if (upload.xhr === xhr) upload.xhr = null;
                if (failure) reject(new Failure(stalled ? "nothing moved for " + STALL_MS / 1000 + " s" : failure));
                else resolve(xhr);
              };
              xhr.addEventListener("load", done(null));
              xhr.addEventListener("error", done("the connection failed before the server answered"));
              xhr.addEventListener("abort", done("the request was stopped"));
              xhr.addEventListener("timeout", done("the server did not answer in time"));
              watch();
              xhr.send(body || null);
            });
          }

          const retryable = (status) => status >= 500 || status === 408 || status === 409 || status === 423 || status === 429;

          function failureOf(xhr, what) {
            const message = what + " — " + answerText(xhr.status, xhr.responseText);
            const retryAfter = Math.min(Number(xhr.getResponseHeader("Retry-After")) || 0, 60);
            if (xhr.status === 404 || xhr.status === 410) return new Failure(message, { gone: true });
            if (retryable(xhr.status)) return new Failure(message, { retryAfter });
            return new Failure(message, { final: true });
          }

          // MARK: one file

          class Upload {
            constructor(file) {
              this.file = file;
              this.key = recordKey(file);
              this.state = "queued";
              this.offset = 0;          // bytes of the upload the server acknowledged
              this.head = 0;            // bytes of the form before the file's content
              this.url = null;
              this.failures = 0;
              this.retries = 0;
              this.paused = false;
              this.answer = null;
              this.xhr = null;
              this.speed = { at: 0, bytes: 0, rate: 0 };
              this.item = element("li");
              this.item.dataset.fileName = file.name;
              this.item.dataset.offset = "0";
              this.item.dataset.resumedFrom = "0";
              const name = element("span", "name", file.name);
              const size = element("span", "muted", formatSize(file.size));
              this.bar = element("progress");
              this.bar.max = Math.max(file.size, 1);
              this.bar.value = 0;
              this.bar.setAttribute("role", "progressbar");
              this.bar.setAttribute("aria-label", file.name);
              this.bar.setAttribute("aria-valuemin", "0");
              this.bar.setAttribute("aria-valuemax", String(file.size));
              this.bar.setAttribute("aria-valuenow", "0");
              this.note = element("span", "note muted");
              this.note.setAttribute("aria-live", "polite");
              this.toggle = element("button", "small", "Pause");
              this.toggle.type = "button";
              this.toggle.hidden = true;
              this.toggle.addEventListener("click", () => (this.paused ? this.resume() : this.pause()));
              const line = element("div", "line");
              line.append(name, size);
              const foot = element("div", "line");
              foot.append(this.note, this.toggle);
              this.item.append(line, this.bar, foot);
              this.setState("queued", "Queued");
            }

            // The file's bytes within the upload's bytes.
            fileBytes(offset) { return Math.max(0, Math.min(this.file.size, offset - this.head)); }

            setState(state, note) {
              this.state = state;
              this.item.dataset.state = state;
              if (note !== undefined) this.note.textContent = note;
              this.toggle.hidden = !["uploading", "waiting", "paused"].includes(state);
              if (state === "done") this.bar.value = this.bar.max;
              this.toggle.textContent = state === "paused" ? "Resume" : "Pause";
            }

            acknowledged(offset) {
              if (offset > this.offset) this.failures = 0;
              this.offset = offset;
              this.item.dataset.offset = String(this.fileBytes(offset));
              this.sent(offset);
            }

            // Progress: bytes of the upload sent (acknowledged or on their way).
            sent(offset) {
              const bytes = this.fileBytes(offset);
              this.bytesSent = bytes;
              this.bar.value = bytes;
              this.bar.setAttribute("aria-valuenow", String(bytes));
              const now = performance.now(), speed = this.speed;
              if (!speed.at || bytes < speed.bytes) { speed.at = now; speed.bytes = bytes; }
              else if (now - speed.at >= 500) {
                const rate = (bytes - speed.bytes) * 1000 / (now - speed.at);
                speed.rate = speed.rate ? 0.6 * speed.rate + 0.4 * rate : rate;
                speed.at = now;
                speed.bytes = bytes;
              }
              if (this.state === "uploading") {
                const percent = this.file.size > 0 ? Math.floor(100 * bytes / this.file.size) : 100;
                this.note.textContent = percent + " % — " + formatSize(bytes) + " of " + formatSize(this.file.size)
                  + (speed.rate ? " — " + formatSize(speed.rate) + "/s" : "");
              }
              overall();
            }

            pause() {
              if (!["uploading", "waiting", "queued"].includes(this.state)) return;
              this.paused = true;
              this.located = false;
              if (this.xhr) this.xhr.abort();
              if (this.wake) this.wake();
              this.setState("paused", "Paused at " + formatSize(this.fileBytes(this.offset)));
              pump();
            }

            resume() {
              if (!this.paused) return;
              this.paused = false;
              this.setState("queued", "Queued");
              pump();
            }

            // Sends the file: resumes the upload remembered for it, or creates one; appends until
            // the server holds every byte; retries after failures. Returns once done, failed or paused.
            async run() {
              this.setState("uploading", "Starting…");
              for (;;) {
                if (this.paused) return;
                try {
                  if (!this.plan) await this.prepare();
                  if (!this.url) await this.create();
                  else if (this.located !== true) await this.locate();
                  if (this.state === "done" || this.paused) return;
                  await this.append();
                  if (this.state === "done") return;
                } catch (failure) {
                  if (this.paused) return;
                  if (!(failure instanceof Failure)) failure = new Failure(String(failure && failure.message || failure));
                  if (failure.final) return this.fail(failure.message);
                  this.located = false;
                  if (failure.gone) {
                    // The upload expired or was removed: the file starts again from zero.
                    forget(this.key);
                    this.url = null;
                    this.offset = 0;
                  }
                  this.failures += 1;
                  if (this.failures > MAX_FAILURES) return this.fail(failure.message + " (gave up after " + MAX_FAILURES + " attempts)");
                  await this.backoff(failure);
                }
              }
        """#
}
