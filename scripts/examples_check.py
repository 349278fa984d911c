#!/usr/bin/env python3
"""The checks of scripts/examples, one per subcommand; each exits non-zero saying what is wrong.

  articles                  every program of Examples/Sources is the Swift block of the
                            article that shows it, line for line
  stored OUTPUT SOURCE DIR  the receipt printed in OUTPUT names one file stored in DIR with
                            SOURCE's size and SHA-256
  parts OUTPUT SOURCE       the FormParts route read the form's field and SOURCE's size
  form SOURCE BOUNDARY      writes a form (a field title=Holiday and SOURCE as the file
                            photo) to standard output, for the CGI program
  presigned OUTPUT FILE     the request presigned-post printed: its fields in order, FILE
                            last, and a Content-Length that is its body's length
"""
import hashlib
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SWIFT_BLOCK = r"^```swift\n(.*?)^```"
# Each example program, and the article that shows it.
SHOWN_IN = {
    "upload-form": "Sources/FormPost/FormPost.docc/Uploading.md",
    "presigned-post": "Sources/FormPost/FormPost.docc/Uploading.md",
    "resumable-upload": "Sources/FormPost/FormPost.docc/ResumableUploads.md",
    "receive-uploads": "Sources/FormPostReceiving/FormPostReceiving.docc/ReceivingUploads.md",
    "receive-uploads-cgi": "Sources/FormPostReceiving/FormPostReceiving.docc/Architecture.md",
    "receive-uploads-vapor": "Sources/FormPostVapor/FormPostVapor.docc/ReceivingInVapor.md",
}


def fail(message):
    sys.exit(f"scripts/examples: {message}")


def articles():
    for program, article in SHOWN_IN.items():
        source = (ROOT / "Examples/Sources" / program / "main.swift").read_text()
        blocks = re.findall(SWIFT_BLOCK, (ROOT / article).read_text(), flags=re.S | re.M)
        if source not in blocks:
            fail(f"Examples/Sources/{program}/main.swift is no longer the Swift block of {article} that shows it: "
                 "make them the same again")


def receipt(output):
    """The JSON receipt in a program's output: its last line that is a JSON object."""
    for line in reversed(pathlib.Path(output).read_text().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    fail(f"{output} holds no receipt:\n" + pathlib.Path(output).read_text())


def form(source, boundary):
    head = (f'--{boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nHoliday\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="photo"; filename="photo.bin"\r\n'
            'Content-Type: application/octet-stream\r\n\r\n')
    sys.stdout.buffer.write(head.encode() + pathlib.Path(source).read_bytes() + f"\r\n--{boundary}--\r\n".encode())


def stored(output, source, directory):
    expected = hashlib.sha256(pathlib.Path(source).read_bytes()).hexdigest()
    files = receipt(output)["files"]
    if len(files) != 1:
        fail(f"{output}: the receipt names {len(files)} files, not 1")
    stored_file = pathlib.Path(directory) / files[0]["storedAs"]
    actual = hashlib.sha256(stored_file.read_bytes()).hexdigest()
    if actual != expected or files[0]["sha256"] != expected:
        fail(f"{stored_file}: SHA-256 {actual} (receipt: {files[0]['sha256']}), the source's is {expected}")
    if files[0]["size"] != pathlib.Path(source).stat().st_size:
        fail(f"{output}: the receipt's size {files[0]['size']} is not the source's")


def parts(output, source):
    text = pathlib.Path(output).read_text()
    size = pathlib.Path(source).stat().st_size
    for line in (f"file: {pathlib.Path(source).name}, {size} bytes", "title = Holiday"):
        if line not in text.splitlines():
            fail(f"{output}: the parts read lack the line {line!r}:\n{text}")


def presigned(output, file):
    raw = pathlib.Path(output).read_bytes()
    head, separator, body = raw.partition(b"\n\n")
    lines = head.decode().splitlines()
    fields = dict(line.split(": ", 1) for line in lines[1:])
    if not separator or not lines[0].startswith("POST https://"):
        fail(f"{output}: not a request head, a blank line and a body")
    if int(fields["Content-Length"]) != len(body):
        fail(f"{output}: Content-Length {fields['Content-Length']}, but the body has {len(body)} bytes")
    boundary = fields["Content-Type"].split("boundary=", 1)[1]
    names = re.findall(rb'Content-Disposition: form-data; name="([^"]*)"', body)
    expected = [b"key", b"x-amz-algorithm", b"x-amz-credential", b"x-amz-date", b"policy", b"x-amz-signature", b"file"]
    if names != expected:
        fail(f"{output}: parts {names}, expected the signed fields in order and the file last")
    content = pathlib.Path(file).read_bytes()
    if not body.endswith(b"\r\n\r\n" + content + b"\r\n--" + boundary.encode() + b"--\r\n"):
        fail(f"{output}: the body does not end with the file's bytes and the closing delimiter")


checks = {"articles": articles, "form": form, "stored": stored, "parts": parts, "presigned": presigned}
if len(sys.argv) < 2 or sys.argv[1] not in checks:
    sys.exit(__doc__)
checks[sys.argv[1]](*sys.argv[2:])
