"""Input positions of a request and the hostile variants of each: path segments, query values,
every header the server reads, form fields and their names, JSON leaves and shapes, the framing
(`Content-Length`, `Transfer-Encoding`), the request line, and stray bytes anywhere."""

import urllib.parse

from . import hostile, json_shapes

FORM_SHAPES = [b"token=a b", b"token=%", b"token=%zz", b"token=%ff%fe", b"token=\xff", b"&&&", b"=", b"==&==", b"a",
               b"%", b"+", b"token", b"token=a=b", b"token=a&token=b", b"&token=" + b"%41" * 5000, b"csrf=" + b"x" * 70000,
               b"token=a%00b", b"token=%C0%80", b"\x00=\x00", b"token=a;b", b"token=<>\"'", b"token=+%2B+"]
METHODS = [b"GET", b"HEAD", b"POST", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"TRACE", b"CONNECT", b"get", b"G\x00T",
           b"PRI", b"X" * 300, b""]
VERSIONS = [b"HTTP/1.0", b"HTTP/2.0", b"HTTP/1.2", b"HTTP/1.1x", b"HTTP/", b"", b"HTTP/9.9", b"http/1.1", b"HTTP/1.1 extra"]
TARGETS = [b"*", b"http://127.0.0.1/healthz", b"//", b"/%", b"/%zz", b"/..", b"/./v1/../console", b"/" + b"a" * 20000,
           b"/console/" + b"%2F" * 1000, b"/v1/models/fuzz/manifest?" + b"&" * 5000, b"/v1/models/%00/manifest",
           b"/console?x=%", b"/v1//admin//models", b"/\xff\xfe", b"", b"/ ", b"/#frag", b"/?#"]
HEADER_INJECTIONS = [b"x\r\nX-Injected: 1", b"x\rX", b"x\nX", b"\r\n", b"x\r\n\r\nGET / HTTP/1.1"]


class Position:
    def __init__(self, name, values, apply):
        self.name, self.values, self.apply = name, values, apply


def _encoded(value, rng):
    """The value raw or percent-encoded, as a target would carry it."""
    if rng is not None and rng.random() < 0.5:
        return value, "raw"
    return urllib.parse.quote_from_bytes(value, safe=b"").encode(), "encoded"


def positions(request, header_names, query_names):
    found = []
    path, _, query = request.target.partition(b"?")
    segments = path.split(b"/")
    for index in range(1, len(segments)):
        def set_segment(request, value, rng, index=index):
            path, mark, query = request.target.partition(b"?")
            parts = path.split(b"/")
            parts += [b""] * (index + 1 - len(parts))  # an earlier mutation may have shortened the target
            parts[index], how = _encoded(value, rng)
            request.target = b"/".join(parts) + mark + query
            return how
        found.append(Position(f"path segment {index}", hostile.TEXT + hostile.NUMBERS, set_segment))
    for name in query_names:
        def set_query(request, value, rng, name=name.encode()):
            path, _, query = request.target.partition(b"?")
            pairs = [pair for pair in query.split(b"&") if pair and pair.split(b"=")[0] != name]
            encoded, how = _encoded(value, rng)
            request.target = path + b"?" + b"&".join(pairs + [name + b"=" + encoded])
            return how
        found.append(Position(f"query {name}", hostile.TEXT + hostile.NUMBERS, set_query))
    for name in header_names:
        def set_header(request, value, rng, name=name.encode()):
            request.set_header(name, value)
            if name.lower() in (b"content-length", b"transfer-encoding"):
                request.automatic_length = False
            return ""
        found.append(Position(f"header {name}", hostile.for_header(name.encode()) + HEADER_INJECTIONS, set_header))
    if request.header(b"Content-Type") == b"application/x-www-form-urlencoded":
        fields = urllib.parse.parse_qsl(request.body.decode(), keep_blank_values=True)
        for field, _ in fields:
            def set_field(request, value, rng, field=field, fields=fields):
                encoded, how = _encoded(value, rng)
                request.body = b"&".join(urllib.parse.quote(name).encode() + b"=" +
                                         (encoded if name == field else urllib.parse.quote(old).encode()) for name, old in fields)
                return how
            found.append(Position(f"form field {field}", hostile.TEXT + hostile.NUMBERS, set_field))
        def set_field_name(request, value, rng, fields=fields):
            name, how = _encoded(value, rng)
            request.body += b"&" + name + b"=1"
            return how
        found.append(Position("form field name", [b"share-" + number for number in hostile.NUMBERS] + hostile.TEXT, set_field_name))
        def set_form(request, value, rng):
            request.body = value
            return ""
        found.append(Position("form body", FORM_SHAPES, set_form))
    if request.json is not None:
        def set_json(request, value, rng):
            request.body, description = json_shapes.mutate(request.json, rng)
            return description
        found.append(Position("json", [None], set_json))
    def set_chunked(request, value, rng):
        request.remove_header(b"Content-Length")
        request.set_header(b"Transfer-Encoding", b"chunked")
        request.automatic_length = False
        request.body = value
        return ""
    found.append(Position("chunked body", hostile.CHUNKED_BODIES, set_chunked))
    def set_method(request, value, rng):
        request.method = value
        return ""
    found.append(Position("method", METHODS, set_method))
    def set_version(request, value, rng):
        request.version = value
        return ""
    found.append(Position("version", VERSIONS, set_version))
    def set_target(request, value, rng):
        request.target = value
        return ""
    found.append(Position("target", TARGETS, set_target))
    return found


def mutate(request, position, value, rng):
    mutated = request.copy()
    how = position.apply(mutated, value, rng)
    shown = repr(value[:60]) + (f"… ({len(value)} bytes)" if len(value) > 60 else "") if isinstance(value, bytes) else ""
    mutated.label += f" | {position.name} = {shown} {how}".rstrip()
    return mutated


def havoc(request, rng):
    """Stray bytes: flipped, inserted, removed or cut anywhere in the encoded request."""
    data = bytearray(request.encode())
    steps = []
    for _ in range(rng.randint(1, 4)):
        if not data:
            break
        index = rng.randrange(len(data))
        choice = rng.randrange(4)
        if choice == 0:
            data[index] ^= 1 << rng.randrange(8)
            steps.append(f"flip@{index}")
        elif choice == 1:
            data[index:index] = bytes([rng.randrange(256)])
            steps.append(f"insert@{index}")
        elif choice == 2:
            del data[index]
            steps.append(f"delete@{index}")
        else:
            del data[index:]
            steps.append(f"cut@{index}")
    mutated = request.copy()
    mutated.raw = bytes(data)
    mutated.label += " | havoc " + " ".join(steps)
    return mutated
