#!/usr/bin/env python3
"""A proxy in front of an S3-compatible store that behaves as Cloudflare R2 does where R2
differs from S3 (Python 3 standard library only):
  s3_r2_proxy.py PORT UPSTREAM_PORT
- object tagging is not implemented: any request with `tagging` in its query is answered
  501 `NotImplemented`;
- about one write per second to one key: a write to a key (a PUT other than a part's, a
  DELETE other than an abort, the POST completing a multipart upload) less than a second
  after the last write to it that was let through is answered 429;
- a DELETE's `If-Match` is ignored: the object is removed whatever its ETag.
Every other request is forwarded, bytes unchanged, to 127.0.0.1:UPSTREAM_PORT. Prints one
line per request on standard output (flushed): `METHOD PATH?QUERY -> STATUS`."""
import http.server
import sys
import threading
import time
import urllib.parse

from s3_forwarding import answer_error, error_body, forward

PORT, UPSTREAM = int(sys.argv[1]), int(sys.argv[2])
lock = threading.Lock()
last_write = {}  # the key's path -> when its last write was let through


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def say(self, status):
        print(f"{self.command} {self.path} -> {status}", flush=True)

    def refuse(self, status, code, message):
        answer_error(self, status, error_body(code, message), before_answer=self.say)

    def is_write(self, query):
        if self.command == "PUT":
            return "partNumber" not in query
        if self.command == "DELETE":
            return "uploadId" not in query
        return self.command == "POST" and "uploadId" in query

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path, _, raw_query = self.path.partition("?")
        query = urllib.parse.parse_qs(raw_query, keep_blank_values=True)
        if "tagging" in query:
            self.refuse(501, "NotImplemented", "Tagging is not implemented")
            return
        if self.is_write(query) and "tagging" not in query:
            with lock:
                now = time.monotonic()
                if now - last_write.get(path, -10.0) < 1.0:
                    limited = True
                else:
                    limited = False
                    last_write[path] = now
            if limited:
                self.refuse(429, "TooManyRequests", "Reduce your concurrent request rate for the same object.")
                return
        if self.command == "DELETE":
            del self.headers["If-Match"]
        forward(self, body, UPSTREAM, before_answer=self.say)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


http.server.ThreadingHTTPServer.daemon_threads = True
# Many clients connect at once (a test sends dozens of requests together): a backlog of 5
# would refuse some connections, which the client would count as failures.
http.server.ThreadingHTTPServer.request_queue_size = 128
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
