"""A server of the IETF draft "Resumable Uploads for HTTP" (interop version 8), written
from the draft's text, for the tests of FormPost's client; standard library and Werkzeug.

    python3 rufh_server.py PORT LOG [--discard-partial] [--stall-first-append] [--max-append SIZE]

A POST or PUT with `Upload-Complete` creates an upload resource at /uploads/N, appending
what content it carries; `Upload-Complete: ?0` is answered 201 with `Location`.
HEAD answers 204 with `Upload-Offset`, `Upload-Complete`, `Upload-Length`, `Upload-Limit`.
PATCH (`application/partial-upload`) appends at `Upload-Offset` (409 with the right offset
otherwise). Once complete, a multipart/form-data representation is parsed with Werkzeug
and answered 200 `{"length", "sha256", "parts": [{"name", "filename", "size", "sha256"}…]}`
with `Upload-Complete: ?1`.

--discard-partial     an append cut short keeps nothing of its content, as some servers do
--stall-first-append  the first PATCH is never read nor answered (its connection is held)
--max-append SIZE     announce `max-append-size=SIZE` and answer 413 to larger appends

Each PATCH adds a JSON line to LOG: {"offset", "declared", "received", "kept"}.
"""
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parse_form import with_werkzeug  # noqa: E402

PORT, LOG = int(sys.argv[1]), sys.argv[2]
DISCARD_PARTIAL = "--discard-partial" in sys.argv
STALL_FIRST = "--stall-first-append" in sys.argv
MAX_APPEND = int(sys.argv[sys.argv.index("--max-append") + 1]) if "--max-append" in sys.argv else None
MAX_SIZE = 1 << 34

lock = threading.Lock()
uploads = {}  # id -> {"data": bytearray, "length": int|None, "type": str, "complete": bool, "answer": bytes}
appends_seen = [0]


def boolean(value):
    return {"?1": True, "?0": False}.get((value or "").strip())


def integer(value):
    try:
        number = int((value or "").strip())
    except ValueError:
        return None
    return number if number >= 0 else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def limits(self):
        members = [f"max-size={MAX_SIZE}"] + ([f"max-append-size={MAX_APPEND}"] if MAX_APPEND else [])
        return ", ".join(members)

    def answer(self, status, headers=None, body=b""):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def read_content(self):
        """The content, and whether all of it arrived."""
        declared = int(self.headers.get("Content-Length", "0"))
        data = bytearray()
        while len(data) < declared:
            chunk = self.rfile.read(min(65536, declared - len(data)))
            if not chunk:
                break
            data += chunk
        return bytes(data), declared, len(data) == declared

    def upload(self):
        upload_id = self.path.rsplit("/", 1)[-1]
        with lock:
            return upload_id, uploads.get(upload_id)

    def complete_upload(self, upload):
        data = bytes(upload["data"])
        result = {"length": len(data), "sha256": hashlib.sha256(data).hexdigest(), "parts": []}
        if upload["type"].lower().startswith("multipart/form-data"):
            result["parts"] = with_werkzeug(data, upload["type"])
        upload["complete"] = True
        upload["answer"] = json.dumps(result).encode()
        self.answer(200, {"Upload-Complete": "?1", "Content-Type": "application/json"}, upload["answer"])

    def create(self):
        complete = boolean(self.headers.get("Upload-Complete"))
        if complete is None:
            return self.answer(400)
        data, _, whole = self.read_content()
        with lock:
            upload_id = str(len(uploads) + 1)
            upload = {"data": bytearray(data), "length": integer(self.headers.get("Upload-Length")),
                      "type": self.headers.get("Content-Type", "application/octet-stream"), "complete": False}
            uploads[upload_id] = upload
        if not whole:
            return
        location = f"/uploads/{upload_id}"
        if complete:
            return self.complete_upload(upload)
        self.answer(201, {"Location": location, "Upload-Complete": "?0", "Upload-Offset": str(len(upload["data"])), "Upload-Limit": self.limits()})

    do_POST = create
    do_PUT = create

    def do_HEAD(self):
        _, upload = self.upload()
        if upload is None:
            return self.answer(404)
        headers = {"Upload-Offset": str(len(upload["data"])), "Upload-Complete": "?1" if upload["complete"] else "?0",
                   "Upload-Limit": self.limits(), "Cache-Control": "no-store"}
        if upload["length"] is not None:
            headers["Upload-Length"] = str(upload["length"])
        self.answer(204, headers)

    def do_PATCH(self):
        _, upload = self.upload()
        if upload is None:
            return self.answer(404)
        with lock:
            appends_seen[0] += 1
            first = appends_seen[0] == 1
        if STALL_FIRST and first:
            time.sleep(3600)
            return
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/partial-upload":
            return self.answer(415)
        offset, complete = integer(self.headers.get("Upload-Offset")), boolean(self.headers.get("Upload-Complete"))
        declared = int(self.headers.get("Content-Length", "0"))
        if MAX_APPEND is not None and declared > MAX_APPEND:
            self.read_content()
            return self.answer(413, {"Upload-Limit": self.limits(), "Upload-Complete": "?0"})
        if upload["complete"]:
            self.read_content()
            if complete and offset == len(upload["data"]) and declared == 0:
                return self.answer(200, {"Upload-Complete": "?1", "Content-Type": "application/json"}, upload["answer"])
            return self.answer(400, {"Upload-Complete": "?1"})
        if offset is None or complete is None:
            return self.answer(400)
        if offset != len(upload["data"]):
            self.read_content()
            return self.answer(409, {"Upload-Offset": str(len(upload["data"])), "Upload-Complete": "?0"})
        data, declared, whole = self.read_content()
        kept = len(data) if whole or not DISCARD_PARTIAL else 0
        upload["data"] += data[:kept]
        with open(LOG, "a") as handle:
            handle.write(json.dumps({"offset": offset, "declared": declared, "received": len(data), "kept": kept}) + "\n")
        if not whole:
            return
        if complete:
            return self.complete_upload(upload)
        self.answer(204, {"Upload-Complete": "?0", "Upload-Offset": str(len(upload["data"]))})

    def do_DELETE(self):
        upload_id, upload = self.upload()
        if upload is None:
            return self.answer(404)
        with lock:
            uploads.pop(upload_id, None)
        self.answer(204)


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
