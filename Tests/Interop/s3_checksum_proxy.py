#!/usr/bin/env python3
"""A proxy in front of moto that checks part checksums as Amazon S3 does, where moto keeps
them unchecked (Python 3 standard library only):
  s3_checksum_proxy.py PORT UPSTREAM_PORT [CERTIFICATE_PEM KEY_PEM]
(with a certificate and its key, the proxy takes TLS connections)
- a request whose `x-amz-content-sha256` is neither `UNSIGNED-PAYLOAD` nor its body's
  SHA-256 is answered 400 `XAmzContentSHA256Mismatch`;
- a part (`PUT` with `partNumber`) sent with `x-amz-checksum-crc32` whose value is not the
  CRC32 of its body (four bytes, big-endian, base64) is answered 400 `BadDigest`;
- a multipart upload begun with `x-amz-checksum-algorithm: CRC32` must be completed with a
  `<ChecksumCRC32>` for each part, and one begun without it with none: else 400
  `InvalidRequest`.
Every other request is forwarded, bytes unchanged, to 127.0.0.1:UPSTREAM_PORT. Prints one
line per request on standard output (flushed): `METHOD PATH?QUERY -> STATUS`, then for a
multipart upload begun ` algorithm=ALGORITHM` (or `none`), for a part ` crc32=VALUE` (or
`none`) and ` payload=signed` (or `unsigned`), for a completion ` parts=N checksums=M`, and
for any other request sent `UNSIGNED-PAYLOAD` ` payload=unsigned`."""
import base64
import hashlib
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
        payload = self.headers.get("x-amz-content-sha256")
        if payload != "UNSIGNED-PAYLOAD" and payload != hashlib.sha256(body).hexdigest():
            self.send_refusal(400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.",
                              "payload=mismatch")
            return
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
            note = f"crc32={sent or 'none'} payload={'unsigned' if payload == 'UNSIGNED-PAYLOAD' else 'signed'}"
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
        forward(self, body, UPSTREAM, before_answer=self.say_with("payload=unsigned") if payload == "UNSIGNED-PAYLOAD" else self.say)

    def send_refusal(self, status, code, message, note):
        answer_error(self, status, error_body(code, message), before_answer=self.say_with(note))


serve(PORT, Handler, tls=tuple(sys.argv[3:5]) if len(sys.argv) > 4 else None)
