#!/usr/bin/env python3
"""Uploads a form with Python requests (HTTP/1.1) and prints the answer's body.

usage: upload_requests.py URL CA_FILE FILE
The form: a field title=hi and the file as part "photo"; the server is verified against CA_FILE.
"""
import sys

import requests

url, ca_file, path = sys.argv[1:4]
with open(path, "rb") as file:
    response = requests.post(url, data={"title": "hi"}, files={"photo": ("photo.bin", file)}, verify=ca_file, timeout=60)
response.raise_for_status()
sys.stdout.write(response.text)
