#!/usr/bin/env python3
"""A proxy in front of moto that checks part checksums as Amazon S3 does, where moto keeps
them unchecked (Python 3 standard library only):
  s3_checksum_proxy.py PORT UPSTREAM_PORT
- a part (`PUT` with `partNumber`) sent with `x-amz-checksum-crc32` whose value is not the
  CRC32 of its body (four bytes, big-endian, base64) is answered 400 `BadDigest`;
- a multipart upload begun with `x-amz-checksum-algorithm: CRC32` must be completed with a
  `<ChecksumCRC32>` for each part, and one begun without it with none: else 400
  `InvalidRequest`.
Every other request is forwarded, bytes unchanged, to 127.0.0.1:UPSTREAM_PORT. Prints one
line per request on standard output (flushed): `METHOD PATH?QUERY -> STATUS`, then for a
multipart upload begun ` algorithm=ALGORITHM` (or `none`), for a part ` crc32=VALUE` (or
`none`), and for a completion ` parts=N checksums=M`."""
import base64
import re
import sys
import threading
import urllib.parse
import zlib

from s3_forwarding import answer_error, error_body, forward, ProxyHandler, say_line, serve

PORT, UPSTREAM = int(sys.argv[1]), int(sys.argv[2])
lock = threading.Lock()
declared = {}  # the multipart upload's key path -> whether it was begun declaring CRC32


def crc32(body):
    return base64.b64encode(zlib.crc32(body).to_bytes(4, "big")).decode()


class Handler(ProxyHandler):
    def say_with(self, note):
        return lambda status: say_line(f"{self.command} {self.path} -> {status} {note}")

    def handle_any(self):
        body = self.read_body()
        path, _, raw_query = self.path.partition("?")
        query = urllib.parse.parse_qs(raw_query, keep_blank_values=True)
        if self.command == "POST" and "uploads" in query:
            algorithm = self.headers.get("x-amz-checksum-algorithm")
            with lock:
                declared[path] = algorithm == "CRC32"
            forward(self, body, UPSTREAM, before_answer=self.say_with(f"algorithm={algorithm or 'none'}"))
            return
        if self.command == "PUT" and "partNumber" in query and "x-amz-copy-source" not in self.headers:
            sent = self.headers.get("x-amz-checksum-crc32")
            note = f"crc32={sent or 'none'}"
            if sent is not None and sent != crc32(body):
                self.send_refusal(400, "BadDigest", f"The CRC32 you specified did not match the calculated checksum ({crc32(body)}).", note)
                return
            forward(self, body, UPSTREAM, before_answer=self.say_with(note))
            return
        if self.command == "POST" and "uploadId" in query:
            parts = len(re.findall(rb"<Part>", body))
            checksums = len(re.findall(rb"<ChecksumCRC32>", body))
            note = f"parts={parts} checksums={checksums}"
            with lock:
                wanted = parts if declared.get(path) else 0
            if checksums != wanted:
                self.send_refusal(400, "InvalidRequest", f"The upload was created with{'' if wanted else 'out'} a CRC32 checksum: "
                                  f"{wanted} part checksums expected, {checksums} sent.", note)
                return
            forward(self, body, UPSTREAM, before_answer=self.say_with(note))
            return
        forward(self, body, UPSTREAM, before_answer=self.say)

    def send_refusal(self, status, code, message, note):
        answer_error(self, status, error_body(code, message), before_answer=self.say_with(note))


serve(PORT, Handler)
