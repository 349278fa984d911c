#!/usr/bin/env python3
"""A proxy in front of an S3-compatible store whose writes ignore `If-Match` and
`If-None-Match`, as Google Cloud Storage's XML API does (Python 3 standard library only):
  s3_gcs_proxy.py PORT UPSTREAM_PORT
GCS's XML API honours those conditions on reads only; its writes take
`x-goog-if-generation-match`. The proxy removes both fields from every PUT, POST and
DELETE and forwards the request, otherwise unchanged, to 127.0.0.1:UPSTREAM_PORT. Prints one
line per request on standard output (flushed): `METHOD PATH?QUERY -> STATUS`."""
import sys

from s3_forwarding import forward, ProxyHandler, serve

PORT, UPSTREAM = int(sys.argv[1]), int(sys.argv[2])


class Handler(ProxyHandler):
    def handle_any(self):
        body = self.read_body()
        if self.command in ("PUT", "POST", "DELETE"):
            del self.headers["If-Match"]
            del self.headers["If-None-Match"]
        forward(self, body, UPSTREAM, before_answer=self.say)


serve(PORT, Handler)
