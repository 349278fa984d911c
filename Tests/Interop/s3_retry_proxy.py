#!/usr/bin/env python3
"""A proxy in front of an S3-compatible store that answers chosen requests as a store does
when a client should try again, or go elsewhere (Python 3 standard library only):
  s3_retry_proxy.py PORT UPSTREAM_PORT MODE COUNT METHOD NEEDLE [ARGUMENT]
The first COUNT requests of METHOD whose path and query contain NEEDLE (`-` for any method)
are answered, without being forwarded, as MODE says:
  status:CODE:S3CODE  CODE with S3's XML error S3CODE (`429:SlowDown`, `400:RequestTimeout`);
                      with ARGUMENT, `Retry-After: ARGUMENT` as well
  error-in-200        200 with S3's XML error `InternalError` in the body, as S3 may answer
                      CompleteMultipartUpload or UploadPartCopy
  redirect            301 `PermanentRedirect` with `x-amz-bucket-region: eu-west-1` and
                      `Location: ARGUMENT` plus the request's path
With MODE `skew` the proxy's clock runs ARGUMENT seconds ahead of this machine's: every
request whose `x-amz-date` is more than 15 minutes from it is answered 403
`RequestTimeTooSkewed` (no body to a HEAD), dated with the proxy's clock, as S3 does; COUNT,
METHOD and NEEDLE are not used.
Every other request is forwarded, bytes unchanged, to 127.0.0.1:UPSTREAM_PORT. Prints one
line per request on standard output (flushed): `SECONDS METHOD PATH?QUERY -> STATUS`, the
seconds since the epoch with three decimals, so that a test can count and time attempts."""
import calendar
import email.utils
import sys
import threading
import time

from s3_forwarding import error_body, forward, ProxyHandler, serve

PORT, UPSTREAM, MODE, COUNT = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
METHOD, NEEDLE = sys.argv[5], sys.argv[6]
ARGUMENT = sys.argv[7] if len(sys.argv) > 7 else None
left = [COUNT]
lock = threading.Lock()


class Handler(ProxyHandler):
    timed = True

    def date_time_string(self, timestamp=None):
        # Every answer's Date is the proxy's clock, as a store dates its answers.
        return email.utils.formatdate(time.time() + (float(ARGUMENT) if MODE == "skew" else 0), usegmt=True)

    def chosen(self):
        if MODE == "skew" or (METHOD != "-" and self.command != METHOD) or NEEDLE not in self.path:
            return False
        with lock:
            if left[0] <= 0:
                return False
            left[0] -= 1
            return True

    def handle_any(self):
        body = self.read_body()
        if MODE == "skew":
            now = time.time() + float(ARGUMENT)
            signed = self.headers.get("x-amz-date", "")
            try:
                at = calendar.timegm(time.strptime(signed, "%Y%m%dT%H%M%SZ"))
            except ValueError:
                at = 0
            if abs(now - at) > 15 * 60:
                self.refuse(403, b"" if self.command == "HEAD" else error_body("RequestTimeTooSkewed"))
                return
        elif self.chosen():
            if MODE.startswith("status:"):
                _, status, code = MODE.split(":")
                self.refuse(int(status), error_body(code), [("Retry-After", ARGUMENT)] if ARGUMENT else [])
            elif MODE == "error-in-200":
                self.refuse(200, error_body("InternalError"))
            elif MODE == "redirect":
                self.refuse(301, error_body("PermanentRedirect"), [("x-amz-bucket-region", "eu-west-1"), ("Location", ARGUMENT + self.path)])
            return
        forward(self, body, UPSTREAM, before_answer=self.say)


serve(PORT, Handler)
