#!/usr/bin/env python3
"""Signs requests with botocore's own SigV4 signer, for the Swift signer's tests to compare.

Reads a JSON list of requests on stdin; each is {method, url, headers, payload ("unsigned" or
the body's SHA-256 hex), timestamp (seconds since 1970), access, secret, token, region,
presign_expires (optional)}. Writes, for each, {canonical_request, authorization} (or
{url} for a pre-signed one) as a JSON list.
"""
import datetime
import json
import sys
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def sign(spec):
    moment = datetime.datetime.fromtimestamp(spec["timestamp"], datetime.timezone.utc).replace(tzinfo=None)
    credentials = Credentials(spec["access"], spec["secret"], spec.get("token"))
    request = AWSRequest(method=spec["method"], url=spec["url"], headers=dict(spec["headers"]))
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=moment):
        if "presign_expires" in spec:
            signer = botocore.auth.S3SigV4QueryAuth(credentials, "s3", spec["region"], expires=spec["presign_expires"])
            signer.add_auth(request)
            return {"url": request.url}
        signer = botocore.auth.S3SigV4Auth(credentials, "s3", spec["region"])
        if spec["payload"] == "unsigned":
            signer._should_sha256_sign_payload = lambda _request: False
        else:
            signer.payload = lambda _request: spec["payload"]
        seen = []
        original = signer.canonical_request
        signer.canonical_request = lambda request: seen.append(original(request)) or seen[-1]
        signer.add_auth(request)
        return {"canonical_request": seen[0], "authorization": request.headers["Authorization"]}


json.dump([sign(spec) for spec in json.load(sys.stdin)], sys.stdout)
