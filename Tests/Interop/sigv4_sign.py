"""Signs requests with botocore's own S3 Signature Version 4 signer, as boto3 would send them.

Reads a JSON list on standard input; each request: method, scheme, host, key (the object
key, unencoded: encoded here as botocore encodes keys), query ([[name, value]], unencoded),
headers ([[name, value]]), body (a list of byte values), unsigned (true: UNSIGNED-PAYLOAD), access_key,
secret_key, token (absent or null without one), region, time (seconds since 1970, UTC). Writes a JSON list: the
encoded path, the payload hash, and each signed field botocore added (lower-case names).
"""
import datetime
import json
import sys
import types

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode

answers = []
for request in json.load(sys.stdin):
    moment = datetime.datetime.fromtimestamp(request["time"], tz=datetime.timezone.utc)
    botocore.auth.get_current_datetime = lambda moment=moment: moment
    path = "/" + percent_encode(request["key"], safe="/~")
    url = f"{request['scheme']}://{request['host']}{path}"
    prepared = AWSRequest(method=request["method"], url=url, data=bytes(request["body"]),
                          params=[tuple(pair) for pair in request["query"]],
                          headers={name: value for name, value in request["headers"]})
    if request["unsigned"]:
        prepared.context["client_config"] = types.SimpleNamespace(s3={"payload_signing_enabled": False})
    credentials = Credentials(request["access_key"], request["secret_key"], request.get("token"))
    botocore.auth.S3SigV4Auth(credentials, "s3", request["region"]).add_auth(prepared)
    added = {name.lower(): value for name, value in prepared.headers.items()
             if name.lower() in ("authorization", "x-amz-date", "x-amz-content-sha256", "x-amz-security-token")}
    answers.append({"path": path, "fields": added})
json.dump(answers, sys.stdout)
