#!/usr/bin/env python3
"""A proxy in front of an S3-compatible store that fails chosen requests, as a store that
is busy or refuses would (Python 3 standard library only):
  s3_fault_proxy.py PORT UPSTREAM_PORT STATUS COUNT [METHOD NEEDLE]
answers STATUS (with S3's XML error body) to the first COUNT part uploads (PUT with
`partNumber` in the query) — or, given METHOD and NEEDLE, to the first COUNT requests of
METHOD whose path and query contain NEEDLE (`POST uploadId=`: the completions of multipart
uploads) — and forwards every other request, bytes unchanged, to 127.0.0.1:UPSTREAM_PORT. With STATUS 0 it instead answers 200 to every PUT that carries
`If-None-Match` or `If-Match`, without forwarding it: a store that ignores conditional
writes (it would write over whatever is there). With STATUS -1 it lets the lease of the
receiver behind it lapse while a completion waits: the first PUT whose path contains NEEDLE
and whose body names "completing" (a completion's save) is held COUNT seconds before it is
forwarded, and from the moment it is held every request on a `.lease` key is answered 503;
MARKER (a file) is created when the hold begins:
  s3_fault_proxy.py PORT UPSTREAM_PORT -1 SECONDS PUT .info MARKER
The start-up probe's requests (keys with `.formpost-probe-`) are never failed: the faults
are the uploads'. Prints one line per request on standard output:
`METHOD PATH?QUERY -> STATUS` (flushed), so that a test can count attempts."""
import http.server
import sys
import threading
import time

from s3_forwarding import forward, say_line

PORT, UPSTREAM, STATUS, COUNT = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
METHOD, NEEDLE = (sys.argv[5], sys.argv[6]) if len(sys.argv) > 6 else ("PUT", "partNumber=")
MARKER = sys.argv[7] if len(sys.argv) > 7 else None
left = [COUNT]
lock = threading.Lock()
lapsing = threading.Event()
CODES = {403: "AccessDenied", 500: "InternalError", 503: "SlowDown"}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        fail = False
        if STATUS == 0 and self.command == "PUT" and ("If-None-Match" in self.headers or "If-Match" in self.headers):
            self.send_response(200)
            self.send_header("ETag", "\"ignored-condition\"")
            self.send_header("Content-Length", "0")
            self.end_headers()
            say_line(f"{self.command} {self.path} -> 200 (condition ignored)")
            return
        if STATUS == -1:
            fail = lapsing.is_set() and ".lease" in self.path
            if not fail and self.command == METHOD and NEEDLE in self.path and b'"completing"' in body:
                with lock:
                    hold = not lapsing.is_set()
                    lapsing.set()
                if hold:
                    open(MARKER, "w").close()
                    say_line(f"{self.command} {self.path} held {COUNT} s")
                    time.sleep(COUNT)
        elif STATUS != 0 and self.command == METHOD and NEEDLE in self.path and ".formpost-probe-" not in self.path:
            with lock:
                if left[0] > 0:
                    left[0] -= 1
                    fail = True
        if fail:
            status = 503 if STATUS == -1 else STATUS
            text = (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{CODES.get(status, 'Failure')}</Code>"
                    f"<Message>injected by the test</Message></Error>").encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
            say_line(f"{self.command} {self.path} -> {status}")
            return
        status = forward(self, body, UPSTREAM)
        say_line(f"{self.command} {self.path} -> {status}")

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any


http.server.ThreadingHTTPServer.daemon_threads = True
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
