"""Uploads a file with tuspy, an independent tus 1.0 client, and prints the upload's URL.

    python3 tus_upload.py ENDPOINT FILE CHUNK_SIZE [checksum]

Creates the upload at ENDPOINT (with the file's name as `filename` metadata), then sends
it in requests of at most CHUNK_SIZE bytes; after a failed request it asks the server
for the offset and goes on from there (up to 20 times). With `checksum`, each request
carries an `Upload-Checksum` (tuspy's SHA-1). TUS_RETRY_DELAY (seconds, 0 unless set) is
the pause before each retry.
"""
import os
import sys

from tusclient import client

endpoint, path, chunk_size = sys.argv[1], sys.argv[2], int(sys.argv[3])
checksum = sys.argv[4:] == ["checksum"]
uploader = client.TusClient(endpoint).uploader(
    path, chunk_size=chunk_size, retries=20, retry_delay=float(os.environ.get("TUS_RETRY_DELAY", "0")), upload_checksum=checksum,
    metadata={"filename": os.path.basename(path), "filetype": "application/octet-stream"})
uploader.upload()
print(uploader.url)
