#!/usr/bin/env python3
"""Decodes request bodies with Python's own parsers, and makes property lists for responses.

usage: bodies.py decode urlencoded|json|plist   (body on stdin; canonical JSON on stdout)
       bodies.py plist xml|binary               (JSON on stdin; property list bytes on stdout)

urlencoded: checks that every character is one RFC 3986 allows unescaped in a query
(unreserved, '/', '?', plus '%', '&', '=' as syntax), then prints the [name, value] pairs
of urllib.parse.parse_qsl (strict) in order.
json: the document re-written with sorted keys.
plist: {"format": "xml"|"binary", "value": the document}, data as {"$data": base64}.
"""
import base64
import json
import plistlib
import string
import sys
import urllib.parse

QUERY_SAFE = set(string.ascii_letters + string.digits + "-._~/?%&=")


def canonical(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def jsonable(value):
    if isinstance(value, bytes):
        return {"$data": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [jsonable(item) for item in value]
    return value


def decode(kind, body):
    if kind == "urlencoded":
        text = body.decode("ascii")
        unsafe = sorted(set(text) - QUERY_SAFE)
        if unsafe:
            raise SystemExit(f"characters left unescaped: {unsafe!r}")
        pairs = urllib.parse.parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text), errors="strict")
        return canonical([list(pair) for pair in pairs])
    if kind == "json":
        return canonical(json.loads(body.decode("utf-8")))
    if kind == "plist":
        fmt = "xml" if body.lstrip().startswith(b"<") else "binary"
        return canonical({"format": fmt, "value": jsonable(plistlib.loads(body))})
    raise SystemExit(f"unknown kind {kind}")


def main():
    mode, kind = sys.argv[1], sys.argv[2]
    data = sys.stdin.buffer.read()
    if mode == "decode":
        sys.stdout.write(decode(kind, data))
    elif mode == "plist":
        fmt = plistlib.FMT_XML if kind == "xml" else plistlib.FMT_BINARY
        sys.stdout.buffer.write(plistlib.dumps(json.loads(data), fmt=fmt, sort_keys=True))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
