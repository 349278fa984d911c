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
import sys
import threading
import time
import urllib.parse

from s3_forwarding import error_body, forward, ProxyHandler, serve

PORT, UPSTREAM = int(sys.argv[1]), int(sys.argv[2])
lock = threading.Lock()
last_write = {}  # the key's path -> when its last write was let through


class Handler(ProxyHandler):
    def is_write(self, query):
        if self.command == "PUT":
            return "partNumber" not in query
        if self.command == "DELETE":
            return "uploadId" not in query
        return self.command == "POST" and "uploadId" in query

    def handle_any(self):
        body = self.read_body()
        path, _, raw_query = self.path.partition("?")
        query = urllib.parse.parse_qs(raw_query, keep_blank_values=True)
        if "tagging" in query:
            self.refuse(501, error_body("NotImplemented", "Tagging is not implemented"))
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
                self.refuse(429, error_body("TooManyRequests", "Reduce your concurrent request rate for the same object."))
                return
        if self.command == "DELETE":
            del self.headers["If-Match"]
        forward(self, body, UPSTREAM, before_answer=self.say)


serve(PORT, Handler)
