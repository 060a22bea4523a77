"""Starts `depot serve` for the project's Python scripts (the console benchmark, the HTTP fuzzer):
how they start a server, know it is ready and stop it. The shell scripts in scripts/bench do the
same with scripts/bench/depot.sh.

Ready means the server wrote its address to its --ready-file, which it does once it listens.

    server = DepotServer(binary, storage, log, arguments=[...], environment={...})
    server.start()     # waits (at most 60 s) until the server is ready; then .url, .port, .pid
    server.stop()      # SIGTERM, up to 10 s, then SIGKILL
"""

import pathlib
import subprocess
import time


class DepotServer:
    def __init__(self, binary, storage, log, arguments=(), environment=None):
        self.binary = str(binary)
        self.storage = pathlib.Path(storage)
        self.log_path = pathlib.Path(log)
        self.arguments = list(arguments)
        self.environment = environment
        self.ready_path = self.storage.parent / (self.storage.name + ".ready")
        self.process = None
        self.url = None
        self.port = None

    @property
    def pid(self):
        return self.process.pid

    def start(self, timeout=60):
        self.ready_path.unlink(missing_ok=True)
        arguments = [self.binary, "serve", "--port", "0", "--storage", str(self.storage),
                     "--ready-file", str(self.ready_path), *self.arguments]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            env=self.environment)
        deadline = time.monotonic() + timeout
        while not self.ready_path.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"depot serve exited ({self.process.returncode}) before it was ready; "
                                   f"the end of its log:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"depot serve was not ready within {timeout} s; the end of its log:\n{self.log_tail()}")
            time.sleep(0.05)
        self.url = self.ready_path.read_text().strip()
        self.port = int(self.url.rsplit(":", 1)[1])

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def stop(self, seconds=10):
        """SIGTERM, up to `seconds` for the server to end, then SIGKILL."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def log_tail(self, lines=15):
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""
