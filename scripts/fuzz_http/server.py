"""A `depot serve` of its own: a built binary on 127.0.0.1, a fresh storage directory, a known
admin token, and real objects (models, versions with a companion file, keys, a rollout rule and a
pin, console sessions) for the routes to find."""

import hashlib
import http.client
import json
import pathlib
import re
import shutil
import subprocess
import tempfile

from depot_server import DepotServer

ADMIN_TOKEN = "fuzz-admin-token-5b1e0a2c9d4f7e6b"


class DepotUnderTest:
    def __init__(self, binary, model_path, labels=b"daisy\ndandelion\nroses\n"):
        self.binary = binary
        self.model = pathlib.Path(model_path).read_bytes()
        self.labels = labels
        self.blob = hashlib.sha256(self.model).hexdigest()
        self.directory = tempfile.mkdtemp(prefix="depot-fuzz-http-")
        self.log_path = pathlib.Path(self.directory) / "server.log"
        self.server = None
        self.port = None
        self.fixtures = {"blob": self.blob, "labels_sha256": hashlib.sha256(labels).hexdigest()}

    # Process

    def start(self):
        storage = pathlib.Path(self.directory) / "storage"
        shutil.rmtree(storage, ignore_errors=True)
        arguments = ["--log-level", "error", "--auth-failure-allowance", "1000000000", "--head-timeout", "5", "--body-timeout", "5"]
        help_text = subprocess.run([self.binary, "serve", "--help"], capture_output=True, text=True).stdout
        if "--trusted-proxy" in help_text:  # so that X-Forwarded-* from 127.0.0.1 are parsed, not ignored
            arguments += ["--trusted-proxy", "127.0.0.1/32"]
        self.server = DepotServer(self.binary, storage, self.log_path, arguments,
                                  {"DEPOT_ADMIN_TOKEN": ADMIN_TOKEN, "PATH": "/usr/bin:/bin",
                                   "SWIFT_BACKTRACE": "enable=no"})  # a trap ends the process at once
        self.server.start()
        self.port = self.server.port
        self.make_fixtures()

    def stop(self):
        if self.server:
            self.server.stop()

    def remove(self):
        shutil.rmtree(self.directory, ignore_errors=True)

    def alive(self):
        return self.server.alive()

    def healthy(self, timeout=3.0):
        try:
            status, _, _ = self.call("GET", "/healthz", timeout=timeout)
            return status == 200
        except (OSError, http.client.HTTPException):
            return False

    def log_tail(self, lines=15):
        return self.server.log_tail(lines) if self.server else ""

    # Well-formed calls, for the fixtures

    def call(self, method, path, body=None, headers=None, timeout=10.0):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.headers, response.read()
        finally:
            connection.close()

    def admin(self, method, path, value=None, headers=None):
        fields = {"Authorization": f"Bearer {ADMIN_TOKEN}", **(headers or {})}
        body = value if isinstance(value, bytes) else None if value is None else json.dumps(value).encode()
        if value is not None and not isinstance(value, bytes):
            fields["Content-Type"] = "application/json"
        return self.call(method, path, body, fields)

    def make_fixtures(self):
        """Models `fuzz` (v1 published, v2 with a labels file published, a rule, a pin) and
        `scratch` and `spare` (for deletions), an app key, a key to revoke, two console sessions."""
        self.admin("POST", "/v1/admin/models", {"name": "fuzz", "description": "fuzzed", "tags": ["a"]})
        self.upload("fuzz", with_labels=False)
        self.upload("fuzz", with_labels=True)
        status, _, body = self.admin("POST", "/v1/admin/keys", {"kind": "app", "name": "fuzz app", "models": ["fuzz"]})
        if status != 201:
            raise RuntimeError(f"could not create the app key: {status} {body[:300]!r}")
        self.fixtures["app_secret"] = json.loads(body)["secret"]
        status, headers, _ = self.call("GET", "/v1/models/fuzz/manifest",
                                       headers={"Authorization": f"Bearer {self.fixtures['app_secret']}"})
        self.fixtures["manifest_etag"] = headers.get("ETag", '"x"') if status == 200 else '"x"'
        self.fixtures["cookie"], self.fixtures["csrf"] = self.console_session()
        self.refresh()

    def refresh(self):
        """Puts back what fuzzed requests may have removed: `scratch` and `spare` with a version, a key to
        revoke, `fuzz`'s rule and pin, a console session to sign out."""
        for model in ("scratch", "spare"):
            self.admin("POST", "/v1/admin/models", {"name": model})
            status, _, body = self.upload(model, with_labels=False)
            self.fixtures[f"{model}_version"] = str(json.loads(body)["version"]) if status == 201 else "1"
        status, _, body = self.admin("POST", "/v1/admin/keys", {"kind": "app", "name": "to revoke"})
        self.fixtures["revocable_key"] = json.loads(body)["id"] if status == 201 else "000000000000"
        self.admin("PUT", "/v1/admin/models/fuzz/rollout/rules/fuzz-rule",
                   {"conditions": ["platform=ios"], "shares": [{"version": 1, "basisPoints": 5000}, {"version": 2, "basisPoints": 5000}]})
        self.admin("PUT", "/v1/admin/models/fuzz/rollout/pins/device-1", {"version": 1})
        self.fixtures["sign_out_cookie"], self.fixtures["sign_out_csrf"] = self.console_session()

    def upload(self, model, with_labels):
        headers = {"Depot-Content-SHA256": self.blob}
        body = self.model
        if with_labels:
            digest = hashlib.sha256(self.labels).hexdigest()
            headers["Depot-Content-Length"] = str(len(self.model))
            headers["Depot-Companion-Files"] = f"name=labels;size={len(self.labels)};sha256={digest}"
            body = self.model + self.labels
        return self.admin("POST", f"/v1/admin/models/{model}/versions?publish=true", body, headers)

    def console_session(self):
        """A signed-in console: the cookie (`name=value`) and the CSRF token of its forms."""
        status, headers, _ = self.call("POST", "/console/sign-in", f"token={ADMIN_TOKEN}".encode(),
                                       {"Content-Type": "application/x-www-form-urlencoded"})
        cookie = (headers.get("Set-Cookie") or "").split(";")[0]
        if status != 303 or not cookie:
            raise RuntimeError(f"console sign-in failed: {status}")
        _, _, page = self.call("GET", "/console/models", headers={"Cookie": cookie})
        match = re.search(rb'name="csrf" value="([^"]+)"', page)
        return cookie, match.group(1).decode() if match else ""
