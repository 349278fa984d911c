extension UploadPage {
    /// The page's script, inline in its `<script>` (allowed by its digest in the
    /// ``contentSecurityPolicy``): sends each chosen file as a resumable upload of the IETF
    /// draft, as ``UploadPage`` describes. No library, nothing loaded from elsewhere.
    static let script = #"""

        "use strict";
        (() => {
          const $ = (id) => document.getElementById(id);
          const form = $("upload-form"), input = $("files"), zone = $("drop-zone"), list = $("file-list");
          const button = $("submit"), progress = $("progress"), progressText = $("progress-text");
          const status = $("status"), errorBox = $("error"), receipt = $("receipt");
          // A file from WHOLE_FILE bytes up is sent in three appends: the form's framing before it,
          // the File itself (which Chromium sends from its path, much faster than a slice of it),
          // the framing after it. Anything else — a smaller file's whole form, the rest of a file
          // after a cut — goes in slices of at most CHUNK bytes: a request cut short loses nothing
          // (the server keeps every byte that reached its disk), but one a browser re-sends on its
          // own after a kept-alive connection failed is refused (409) only once all of it is sent.
          const WHOLE_FILE = 8 * 1024 * 1024;
          const CHUNK = 64 * 1024 * 1024;
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
            }

            // The form's plan: a remembered upload's (same boundary, same fields: the same bytes),
            // when the file is the one it began with, else a new one.
            async prepare() {
              const sample = await sampleOf(this.file);
              const record = loadRecord(this.key);
              if (record && record.sample === sample && record.boundary && Array.isArray(record.fields)) {
                this.plan = { boundary: record.boundary, fields: record.fields, name: record.name || input.name, sample };
                this.url = record.url;
                this.located = false;
              } else {
                if (record) {
                  // Another file under the same name, size and time: its upload is not this one's.
                  forget(this.key);
                  fetch(record.url, { method: "DELETE" }).catch(() => {});
                }
                this.plan = { boundary: randomBoundary(), fields: startFields, name: input.name || "files", sample };
              }
              const { body, head } = formBody(this.plan, this.file);
              this.body = body;
              this.head = head;
              this.resumed = record && this.url ? null : 0;
            }

            // Creates the upload: an empty request announcing the form's length.
            async create() {
              this.setState("uploading", "Creating the upload…");
              const xhr = await request(this, "POST", location.pathname + location.search, {
                "Upload-Complete": "?0", "Upload-Length": String(this.body.size),
                "Content-Type": "multipart/form-data; boundary=" + this.plan.boundary, "Accept": "application/json",
              }, null);
              const url = xhr.getResponseHeader("Location");
              if (xhr.status !== 201 || !url) throw failureOf(xhr, "Creating the upload failed");
              this.url = url;
              this.located = true;
              this.offset = 0;
              this.resumed = 0;
              this.item.dataset.resumedFrom = "0";
              const maxAge = /max-age=(\d+)/.exec(xhr.getResponseHeader("Upload-Limit") || "");
              saveRecord(this.key, {
                url, sample: this.plan.sample, boundary: this.plan.boundary, fields: this.plan.fields, name: this.plan.name,
                expires: Date.now() + 1000 * (maxAge ? Number(maxAge[1]) : 86400),
              });
            }

            // Asks the server where the upload stands (HEAD); takes its answer if complete.
            async locate() {
              this.setState("uploading", "Asking the server where the upload stands…");
              const xhr = await request(this, "HEAD", this.url, { "Cache-Control": "no-store" }, null);
              if (xhr.status < 200 || xhr.status >= 300) throw failureOf(xhr, "Asking where the upload stands failed");
              const offset = Number(xhr.getResponseHeader("Upload-Offset"));
              if (!Number.isSafeInteger(offset) || offset < 0 || offset > this.body.size) throw new Failure("the server's Upload-Offset is not usable", { final: true });
              if (this.resumed === null) {
                this.resumed = offset;
                this.item.dataset.resumedFrom = String(this.fileBytes(offset));
              }
              this.acknowledged(offset);
              this.located = true;
              if (xhr.getResponseHeader("Upload-Complete") === "?1") {
                // Complete: its answer (the receipt, or why the form was refused) is given again.
                const answer = await request(this, "GET", this.url, { "Accept": "application/json" }, null);
                this.finish(answer);
              }
            }

            // What the next append sends from the server's offset, and where it ends.
            piece() {
              const offset = this.offset, whole = this.file.size >= WHOLE_FILE && !this.sliced;
              if (whole && offset === this.head) return { body: this.file, end: this.head + this.file.size };
              if (whole && offset < this.head) return { body: this.body.slice(offset, this.head), end: this.head };
              const end = Math.min(this.body.size, offset + CHUNK);
              return { body: this.body.slice(offset, end), end };
            }

            // Appends the next piece from the server's offset; the last one completes the upload.
            async append() {
              const { body, end } = this.piece(), complete = end === this.body.size;
              this.setState("uploading");
              this.sent(this.offset);
              const xhr = await request(this, "PATCH", this.url, {
                "Upload-Offset": String(this.offset), "Upload-Complete": complete ? "?1" : "?0",
                "Content-Type": "application/partial-upload", "Accept": "application/json",
              }, body);
              if (xhr.getResponseHeader("Upload-Complete") === "?1") return this.finish(xhr);
              if (xhr.status >= 200 && xhr.status < 300) {
                const offset = Number(xhr.getResponseHeader("Upload-Offset"));
                if (!Number.isSafeInteger(offset)) {
                  this.located = false;
                  return;
                }
                // A server that does not take the framing before the file whole: slices from now on.
                if (end === this.head && offset < this.head) this.sliced = true;
                this.acknowledged(offset);
                return;
              }
              if (xhr.status === 409) {
                this.located = false;
                return;
              }
              throw failureOf(xhr, "Sending the file failed");
            }

            // The server's final answer: the receipt, or why it refused the form.
            finish(xhr) {
              forget(this.key);
              let answer = null;
              try { answer = JSON.parse(xhr.responseText); } catch (_) { answer = null; }
              const file = answer && Array.isArray(answer.files) ? answer.files[0] : null;
              if (xhr.status >= 200 && xhr.status < 300 && file && Array.isArray(answer.fields)) {
                this.answer = answer;
                this.acknowledged(this.body.size);
                this.item.dataset.sha256 = file.sha256;
                this.setState("done", "Stored — SHA-256 " + file.sha256);
                return;
              }
              throw new Failure("The server refused " + this.file.name + " — " + answerText(xhr.status, xhr.responseText), { final: true });
            }

            fail(message) {
              this.error = message;
              this.setState("failed", message);
            }

            // Waits before trying again: for the network while the browser is offline, else the
            // next delay (or the server's Retry-After), counted down on the page.
            backoff(failure) {
              return new Promise((resolve) => {
                let timer = 0;
                const wake = () => {
                  clearInterval(timer);
                  window.removeEventListener("online", wake);
                  window.removeEventListener("offline", offline);
                  this.wake = null;
                  this.retries += 1;
                  this.item.dataset.retries = String(this.retries);
                  resolve();
                };
                this.wake = wake;
                const offline = () => {
                  clearInterval(timer);
                  this.item.dataset.waitingFor = "online";
                  this.setState("waiting", "Offline — waiting for the network to come back.");
                };
                window.addEventListener("online", wake);
                window.addEventListener("offline", offline);
                if (!navigator.onLine) return offline();
                let left = Math.max(failure.retryAfter, DELAYS[Math.min(this.failures, DELAYS.length) - 1]);
                left = Math.round(left * (1 + Math.random() * 0.2));
                this.item.dataset.waitingFor = "retry";
                const tell = () => this.setState("waiting", failure.message + ". Retrying in " + left + " s (attempt "
                  + (this.failures + 1) + " of " + (MAX_FAILURES + 1) + ").");
                tell();
                timer = setInterval(() => {
                  left -= 1;
                  if (left <= 0) wake();
                  else tell();
                }, 1000);
              });
            }
          }

          let startFields = [];

          // MARK: the list and the run

          function overall() {
            const total = uploads.reduce((sum, upload) => sum + upload.file.size, 0);
            const sent = uploads.reduce((sum, upload) => sum + (upload.bytesSent || 0), 0);
            progress.max = Math.max(total, 1);
            progress.value = total > 0 ? sent : (uploads.length && uploads.every((upload) => upload.state === "done") ? 1 : 0);
            if (busy) progressText.textContent = (total > 0 ? Math.floor(100 * sent / total) : 100) + " % — " + formatSize(sent) + " of " + formatSize(total);
          }

          function showSelection() {
            if (busy) return;
            uploads = Array.from(input.files, (file) => new Upload(file));
            list.replaceChildren(...uploads.map((upload) => upload.item));
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
          // Offline: requests in flight are stopped, and each upload waits for the network.
          window.addEventListener("offline", () => {
            for (const upload of uploads) if (upload.xhr && upload.state === "uploading") upload.xhr.abort();
          });

          function setState(state, message) {
            document.body.dataset.state = state;
            status.textContent = message;
          }

          function showError(title, detail) {
            errorBox.replaceChildren(element("strong", "", title), element("span", "", detail));
            errorBox.hidden = false;
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
            receipt.hidden = answer.files.length === 0 && answer.fields.length === 0;
          }

          // Starts queued files while fewer than IN_FLIGHT are under way; once every file is done
          // or failed, shows the receipt and what failed.
          function pump() {
            if (!busy) return;
            let running = uploads.filter((upload) => upload.running).length;
            for (const upload of uploads) {
              if (running >= IN_FLIGHT) break;
              if (upload.running || upload.state !== "queued") continue;
              running += 1;
              upload.running = true;
              upload.run().catch((failure) => upload.fail(String(failure && failure.message || failure))).finally(() => {
                upload.running = false;
                if (upload.state === "uploading" || upload.state === "waiting") upload.setState("queued");
                pump();
              });
            }
            if (uploads.some((upload) => upload.running || upload.state === "queued")) return;
            if (uploads.some((upload) => upload.state === "paused")) {
              setState("uploading", "Paused.");
              return;
            }
            settle();
          }

          function settle() {
            busy = false;
            button.disabled = false;
            input.disabled = false;
            const done = uploads.filter((upload) => upload.state === "done"), failed = uploads.filter((upload) => upload.state === "failed");
            const answer = { fields: done.length > 0 ? done[0].answer.fields : [], files: done.map((upload) => upload.answer.files[0]) };
            showReceipt(answer, JSON.stringify(answer));
            overall();
            if (failed.length > 0) {
              showError(failed.length === 1 ? "A file was not uploaded" : failed.length + " files were not uploaded",
                failed.map((upload) => upload.file.name + ": " + upload.error).join("\n"));
              setState("failed", "The upload failed" + (done.length > 0 ? " for some files; the others are stored." : "."));
              return;
            }
            const total = done.reduce((sum, upload) => sum + upload.file.size, 0);
            setState("done", "Stored " + done.length + (done.length === 1 ? " file" : " files") + " (" + formatSize(total) + ").");
          }

          // The whole form in one request, as a browser without script sends it: for a form
          // without files, and for a server that takes no resumable uploads.
          function sendWhole() {
            const xhr = new XMLHttpRequest();
            xhr.open("POST", location.pathname + location.search);
            xhr.setRequestHeader("Accept", "application/json");
            xhr.upload.addEventListener("progress", (event) => {
              if (!event.lengthComputable) return;
              progress.max = event.total;
              progress.value = event.loaded;
              progressText.textContent = Math.floor(100 * event.loaded / Math.max(event.total, 1)) + " % — " + formatSize(event.loaded) + " of " + formatSize(event.total);
            });
            for (const upload of uploads) upload.setState("uploading", "Sent with the form…");
            const end = (title, detail) => {
              busy = false;
              button.disabled = false;
              input.disabled = false;
              if (title) {
                for (const upload of uploads) upload.fail(detail);
                showError(title, detail);
                setState("failed", "The upload failed.");
              }
            };
            xhr.addEventListener("load", () => {
              let answer = null;
              try { answer = JSON.parse(xhr.responseText); } catch (_) { answer = null; }
              if (xhr.status >= 200 && xhr.status < 300 && answer && Array.isArray(answer.files) && Array.isArray(answer.fields)) {
                end(null);
                uploads.forEach((upload, index) => {
                  const file = answer.files[index];
                  if (!file) return;
                  upload.acknowledged(upload.file.size);
                  upload.item.dataset.sha256 = file.sha256;
                  upload.setState("done", "Stored — SHA-256 " + file.sha256);
                });
                showReceipt(answer, xhr.responseText);
                setState("done", "Stored " + answer.files.length + (answer.files.length === 1 ? " file" : " files") + " and "
                  + answer.fields.length + (answer.fields.length === 1 ? " field." : " fields."));
              } else {
                end("The server refused the upload", answerText(xhr.status, xhr.responseText));
              }
            });
            xhr.addEventListener("error", () => end("The upload did not complete", "The connection failed before the server answered."));
            xhr.addEventListener("abort", () => end("The upload did not complete", "The upload was stopped."));
            xhr.send(new FormData(form));
          }

          form.addEventListener("submit", (event) => {
            event.preventDefault();
            if (busy) return;
            busy = true;
            button.disabled = true;
            errorBox.hidden = true;
            receipt.hidden = true;
            setState("uploading", "Uploading…");
            if (uploads.length === 0 || !resumable) return sendWhole();
            start();
          });

          // Sends the chosen files, each resumably: those not stored yet (a failed one anew), or,
          // when every one is stored, all of them again.
          function start() {
            startFields = textFields();
            input.disabled = true;
            const again = uploads.every((upload) => upload.state === "done");
            uploads = uploads.map((upload) => (upload.state === "queued" || (upload.state === "done" && !again) ? upload : new Upload(upload.file)));
            list.replaceChildren(...uploads.map((upload) => upload.item));
            pump();
          }

          forgetExpired();
        })();

        """#
}
