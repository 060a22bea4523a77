#!/usr/bin/env python3
"""moto's S3 server for the tests, with its signature check reading the request as it was sent.

moto rebuilds the canonical request from the decoded path and query (getmoto/moto#5948), so a
correctly signed request whose key or query holds a character that is percent-encoded on the wire
(`prefix=a%2Fb`, a space in a key) is refused, even when botocore itself signed it. AWS, and
botocore's signer, canonicalize the encoded form. This wrapper hands moto's check the raw request
target; everything else is moto's own server (`moto_server`'s arguments are accepted as they are).

moto also fails (500) on pre-signed URLs once authentication is on: its check reads only the
Authorization header. Here a pre-signed request is checked the way S3 checks one: botocore's
query signer, given the key's secret, must produce the same X-Amz-Signature for the same
request, and the URL must not have expired (else 403).

moto lists a bucket from a copy of its keys but reads each key's versions from the bucket itself,
so a listing that meets a key deleted meanwhile by another request fails (500, KeyError). Here a
listing reads the versions from the same copy.
"""
import datetime
import sys
from unittest import mock
from urllib.parse import parse_qsl, quote

import botocore.auth
from botocore.awsrequest import AWSRequest
from moto.core import authorization
from moto.iam.access_control import create_access_key
from moto.s3.exceptions import S3AccessDeniedError, S3SignatureDoesNotMatchError
from moto.s3.utils import _VersionedKeyStore

checked = authorization.ActionAuthenticatorMixin._authenticate_and_authorize_action


def check_presigned(self, environ, target):
    path, _, query = target.partition("?")
    parameters = parse_qsl(query, keep_blank_values=True)
    given = dict(parameters)
    access_key_id, date, region, service, _ = given["X-Amz-Credential"].split("/")
    moment = datetime.datetime.strptime(given["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
    expires = int(given["X-Amz-Expires"])
    if datetime.datetime.utcnow() > moment + datetime.timedelta(seconds=expires):
        raise S3AccessDeniedError()
    key = create_access_key(account_id=self.current_account, partition="aws", access_key_id=access_key_id, headers=self.headers)
    own = [(name, value) for name, value in parameters if not name.startswith("X-Amz-")]
    url = "http://" + environ["HTTP_HOST"] + path + ("?" + "&".join(f"{quote(n, safe='-_.~')}={quote(v, safe='-_.~')}" for n, v in own) if own else "")
    request = AWSRequest(method=self.method, url=url)
    signer = botocore.auth.S3SigV4QueryAuth(key.create_credentials(), service, region, expires=expires)
    with mock.patch.object(botocore.auth, "get_current_datetime", return_value=moment):
        signer.add_auth(request)
    expected = dict(parse_qsl(request.url.partition("?")[2]))["X-Amz-Signature"]
    if expected != given["X-Amz-Signature"]:
        raise S3SignatureDoesNotMatchError()


def check_as_sent(self, iam_request_cls, resource="*"):
    request = getattr(self, "request", None)
    environ = getattr(request, "environ", {})
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if not target:
        return checked(self, iam_request_cls, resource)
    if "X-Amz-Signature=" in target and "Authorization" not in self.headers:
        if authorization.ActionAuthenticatorMixin.request_count < authorization.settings.INITIAL_NO_AUTH_ACTION_COUNT:
            return checked(self, iam_request_cls, resource)
        return check_presigned(self, environ, target)
    decoded = self.uri
    self.uri = "http://moto" + target
    try:
        return checked(self, iam_request_cls, resource)
    finally:
        self.uri = decoded


authorization.ActionAuthenticatorMixin._authenticate_and_authorize_action = check_as_sent


def items_of_copy(self):
    for key, versions in self._self_iterable().items():
        if versions:
            yield key, versions[-1]


def values_of_copy(self):
    for _, value in items_of_copy(self):
        yield value


_VersionedKeyStore._iteritems = _VersionedKeyStore.items = _VersionedKeyStore.iteritems = items_of_copy
_VersionedKeyStore._itervalues = _VersionedKeyStore.values = _VersionedKeyStore.itervalues = values_of_copy

from moto.server import main  # noqa: E402  (after the patch)

sys.exit(main())
