#!/usr/bin/env python3
"""Stand-ins for the services that hand out temporary AWS credentials, and a proxy in front
of an S3-compatible store that checks the credentials each request is signed with (Python 3
standard library only):
  aws_credential_standins.py STANDIN_PORT PROXY_PORT UPSTREAM_PORT LIFETIME_SECONDS [MODE,…]

On 127.0.0.1:STANDIN_PORT, each hand-out mints a fresh temporary key (AccessKeyId `ASIA…`,
SecretAccessKey, session token) valid for LIFETIME_SECONDS (a float is fine) from then:
  POST /  (any other path too)      STS, form parameters in the body or the query,
                                    Version=2011-06-15:
      Action=AssumeRoleWithWebIdentity  unsigned; RoleArn, RoleSessionName and
                                        WebIdentityToken=formpost-web-identity-token
      Action=AssumeRole                 RoleArn, RoleSessionName; signed with Signature
                                        Version 4 (service sts, any region) by the source
                                        key AKIDFORMPOSTSOURCE / formpost-source-secret
                                    With `throttled-sts`, its first two requests are
                                    answered 400 `Throttling` (Rate exceeded), as STS
                                    answers a burst
  GET /container/credentials        the container credentials endpoint;
                                    `Authorization: formpost-container-token`
  PUT /latest/api/token             EC2 instance metadata, IMDSv2 only: a session token
                                    for `X-aws-ec2-metadata-token-ttl-seconds` (1–21600)
  GET /latest/meta-data/iam/security-credentials/[formpost-role]
                                    with `X-aws-ec2-metadata-token`: the role's name, then
                                    its credentials (401 without a valid token). With
                                    `imdsv1`: IMDSv1 only, as an older metadata service
                                    (or a hop that drops the token's PUT): the token
                                    answered 403, the GETs taken without one
  GET /stats                        {"issued": {"web-identity": n, "assume-role": n,
                                    "container": n, "imds": n}, "accepted": n,
                                    "expired": n, "bad-signature": n, "unknown-key": n,
                                    "throttled": n}
Refusals take the shape the real services give them (STS's XML error, the container
endpoint's JSON, S3's XML error). With STANDINS_TLS=CERTIFICATE_PEM:KEY_PEM in the
environment, the stand-ins speak HTTPS (an STS behind a private CA).

On 127.0.0.1:PROXY_PORT, every request must carry an `Authorization: AWS4-HMAC-SHA256 …`
header signed by a known key: one handed out above (with its `x-amz-security-token`, until
it expires: 400 ExpiredToken after), the static key formpost-test / formpost-test-secret, or
the source key above. The signature is recomputed as S3 does (the path exactly as received,
the query re-encoded and sorted, the signed headers, `x-amz-content-sha256` as the payload
hash, which must match the body unless UNSIGNED-PAYLOAD). A request that passes is forwarded,
bytes unchanged, to 127.0.0.1:UPSTREAM_PORT and its answer relayed.

Prints on standard output (flushed) one line per request to the proxy,
`METHOD PATH -> STATUS AKID` (`-` without a key), and one per hand-out,
`issued KIND AKID until EXPIRATION`."""
import base64
import hashlib
import hmac
import http.server
import json
import os
import re
import secrets
import string
import sys
import threading
import time
import urllib.parse
import uuid
from xml.sax.saxutils import escape

from s3_forwarding import forward, serve

STANDIN_PORT, PROXY_PORT, UPSTREAM = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
LIFETIME = float(sys.argv[4])
MODES = set(sys.argv[5].split(",")) if len(sys.argv) > 5 else set()
IMDS_V1_ONLY = "imdsv1" in MODES
sts_throttles_left = [2 if "throttled-sts" in MODES else 0]

WEB_IDENTITY_TOKEN = "formpost-web-identity-token"
CONTAINER_TOKEN = "formpost-container-token"
ROLE_NAME = "formpost-role"
CONTAINER_ROLE_ARN = "arn:aws:iam::123456789012:role/formpost"
SOURCE_KEY, SOURCE_SECRET = "AKIDFORMPOSTSOURCE", "formpost-source-secret"
STATIC_KEY, STATIC_SECRET = "formpost-test", "formpost-test-secret"
STS_NAMESPACE = "https://sts.amazonaws.com/doc/2011-06-15/"

lock = threading.Lock()
# AccessKeyId -> {"secret": …, "token": … or None, "expires": seconds since 1970 or None}
keys = {
    STATIC_KEY: {"secret": STATIC_SECRET, "token": None, "expires": None},
    SOURCE_KEY: {"secret": SOURCE_SECRET, "token": None, "expires": None},
}
imds_tokens = {}  # IMDSv2 session token -> seconds since 1970 at which it lapses
stats = {"issued": {"web-identity": 0, "assume-role": 0, "container": 0, "imds": 0},
         "accepted": 0, "expired": 0, "bad-signature": 0, "unknown-key": 0, "throttled": 0}


def say(line):
    with lock:
        print(line, flush=True)


def count(name):
    with lock:
        stats[name] += 1


def iso8601(moment):
    """`2026-11-28T18:30:05Z`: whole seconds (rounded down), UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def mint(kind):
    """A fresh temporary key, remembered for the proxy, valid for LIFETIME from now."""
    alphabet = string.ascii_uppercase + string.digits
    access_key = "ASIA" + "".join(secrets.choice(alphabet) for _ in range(16))
    # Like AWS's: base64 alphabet, so `+` and `/` turn up and must survive the client's handling.
    secret = base64.b64encode(secrets.token_bytes(30)).decode()   # 40 characters
    token = base64.b64encode(secrets.token_bytes(48)).decode()    # 64 characters
    expires = time.time() + LIFETIME
    with lock:
        keys[access_key] = {"secret": secret, "token": token, "expires": expires}
        stats["issued"][kind] += 1
    say(f"issued {kind} {access_key} until {iso8601(expires)}")
    return {"AccessKeyId": access_key, "SecretAccessKey": secret, "SessionToken": token,
            "Expiration": iso8601(expires)}


# --- Signature Version 4 -----------------------------------------------------------------

AUTHORIZATION = re.compile(
    r"AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)/(\d{8})/([^/,\s]+)/([^/,\s]+)/aws4_request\s*,"
    r"\s*SignedHeaders=([^,\s]+)\s*,\s*Signature=([0-9a-f]{64})\s*$")


def parse_authorization(value):
    """(key, date, region, service, [signed header names], signature), or None if malformed."""
    match = AUTHORIZATION.fullmatch((value or "").strip())
    if not match:
        return None
    key, date, region, service, signed, signature = match.groups()
    return key, date, region, service, signed.split(";"), signature


def canonical_query(raw):
    """Each `name=value` URI-decoded, re-encoded keeping only RFC 3986's unreserved
    characters, sorted by name then value; a parameter without `=` has an empty value."""
    pairs = []
    for part in raw.split("&"):
        if not part:
            continue
        name, _, value = part.partition("=")
        pairs.append(tuple(urllib.parse.quote(urllib.parse.unquote_to_bytes(piece), safe="-_.~")
                           for piece in (name, value)))
    return "&".join(f"{name}={value}" for name, value in sorted(pairs))


def canonical_request(method, raw_path, headers, signed, payload_hash):
    path, _, query = raw_path.partition("?")
    lines = [method, path, canonical_query(query)]
    for name in signed:
        values = headers.get_all(name) or []
        lines.append(name + ":" + ",".join(re.sub(" +", " ", value.strip()) for value in values))
    return "\n".join(lines) + "\n\n" + ";".join(signed) + "\n" + payload_hash


def signature(secret, amz_date, date, region, service, canonical):
    """(string to sign, hex signature)."""
    scope = f"{date}/{region}/{service}/aws4_request"
    to_sign = ("AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n"
               + hashlib.sha256(canonical.encode()).hexdigest())
    key = ("AWS4" + secret).encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return to_sign, hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


# --- Shared HTTP plumbing ---------------------------------------------------------------

class Base(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        """The whole body, by Content-Length (always read before answering)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True  # not read: the connection cannot be reused
            return None
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self, status, body=b"", content_type="application/xml", headers=()):
        """Sends a whole answer; returns its status."""
        body = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return status


# --- The stand-ins ----------------------------------------------------------------------

class StandIns(Base):
    def handle_any(self):
        body = self.read_body()
        if body is None:
            return self.answer(411, "a Content-Length is required", "text/plain")
        path = self.path.partition("?")[0]
        if path == "/stats" and self.command == "GET":
            with lock:
                text = json.dumps(stats)
            return self.answer(200, text, "application/json")
        if path == "/container/credentials":
            return self.container()
        if path == "/latest" or path.startswith("/latest/"):
            return self.imds(path)
        return self.sts(body)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    # The container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI).
    def container(self):
        if self.command != "GET":
            return self.answer(405, json.dumps({"code": "MethodNotAllowed",
                                                "message": "only GET"}), "application/json")
        if self.headers.get("Authorization") != CONTAINER_TOKEN:
            return self.answer(403, json.dumps({"code": "AccessDenied",
                                                "message": "the Authorization header is not the container's token"}),
                               "application/json")
        issued = mint("container")
        return self.answer(200, json.dumps({
            "AccessKeyId": issued["AccessKeyId"], "SecretAccessKey": issued["SecretAccessKey"],
            "Token": issued["SessionToken"], "Expiration": issued["Expiration"],
            "RoleArn": CONTAINER_ROLE_ARN}), "application/json")

    # EC2 instance metadata, version 2 only (version 1 disabled).
    def imds(self, path):
        if self.command == "PUT" and path == "/latest/api/token" and IMDS_V1_ONLY:
            return self.answer(403, "", "text/plain")
        if self.command == "PUT" and path == "/latest/api/token":
            ttl = self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
            if ttl is None or not ttl.strip().isdigit() or not 1 <= int(ttl) <= 21600:
                return self.answer(400, "", "text/plain")
            token = base64.b64encode(secrets.token_bytes(42)).decode()
            with lock:
                imds_tokens[token] = time.time() + int(ttl)
            return self.answer(200, token, "text/plain",
                               [("X-aws-ec2-metadata-token-ttl-seconds", str(int(ttl)))])
        if self.command not in ("GET", "HEAD"):
            return self.answer(405, "", "text/plain")
        token = self.headers.get("X-aws-ec2-metadata-token")
        with lock:
            valid = IMDS_V1_ONLY or token is not None and imds_tokens.get(token, 0) > time.time()
        if not valid:
            return self.answer(401, "", "text/plain")
        listing = "/latest/meta-data/iam/security-credentials"
        if path in (listing, listing + "/"):
            return self.answer(200, ROLE_NAME, "text/plain")
        if path == f"{listing}/{ROLE_NAME}":
            issued = mint("imds")
            return self.answer(200, json.dumps({
                "Code": "Success", "LastUpdated": iso8601(time.time()), "Type": "AWS-HMAC",
                "AccessKeyId": issued["AccessKeyId"], "SecretAccessKey": issued["SecretAccessKey"],
                "Token": issued["SessionToken"], "Expiration": issued["Expiration"]}),
                "application/json")
        return self.answer(404, "", "text/plain")

    # STS.
    def sts_error(self, status, code, message, kind="Sender"):
        return self.answer(status, (
            f'<ErrorResponse xmlns="{STS_NAMESPACE}"><Error><Type>{kind}</Type><Code>{code}</Code>'
            f"<Message>{escape(message)}</Message></Error><RequestId>{uuid.uuid4()}</RequestId>"
            f"</ErrorResponse>"), "text/xml")

    def sts(self, body):
        with lock:
            throttled = sts_throttles_left[0] > 0
            sts_throttles_left[0] -= 1 if throttled else 0
        if throttled:
            count("throttled")
            return self.sts_error(400, "Throttling", "Rate exceeded")
        query = self.path.partition("?")[2]
        parameters = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        if (self.headers.get("Content-Type") or "").startswith("application/x-www-form-urlencoded"):
            parameters.update(urllib.parse.parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        action = parameters.get("Action")
        if parameters.get("Version") != "2011-06-15":
            return self.sts_error(400, "InvalidAction",
                                  f"Could not find operation {action} for version {parameters.get('Version')}")
        for required in ("RoleArn", "RoleSessionName"):
            if action in ("AssumeRole", "AssumeRoleWithWebIdentity") and not parameters.get(required):
                return self.sts_error(400, "ValidationError",
                                      f"1 validation error detected: Value null at '{required}' "
                                      f"failed to satisfy constraint: Member must not be null")
        if action == "AssumeRoleWithWebIdentity":
            if parameters.get("WebIdentityToken") != WEB_IDENTITY_TOKEN:
                return self.sts_error(400, "InvalidIdentityToken", "The web identity token is not valid")
            issued = mint("web-identity")
            return self.sts_answer(action, parameters, issued,
                                   "<SubjectFromWebIdentityToken>formpost-subject</SubjectFromWebIdentityToken>")
        if action == "AssumeRole":
            refusal = self.sts_check_signature(body)
            if refusal:
                return refusal
            issued = mint("assume-role")
            return self.sts_answer(action, parameters, issued, "")
        return self.sts_error(400, "InvalidAction", f"Could not find operation {action} for version 2011-06-15")

    def sts_check_signature(self, body):
        """None if signed (Signature Version 4, service sts) by the source key, else the status
        of the refusal sent."""
        parsed = parse_authorization(self.headers.get("Authorization"))
        if parsed is None:
            return self.sts_error(403, "MissingAuthenticationToken",
                                  "Request must contain a signature that conforms to AWS standards")
        key, date, region, service, signed, given = parsed
        if key != SOURCE_KEY:
            count("unknown-key")
            return self.sts_error(403, "InvalidClientTokenId", "The security token included in the request is invalid.")
        amz_date = self.headers.get("X-Amz-Date") or ""
        if service != "sts" or "host" not in signed or "x-amz-date" not in signed or amz_date[:8] != date:
            return self.sts_error(400, "IncompleteSignature",
                                  "The credential scope must name service sts, and host and x-amz-date must be signed")
        canonical = canonical_request(self.command, self.path, self.headers, signed,
                                      hashlib.sha256(body).hexdigest())
        _, expected = signature(SOURCE_SECRET, amz_date, date, region, service, canonical)
        if not hmac.compare_digest(expected, given):
            count("bad-signature")
            return self.sts_error(403, "SignatureDoesNotMatch",
                                  "The request signature we calculated does not match the signature you provided.")
        return None

    def sts_answer(self, action, parameters, issued, extra):
        session = parameters["RoleSessionName"]
        role = parameters["RoleArn"].rpartition("/")[2] or "role"
        role_id = "AROA" + secrets.token_hex(8).upper()
        text = (
            f'<{action}Response xmlns="{STS_NAMESPACE}"><{action}Result><Credentials>'
            f"<AccessKeyId>{issued['AccessKeyId']}</AccessKeyId>"
            f"<SecretAccessKey>{escape(issued['SecretAccessKey'])}</SecretAccessKey>"
            f"<SessionToken>{escape(issued['SessionToken'])}</SessionToken>"
            f"<Expiration>{issued['Expiration']}</Expiration></Credentials>{extra}"
            f"<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/{escape(role)}/{escape(session)}</Arn>"
            f"<AssumedRoleId>{role_id}:{escape(session)}</AssumedRoleId></AssumedRoleUser>"
            f"</{action}Result><ResponseMetadata><RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata>"
            f"</{action}Response>")
        return self.answer(200, text, "text/xml")


# --- The checking proxy -------------------------------------------------------------------

class Proxy(Base):
    def handle_any(self):
        # Credentials are checked as of the request's head, as a store authenticates it
        # before its body has come.
        arrived = time.time()
        body = self.read_body()
        key = "-"
        if body is None:
            status = self.s3_error(411, "MissingContentLength", "You must provide the Content-Length HTTP header.")
        else:
            key, status = self.check(body, arrived)
            if status is None:
                count("accepted")
                status = self.forward(body)
        say(f"{self.command} {self.path} -> {status} {key}")

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    def s3_error(self, status, code, message, extra=""):
        return self.answer(status, (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f"<Message>{escape(message)}</Message>{extra}<RequestId>{secrets.token_hex(8).upper()}</RequestId>"
            f"</Error>"))

    def check(self, body, arrived):
        """(access key or "-", None if the request may pass, else the status it was refused
        with); the credentials' expiry compared with `arrived`, when the request's head came."""
        parsed = parse_authorization(self.headers.get("Authorization"))
        if parsed is None:
            return "-", self.s3_error(403, "AccessDenied",
                                      "A valid AWS4-HMAC-SHA256 Authorization header is required.")
        key, date, region, service, signed, given = parsed
        with lock:
            known = keys.get(key)
        if known is None:
            count("unknown-key")
            return key, self.s3_error(403, "InvalidAccessKeyId",
                                      "The AWS Access Key Id you provided does not exist in our records.",
                                      f"<AWSAccessKeyId>{escape(key)}</AWSAccessKeyId>")
        if self.headers.get("x-amz-security-token") != known["token"]:
            return key, self.s3_error(403, "InvalidToken", "The provided token is malformed or otherwise invalid.")
        if known["expires"] is not None and arrived > known["expires"]:
            count("expired")
            return key, self.s3_error(400, "ExpiredToken", "The provided token has expired.")
        amz_date = self.headers.get("x-amz-date") or ""
        if service != "s3" or amz_date[:8] != date:
            return key, self.s3_error(400, "AuthorizationHeaderMalformed",
                                      "The credential scope must be for service s3 on the date of x-amz-date.")
        missing = [name for name in ("host", "x-amz-date") if name not in signed]
        missing += [name for name in self.headers.keys()
                    if name.lower().startswith("x-amz-") and name.lower() not in signed]
        missing += [name for name in signed if name not in self.headers]
        if missing:
            return key, self.s3_error(403, "AccessDenied",
                                      "There were headers present in the request which were not signed, or "
                                      "signed headers that are absent: " + ", ".join(missing))
        payload_hash = self.headers.get("x-amz-content-sha256")
        if payload_hash is None:
            return key, self.s3_error(400, "InvalidRequest",
                                      "Missing required header for this request: x-amz-content-sha256")
        canonical = canonical_request(self.command, self.path, self.headers, signed, payload_hash)
        to_sign, expected = signature(known["secret"], amz_date, date, region, service, canonical)
        if not hmac.compare_digest(expected, given):
            count("bad-signature")
            return key, self.s3_error(403, "SignatureDoesNotMatch",
                                      "The request signature we calculated does not match the signature you "
                                      "provided. Check your key and signing method.",
                                      f"<AWSAccessKeyId>{escape(key)}</AWSAccessKeyId>"
                                      f"<StringToSign>{escape(to_sign)}</StringToSign>"
                                      f"<CanonicalRequest>{escape(canonical)}</CanonicalRequest>")
        if payload_hash.startswith("STREAMING-"):
            return key, self.s3_error(501, "NotImplemented", "Streaming (aws-chunked) payloads are not supported here.")
        if payload_hash != "UNSIGNED-PAYLOAD" and payload_hash != hashlib.sha256(body).hexdigest():
            return key, self.s3_error(400, "XAmzContentSHA256Mismatch",
                                      "The provided 'x-amz-content-sha256' header does not match what was computed.")
        return key, None

    def forward(self, body):
        return forward(self, body, UPSTREAM)


tls = os.environ.get("STANDINS_TLS")
threading.Thread(target=serve, args=(STANDIN_PORT, StandIns, tuple(tls.split(":", 1)) if tls else None), daemon=True).start()
serve(PROXY_PORT, Proxy)
