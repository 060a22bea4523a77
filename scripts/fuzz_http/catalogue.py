"""Well-formed requests, one per route, built from the routes and the server's fixtures: the
starting points every mutation changes one position of."""

import urllib.parse

from . import json_shapes
from .server import ADMIN_TOKEN
from .wire import RawRequest

# Operations that remove what other requests need are aimed at `scratch` and a key made to be revoked.
_DESTRUCTIVE_SUFFIXES = ("/delete", "/unpublish", "/revoke")


def _destructive(route):
    return (route.method == "DELETE" and "/rollout/" not in route.path) or route.path.endswith(_DESTRUCTIVE_SUFFIXES)


def path_values(route, fixtures):
    """`scratch` for deleting a model, `spare` for deleting or unpublishing its versions, `fuzz` for the rest."""
    name = "fuzz"
    if _destructive(route):
        name = "spare" if "/versions/" in route.path else "scratch"
    return {
        "name": name,
        "number": fixtures[f"{name}_version"] if name != "fuzz" else "1",
        "hex": fixtures["blob"],
        "file": "console.css" if route.path.startswith("/console/assets/") else "1.json",
        "rule": "fuzz-rule",
        "installationID": "device-1",
        "id": fixtures["revocable_key"],
    }


def form_values(route, fixtures):
    confirm = "no"  # a rollout change shows its preview
    if route.path.endswith("/versions/{number}/delete"):
        confirm = fixtures["spare_version"]
    elif route.path.endswith("/models/{name}/delete"):
        confirm = "scratch"
    values = {
        "token": ADMIN_TOKEN, "csrf": fixtures["sign_out_csrf" if route.path.endswith("/sign-out") else "csrf"],
        "name": "made-by-fuzzer", "description": "d", "tags": "a, b", "confirm": confirm, "basis": "",
        "version": "1", "kind": "app", "models": "fuzz", "rule": "fuzz-rule", "conditions": "platform=ios",
        "installation": "device-1", "share-1": "50", "share-2": "50",
    }
    return {field: values.get(field, "x") for field in route.form_fields}


def query_values(route):
    chosen = {"publish": "true", "notes": "fuzz", "force": "true", "dryRun": "true"}
    return {name: str(chosen.get(name, route.examples.get(name, "1"))) for name in route.query}


def device_headers(route, fixtures):
    """The headers a route reads, with working values."""
    known = {
        "If-None-Match": fixtures["manifest_etag"], "Range": "bytes=0-99", "If-Range": f'"{fixtures["blob"]}"',
        "Depot-Arm": "default", "Depot-Installation-ID": "device-1", "Depot-Platform": "ios", "Depot-App-Version": "3.2.0",
        "Depot-OS-Version": "17.4", "Depot-SDK-Version": "1.0.0", "Depot-Country": "DE", "Depot-Attributes": "tier=gold,beta=true",
    }
    return [(name, known.get(name, str(route.examples.get(name, "x")))) for name in route.headers
            if not name.startswith("Depot-Content") and name != "Depot-Companion-Files"]


def build(route, fixtures, model, labels, form_encode=urllib.parse.urlencode):
    """The well-formed request for `route`."""
    values = path_values(route, fixtures)
    path = route.path
    for name, value in values.items():
        path = path.replace("{" + name + "}", urllib.parse.quote(value, safe=""))
    query = query_values(route)
    target = path + ("?" + urllib.parse.urlencode(query) if query else "")
    headers = [(b"Host", b"127.0.0.1")]
    if path.startswith("/v1/admin/"):
        headers.append((b"Authorization", f"Bearer {ADMIN_TOKEN}".encode()))
    elif path.startswith("/v1/"):
        headers.append((b"Authorization", f"Bearer {fixtures['app_secret']}".encode()))
    elif path.startswith("/console") and not path.endswith("/sign-in"):
        cookie = fixtures["sign_out_cookie" if path.endswith("/sign-out") else "cookie"]
        headers.append((b"Cookie", cookie.encode()))
    headers += [(name.encode(), value.encode()) for name, value in device_headers(route, fixtures)]
    body = b""
    if route.form_fields and not path.endswith("/versions"):
        body = form_encode(form_values(route, fixtures)).encode()
        headers.append((b"Content-Type", b"application/x-www-form-urlencoded"))
    elif route.body == b"model" or (path.startswith("/console/") and path.endswith("/versions") and route.method == "POST"):
        body = model + labels
        headers += [(b"Content-Type", b"application/octet-stream"), (b"Depot-Content-Length", str(len(model)).encode()),
                    (b"Depot-Companion-Files", f"name=labels;size={len(labels)};sha256={fixtures['labels_sha256']}".encode())]
        if path.startswith("/console/"):
            headers.append((b"X-Depot-CSRF", fixtures["csrf"].encode()))
    elif route.body is not None:
        body = json_shapes.encode(_fitted(route.body))
        headers.append((b"Content-Type", b"application/json"))
    json_body = _fitted(route.body) if route.body not in (None, b"model") else None
    return RawRequest(route.method.encode(), target.encode(), headers, body, label=route.name, json=json_body)


def _fitted(value):
    """The document's example aimed at the fixtures: versions 1 and 2, the model `fuzz`."""
    if isinstance(value, dict):
        fitted = {key: _fitted(item) for key, item in value.items()}
        if isinstance(fitted.get("version"), int):
            fitted["version"] = 1 + (fitted["version"] % 2)
        if isinstance(fitted.get("models"), list):
            fitted["models"] = ["fuzz"]
        return fitted
    if isinstance(value, list):
        return [_fitted(item) for item in value]
    return value
