extension UploadPage {
    /// The second half of ``script``: preparing, resuming and showing uploads.
    static let scriptEnd = #"""
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
              const offset = this.offset, fileEnd = this.head + this.file.size;
              const size = Math.min(MAX_APPEND, Math.max(MIN_APPEND, Math.round((this.pace || 0) * APPEND_SECONDS)));
              if (this.file.size >= WHOLE_FILE && !this.sliced) {
                if (offset < this.head) return { body: this.body.slice(offset, this.head), end: this.head };
                // The file's last bytes go with the framing after them: the server cannot take
                // bytes that may begin the closing delimiter ("\r\n--…") until it sees what follows.
                if (offset + size < fileEnd) return { body: this.file.slice(offset - this.head, offset + size - this.head), end: offset + size };
              }
              const end = Math.min(this.body.size, offset + size);
              return { body: this.body.slice(offset, end), end };
            }

            // Appends the next piece from the server's offset; the last one completes the upload.
            async append() {
              const { body, end } = this.piece(), complete = end === this.body.size;
              this.setState("uploading");
              this.sent(this.offset);
              const started = performance.now(), from = this.offset;
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
                // Bytes per second, which size the next append (from a piece big enough to tell).
                if (offset - from >= MIN_APPEND) this.pace = (offset - from) / Math.max(0.001, (performance.now() - started) / 1000);
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
