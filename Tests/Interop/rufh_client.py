"""A client of the IETF draft "Resumable Uploads for HTTP", written from the draft's text,
for the tests of `formpost serve`; standard library only. It uploads a form the way
Apple's URLSession does — the whole body in one request (optimistic creation), learning
the upload resource from the `104` interim response — is cut off, and resumes.

    python3 rufh_client.py URL FILE INTEROP_VERSION CUT_AFTER [NAME=VALUE ...]

The form holds the fields given and FILE (as the part `file`), framed by this script.
The request carries `Upload-Draft-Interop-Version: INTEROP_VERSION` and, for version 3,
`Upload-Incomplete: ?0` (`Upload-Complete: ?1` for the others). Once the 104 has named the
upload resource and CUT_AFTER bytes of the body have gone, the connection is reset. Then
HEAD tells the offset, and one PATCH (`application/partial-upload` from version 6,
`application/offset+octet-stream` before) sends the rest. Prints one JSON line:
{"location", "interim": {header: value}, "offset": the offset after the cut,
"status", "complete": the final answer's completeness, "answer": its JSON}.
"""
import http.client
import json
import os
import secrets
import socket
import struct
import sys
import time
from urllib.parse import urlsplit

url, path, version, cut_after = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fields = [argument.split("=", 1) for argument in sys.argv[5:]]
target = urlsplit(url)

boundary = "python-rufh-" + secrets.token_hex(12)
body = bytearray()
for name, value in fields:
    body += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
with open(path, "rb") as handle:
    content = handle.read()
body += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{os.path.basename(path)}"\r\n'
         'Content-Type: application/octet-stream\r\n\r\n').encode() + content + f"\r\n--{boundary}--\r\n".encode()
body = bytes(body)


def completeness(complete):
    """The field that says whether a request completes the upload, in this version's terms."""
    return ("Upload-Incomplete", "?0" if complete else "?1") if version == 3 else ("Upload-Complete", "?1" if complete else "?0")


def says_complete(headers):
    if version == 3:
        return {"?0": True, "?1": False}.get(headers.get("upload-incomplete"))
    return {"?1": True, "?0": False}.get(headers.get("upload-complete"))


def read_head(stream):
    """One response head: the status and the fields, names lowercased."""
    status_line = stream.readline().decode("latin-1")
    status = int(status_line.split()[1])
    headers = {}
    while (line := stream.readline().decode("latin-1").rstrip("\r\n")):
        name, value = line.split(":", 1)
        headers[name.strip().lower()] = value.strip()
    return status, headers


# The whole form in one request, cut once the 104 has named its upload resource.
connection = socket.create_connection((target.hostname, target.port))
name, value = completeness(True)
head = (f"POST {target.path or '/'} HTTP/1.1\r\nHost: {target.netloc}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {len(body)}\r\n"
        f"Upload-Draft-Interop-Version: {version}\r\n{name}: {value}\r\n\r\n")
connection.sendall(head.encode())
reader = connection.makefile("rb")
status, interim = read_head(reader)
if status != 104:
    sys.exit(f"expected a 104 interim response, got {status}")
connection.sendall(body[:cut_after])
time.sleep(0.2)
connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
connection.close()

location = interim["location"]
common = {"Upload-Draft-Interop-Version": str(version)}
for attempt in range(50):
    check = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
    check.request("HEAD", location, headers=common)
    answer = check.getresponse()
    answer.read()
    headers = {k.lower(): v for k, v in answer.getheaders()}
    check.close()
    if 200 <= answer.status < 300:
        break
    time.sleep(0.1)
offset = int(headers["upload-offset"])
if says_complete(headers) is not False:
    sys.exit(f"HEAD says the upload is complete: {headers}")

rest = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
name, value = completeness(True)
rest.request("PATCH", location, body=body[offset:], headers={
    **common, name: value, "Upload-Offset": str(offset),
    "Content-Type": "application/partial-upload" if version >= 6 else "application/offset+octet-stream"})
final = rest.getresponse()
answer = final.read()
print(json.dumps({"location": location, "interim": interim, "offset": offset, "status": final.status,
                  "complete": says_complete({k.lower(): v for k, v in final.getheaders()}),
                  "answer": json.loads(answer) if answer else None}))
