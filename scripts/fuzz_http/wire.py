"""Raw HTTP/1.1 requests as bytes, sent over a plain socket, and the status line of the answer."""

import socket
import time


class RawRequest:
    """A request kept in parts so a mutation can aim at one position; `raw` overrides the parts."""

    def __init__(self, method, target, headers, body=b"", label="", json=None):
        self.method = method  # bytes
        self.target = target  # bytes
        self.version = b"HTTP/1.1"
        self.headers = list(headers)  # [(bytes name, bytes value)]
        self.body = body
        self.label = label  # the catalogue entry and mutations applied, for the report
        self.json = json  # the body as a Python value, when it is JSON
        self.raw = None  # bytes sent as they are, when a mutation worked on the whole message
        self.automatic_length = True  # add Content-Length for the body unless a mutation set its own

    def copy(self):
        clone = RawRequest(self.method, self.target, self.headers, self.body, self.label, self.json)
        clone.version, clone.raw, clone.automatic_length = self.version, self.raw, self.automatic_length
        return clone

    def header(self, name):
        lower = name.lower()
        return next((value for key, value in self.headers if key.lower() == lower), None)

    def set_header(self, name, value):
        lower = name.lower()
        self.headers = [(key, val) for key, val in self.headers if key.lower() != lower] + [(name, value)]

    def remove_header(self, name):
        lower = name.lower()
        self.headers = [(key, val) for key, val in self.headers if key.lower() != lower]

    def encode(self):
        if self.raw is not None:
            return self.raw
        lines = [self.method + b" " + self.target + b" " + self.version]
        headers = list(self.headers)
        has_framing = any(key.lower() in (b"content-length", b"transfer-encoding") for key, _ in headers)
        if self.automatic_length and not has_framing and (self.body or self.method in (b"POST", b"PUT")):
            headers.append((b"Content-Length", str(len(self.body)).encode()))
        lines += [key + b": " + value for key, value in headers]
        return b"\r\n".join(lines) + b"\r\n\r\n" + self.body


class Exchange:
    """What came back: the status (None when the connection closed or timed out first)."""

    def __init__(self, status, timed_out, elapsed, head):
        self.status, self.timed_out, self.elapsed, self.head = status, timed_out, elapsed, head


def send(port, data, timeout, bodiless=False, half_close=False):
    """Sends `data` on a new connection and reads until one whole answer, a close, or `timeout`;
    `bodiless` for a `HEAD`, whose answer ends with its head; `half_close` ends the sending side
    after `data`, so that a server waiting for more of a body than was framed sees the end at once."""
    started = time.monotonic()
    received = b""
    timed_out = False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
            connection.settimeout(timeout)
            try:
                connection.sendall(data)
                if half_close:
                    connection.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the server may answer (413, 431) and close before it reads everything
            while not _complete(received, bodiless):
                try:
                    chunk = connection.recv(65536)
                except socket.timeout:
                    timed_out = True
                    break
                except OSError:
                    break
                if not chunk:
                    break
                received += chunk
    except OSError:
        pass
    head = received.split(b"\r\n\r\n", 1)[0][:2048]
    return Exchange(_status(received), timed_out, time.monotonic() - started, head)


def _status(received):
    parts = received.split(b" ", 2)
    if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
        return int(parts[1])
    return None


def _complete(received, bodiless=False):
    """Whether `received` holds a whole answer (an informational 1xx is not one)."""
    end = received.find(b"\r\n\r\n")
    if end < 0:
        return False
    head, body = received[:end], received[end + 4:]
    status = _status(received)
    if status is None:
        return True
    if 100 <= status < 200:
        return _complete(body, bodiless)
    if bodiless or status in (204, 304):
        return True
    fields = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip()
    if fields.get(b"transfer-encoding", b"").lower().endswith(b"chunked"):
        return body.endswith(b"0\r\n\r\n")
    length = fields.get(b"content-length")
    if length is not None and length.isdigit():
        return len(body) >= int(length)
    return False  # no framing: the body ends when the server closes
