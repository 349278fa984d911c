#!/usr/bin/env python3
"""Parses a multipart/form-data body with an independent parser and prints its parts as JSON.

usage: parse_form.py werkzeug|python-multipart BODY_FILE CONTENT_TYPE
Each part: {"name", "filename" (or null), "content_type" (or null), "size", "sha256"}.
Werkzeug separates fields from files; they are printed fields first, then files.
"""
import hashlib
import io
import json
import sys


def describe(name, filename, content_type, data):
    return {"name": name, "filename": filename, "content_type": content_type,
            "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def with_werkzeug(body, content_type):
    from werkzeug.formparser import parse_form_data
    environ = {"REQUEST_METHOD": "POST", "CONTENT_TYPE": content_type,
               "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
    _, form, files = parse_form_data(environ, max_form_memory_size=None)
    parts = [describe(k, None, None, v.encode("utf-8")) for k, v in form.items(multi=True)]
    parts += [describe(k, f.filename, f.content_type, f.read()) for k, f in files.items(multi=True)]
    return parts


def with_python_multipart(body, content_type):
    try:
        from python_multipart.multipart import MultipartParser, parse_options_header
    except ImportError:
        from multipart.multipart import MultipartParser, parse_options_header
    _, options = parse_options_header(content_type)
    parts, current = [], {}

    def on_part_begin():
        current.clear()
        current.update(headers={}, data=bytearray(), field=b"", value=b"")

    def on_header_field(data, start, end):
        current["field"] += data[start:end]

    def on_header_value(data, start, end):
        current["value"] += data[start:end]

    def on_header_end():
        current["headers"][current["field"].decode("utf-8").lower()] = bytes(current["value"])
        current["field"], current["value"] = b"", b""

    def on_part_data(data, start, end):
        current["data"] += data[start:end]

    def on_part_end():
        _, disposition = parse_options_header(current["headers"].get("content-disposition", b""))
        filename = disposition.get(b"filename")
        content_type = current["headers"].get("content-type")
        parts.append(describe(disposition[b"name"].decode("utf-8"), filename.decode("utf-8") if filename is not None else None,
                              content_type.decode("utf-8") if content_type is not None else None, bytes(current["data"])))

    parser = MultipartParser(options[b"boundary"], {
        "on_part_begin": on_part_begin, "on_header_field": on_header_field, "on_header_value": on_header_value,
        "on_header_end": on_header_end, "on_part_data": on_part_data, "on_part_end": on_part_end})
    parser.write(body)
    parser.finalize()
    return parts


if __name__ == "__main__":
    which, path, content_type = sys.argv[1:4]
    with open(path, "rb") as handle:
        body = handle.read()
    parse = {"werkzeug": with_werkzeug, "python-multipart": with_python_multipart}[which]
    print(json.dumps(parse(body, content_type), ensure_ascii=False))
