#!/usr/bin/env python3
"""What an S3-compatible store holds, read back with boto3 (an independent client): for
a bucket, every object's key, size, SHA-256 (of the bytes read back), content type,
metadata and tags, and the multipart uploads still in progress; printed as JSON. An object
removed between the listing and its read is left out.
  s3_objects.py ENDPOINT BUCKET            list the bucket
  s3_objects.py ENDPOINT BUCKET --create   create the bucket (empty) first
Credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, region us-east-1."""
import hashlib
import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def main():
    endpoint, bucket = sys.argv[1], sys.argv[2]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    if "--create" in sys.argv[3:]:
        s3.create_bucket(Bucket=bucket)
    objects = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for item in page.get("Contents", []):
            try:
                got = s3.get_object(Bucket=bucket, Key=item["Key"])
                digest = hashlib.sha256()
                for chunk in iter(lambda: got["Body"].read(1 << 20), b""):
                    digest.update(chunk)
                tags = s3.get_object_tagging(Bucket=bucket, Key=item["Key"])["TagSet"]
            except ClientError as error:
                # Removed between the listing and the read (a receiver's sweep at work): not there.
                if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                    continue
                raise
            objects.append({"key": item["Key"], "size": item["Size"], "sha256": digest.hexdigest(),
                            "contentType": got.get("ContentType"), "metadata": got.get("Metadata", {}),
                            "tags": {tag["Key"]: tag["Value"] for tag in tags}})
    uploads = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    print(json.dumps({"objects": objects, "multipartUploads": [upload["Key"] for upload in uploads]}))


if __name__ == "__main__":
    main()
