#!/usr/bin/env python3
"""A proxy in front of an S3-compatible store that holds chosen requests before it
forwards them, as a slow or lossy link to the store would (Python 3 standard library only):
  s3_hold_proxy.py PORT UPSTREAM_PORT METHOD NEEDLE SECONDS [SKIP [COUNT]]
holds SECONDS each request of METHOD whose path and query contain NEEDLE — past the first
SKIP such requests (0 by default), COUNT of them (all by default) — then forwards it,
bytes unchanged, to 127.0.0.1:UPSTREAM_PORT and relays the answer. `PUT partNumber= 8`
makes every part take 8 s (a slow uplink); `PUT .lease 60 1 1` holds the first renewal of
a lease (the second write of it) for a minute, as a request lost on the way would be.
Every other request is forwarded at once. Prints one line per answer on standard output
(flushed), `TIME METHOD PATH?QUERY -> STATUS`, and `TIME METHOD PATH?QUERY held` when a
hold begins."""
import sys
import threading
import time

from s3_forwarding import forward, ProxyHandler, say_line, serve

PORT, UPSTREAM, METHOD, NEEDLE, SECONDS = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
SKIP = int(sys.argv[6]) if len(sys.argv) > 6 else 0
COUNT = int(sys.argv[7]) if len(sys.argv) > 7 else None
seen = [0]
lock = threading.Lock()


class Handler(ProxyHandler):
    timed = True

    def handle_any(self):
        body = self.read_body()
        if self.command == METHOD and NEEDLE in self.path:
            with lock:
                number = seen[0]
                seen[0] += 1
            if number >= SKIP and (COUNT is None or number < SKIP + COUNT):
                say_line(f"{time.time():.3f} {self.command} {self.path} held")
                time.sleep(SECONDS)
        forward(self, body, UPSTREAM, before_answer=self.say)


serve(PORT, Handler)
