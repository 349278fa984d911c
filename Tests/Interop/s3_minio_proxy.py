#!/usr/bin/env python3
"""A proxy in front of an S3-compatible store that lists multipart uploads as MinIO does
(Python 3 standard library only):
  s3_minio_proxy.py PORT UPSTREAM_PORT
MinIO's `ListMultipartUploads` takes `prefix` as one object's whole key: asked for a
prefix, it lists only the uploads of the key equal to it (MinIO's documentation, "S3 API
Compatibility": "ListMultipartUploads requires the exact object name as a prefix"). The
proxy forwards the listing and drops every `<Upload>` whose `<Key>` is not the prefix.
Every other request is forwarded, bytes unchanged, to 127.0.0.1:UPSTREAM_PORT. Prints one
line per request on standard output (flushed): `METHOD PATH?QUERY -> STATUS`."""
import re
import sys
import urllib.parse

from s3_forwarding import forward, ProxyHandler, serve

PORT, UPSTREAM = int(sys.argv[1]), int(sys.argv[2])
UPLOAD = re.compile(rb"<Upload>.*?</Upload>", re.S)
KEY = re.compile(rb"<Key>(.*?)</Key>", re.S)


def whole_key_only(prefix):
    """A rewrite of a listing's body keeping the uploads of the key `prefix` alone."""
    def rewrite(status, body):
        if status != 200:
            return body
        def keep(match):
            key = KEY.search(match.group(0))
            return match.group(0) if key and key.group(1).decode() == prefix else b""
        return UPLOAD.sub(keep, body)
    return rewrite


class Handler(ProxyHandler):
    def handle_any(self):
        body = self.read_body()
        query = urllib.parse.parse_qs(self.path.partition("?")[2], keep_blank_values=True)
        prefix = query.get("prefix", [""])[0]
        rewrite = whole_key_only(prefix) if self.command == "GET" and "uploads" in query and prefix else None
        forward(self, body, UPSTREAM, before_answer=self.say, rewrite=rewrite)


serve(PORT, Handler)
