#!/usr/bin/env python3
"""The console's upload in a real browser, side by side with the CLI and curl, on one server:

    console_upload.py DEPOT_BIN MODEL ROUNDS

Starts `depot serve` as shipped (request log on) on a free port of 127.0.0.1 with fresh storage,
creates model `bench`, and signs in to the console in Debian's Chromium (headless, driven by
chromedriver over WebDriver's HTTP protocol). Each round uploads MODEL (its weights varied first,
so every upload stores a new blob) once each way, in turn:

  browser  the console's upload field and button (upload.js streams the file with XMLHttpRequest);
           timed by the browser's own Resource Timing entry of that request
  cli      `depot upload bench MODEL` (the digest as a trailer, sendfile), wall time
  curl     `curl -T MODEL` to the admin API with the digest as a header, wall time

and prints MB/s (10^6 bytes) medians, the ratios browser/cli and browser/curl, and the server's
peak RSS (VmHWM) over the run, which shows whether the file was streamed.
"""
import json
import os
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from depot_server import DepotServer  # noqa: E402  (scripts/depot_server.py)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_line(path, pattern, process, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with open(path) as f:
            match = re.search(pattern, f.read())
        if match:
            return match
        if process.poll() is not None:
            sys.exit(f"{process.args[0]} exited before printing {pattern!r}")
        time.sleep(0.05)
    sys.exit(f"no {pattern!r} within {seconds} s")


class WebDriver:
    def __init__(self, port, profile):
        self.base = f"http://127.0.0.1:{port}"
        answer = self.call("POST", "/session", {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--user-data-dir={profile}"]}}}})
        self.session = f"/session/{answer['sessionId']}"
        self.call("POST", f"{self.session}/timeouts", {"implicit": 600_000})

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=900) as response:
            return json.load(response)["value"]

    def element(self, selector):
        return self.call("POST", f"{self.session}/element", {"using": "css selector", "value": selector})[ELEMENT]

    def open(self, url):
        self.call("POST", f"{self.session}/url", {"url": url})

    def type(self, selector, text):
        self.call("POST", f"{self.session}/element/{self.element(selector)}/value", {"text": text})

    def click(self, selector):
        self.call("POST", f"{self.session}/element/{self.element(selector)}/click", {})

    def run(self, script):
        return self.call("POST", f"{self.session}/execute/sync", {"script": script, "args": []})


def vary(model):
    """New weights in place; returns the new SHA-256 (hex)."""
    header = tempfile.mktemp()
    subprocess.run([sys.executable, os.path.join(HERE, "vary_upload_model.py"), model, header], check=True)
    with open(header) as f:
        digest = f.read().split(":", 1)[1].strip()
    os.unlink(header)
    return digest


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    depot, model, rounds = sys.argv[1], os.path.abspath(sys.argv[2]), int(sys.argv[3])
    size = os.path.getsize(model)
    work = tempfile.mkdtemp(prefix="depot-bench-console.")
    token = secrets.token_hex(16)
    env = dict(os.environ, DEPOT_ADMIN_TOKEN=token)
    processes = []
    server = None
    browser = None
    try:
        server = DepotServer(depot, os.path.join(work, "storage"), os.path.join(work, "serve.log"), ["--host", "127.0.0.1"], env)
        server.start()
        url = server.url
        cli_env = dict(os.environ, DEPOT_SERVER=url, DEPOT_TOKEN=token)
        subprocess.run([depot, "models", "create", "bench"], env=cli_env, check=True, stdout=subprocess.DEVNULL)

        port = free_port()
        driver_out = os.path.join(work, "driver.out")
        # Chromium needs the signals a parent may have blocked: unblock them, then become chromedriver.
        driver = subprocess.Popen([sys.executable, "-c", "import os, signal; signal.pthread_sigmask(signal.SIG_SETMASK, []); "
                                   f"os.execv('/usr/bin/chromedriver', ['chromedriver', '--port={port}'])"],
                                  stdout=open(driver_out, "w"), stderr=subprocess.DEVNULL)
        processes.append(driver)
        wait_for_line(driver_out, "started successfully", driver)
        browser = WebDriver(port, os.path.join(work, "profile"))
        browser.open(url + "/console/sign-in")
        browser.type("#token", token)
        browser.click("form[action='/console/sign-in'] button")

        times = {"browser": [], "cli": [], "curl": []}
        for round_number in range(rounds):
            vary(model)
            browser.open(url + "/console/models/bench")
            browser.type("#upload-file", model)
            # Timed in the page: from the submit event to the status saying the version is stored.
            browser.run("""
                const status = document.getElementById("upload-status");
                window.benchStart = null; window.benchEnd = null;
                document.getElementById("upload").addEventListener("submit", () => { window.benchStart = performance.now(); }, true);
                new MutationObserver(() => {
                  if (status.className === "done" && window.benchEnd === null) window.benchEnd = performance.now();
                }).observe(status, { attributes: true });
                """)
            browser.click("#upload button[type=submit]")
            browser.element("#upload-status.done, #upload-status.error")
            if browser.run("return document.getElementById('upload-status').className") != "done":
                sys.exit("the browser's upload failed: " + browser.run("return document.getElementById('upload-status').textContent"))
            times["browser"].append(browser.run("return window.benchEnd - window.benchStart;") / 1000)

            vary(model)
            started = time.monotonic()
            subprocess.run([depot, "upload", "bench", model], env=cli_env, check=True, stdout=subprocess.DEVNULL)
            times["cli"].append(time.monotonic() - started)

            digest = vary(model)
            started = time.monotonic()
            subprocess.run(["curl", "-sS", "-f", "-o", "/dev/null", "-X", "POST", "-T", model, "-H", f"Authorization: Bearer {token}",
                            "-H", f"Depot-Content-SHA256: {digest}", f"{url}/v1/admin/models/bench/versions"], check=True)
            times["curl"].append(time.monotonic() - started)
            print(f"round {round_number + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)

        with open(f"/proc/{server.pid}/status") as f:
            peak = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) / 1000
        rate = {k: size / statistics.median(v) / 1e6 for k, v in times.items()}
        print(f"\nupload of a {size / 1e6:,.0f} MB model, median of {rounds} rounds (MB = 10^6 bytes)")
        for name, label in [("browser", "console in Chromium (upload.js, XMLHttpRequest)"), ("cli", "depot upload (the CLI)"),
                            ("curl", "curl -T to the admin API")]:
            print(f"  {label:48} {rate[name]:8.1f} MB/s")
        print(f"  ratio console / CLI                              {rate['browser'] / rate['cli']:8.2f}x")
        print(f"  ratio console / curl                             {rate['browser'] / rate['curl']:8.2f}x")
        print(f"  ModelDepot peak RSS over the run (VmHWM)         {peak:8.1f} MB")
    finally:
        if browser:
            browser.call("DELETE", browser.session)  # closes Chromium before its profile is removed
        if server:
            server.stop()
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
