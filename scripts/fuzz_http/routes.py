"""The routes to drive, read from the server's own sources: every operation of openapi.yaml and
every console route registered in Server/ModelDepotServer/Console, with the form fields the
console reads and the header names the server declares."""

import pathlib
import re

from . import yaml_subset

METHODS = ("get", "head", "post", "put", "delete", "patch")


class Route:
    def __init__(self, method, path, query=(), headers=(), body=None, content_type=None, form_fields=(), examples=None):
        self.method = method.upper()
        self.path = path  # with {parameter}s
        self.query = list(query)  # names
        self.headers = list(headers)  # names
        self.body = body  # a JSON example (a Python value), b"model" for the raw model, or None
        self.content_type = content_type
        self.form_fields = list(form_fields)
        self.examples = examples or {}  # parameter name -> example value

    @property
    def name(self):
        return f"{self.method} {self.path}"


def openapi_routes(document_path):
    document = yaml_subset.load(pathlib.Path(document_path).read_text())
    components = document.get("components", {})

    def resolve(node):
        while isinstance(node, dict) and "$ref" in node:
            node = _pointer(document, node["$ref"])
        return node

    routes = []
    for path, item in document["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            parameters = [resolve(parameter) for parameter in item.get("parameters", []) + operation.get("parameters", [])]
            examples = {p["name"]: p["example"] if "example" in p else p.get("schema", {}).get("default") for p in parameters}
            examples = {name: value for name, value in examples.items() if value is not None}
            body, content_type = None, None
            content = (resolve(operation.get("requestBody")) or {}).get("content", {})
            if "application/json" in content:
                media = content["application/json"]
                body = media["example"] if "example" in media else _example(resolve(media.get("schema", {})), resolve)
                content_type = "application/json"
            elif content:
                body, content_type = b"model", next(iter(content))
            routes.append(Route(method, path,
                                query=[p["name"] for p in parameters if p.get("in") == "query"],
                                headers=[p["name"] for p in parameters if p.get("in") == "header"],
                                body=body, content_type=content_type, examples=examples))
    if not components:
        raise ValueError("openapi.yaml has no components")
    return routes


def _pointer(document, reference):
    node = document
    for part in reference.lstrip("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _example(schema, resolve, depth=0):
    """A value that fits `schema`, from its examples where it has them."""
    schema = resolve(schema)
    if depth > 6 or not isinstance(schema, dict):
        return None
    if "example" in schema:
        return schema["example"]
    for combinator in ("oneOf", "anyOf", "allOf"):
        if combinator in schema:
            return _example(schema[combinator][0], resolve, depth + 1)
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        return {name: _example(sub, resolve, depth + 1) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [_example(schema.get("items", {}), resolve, depth + 1)]
    return {"integer": 1, "number": 1.5, "boolean": True, "string": "x"}.get(kind)


_CONSOLE_ROUTE = re.compile(r'console\.(get|post|put|delete)(?:\(\s*"([^"]*)"|\s*\{)')
_FIELD_LOOKUP = re.compile(r'\["(\w+)"\]')
_FIELD_PREFIX = re.compile(r'hasPrefix\("(\w+-)"\)')


def console_routes(console_directory):
    """Every `console.get/post(...)` in the console's sources, with every form field they read."""
    sources = "\n".join(path.read_text() for path in sorted(pathlib.Path(console_directory).glob("*.swift")))
    fields = {field for line in sources.splitlines() if "form" in line.lower() for field in _FIELD_LOOKUP.findall(line)}
    fields |= {prefix + number for prefix in _FIELD_PREFIX.findall(sources) for number in ("1", "2")}  # `share-<version>`
    fields = sorted(fields)
    routes = []
    for method, path in sorted(set(_CONSOLE_ROUTE.findall(sources))):
        full = "/console" + ("/" + path if path else "")
        full = re.sub(r":(\w+)", r"{\1}", full)
        routes.append(Route(method, full, form_fields=fields if method == "post" else ()))
    return routes


_HEADER_NAME = re.compile(r'(?:HTTPField\.Name\(|Self\(|static let \w+ = )"([A-Za-z][A-Za-z0-9-]*)"')
# Standard fields the server reads (HTTP framing, conditions, authentication, proxies).
STANDARD_HEADERS = ["Authorization", "Content-Length", "Content-Type", "Cookie", "Expect", "Host", "If-Match",
                    "If-None-Match", "If-Range", "Range", "Trailer", "Transfer-Encoding", "X-Forwarded-For",
                    "X-Forwarded-Proto"]


def declared_headers(*directories):
    """Header names the sources declare (`HTTPField.Name("…")`, `DepotHeader`'s constants) and
    the standard ones the server reads."""
    names = set(STANDARD_HEADERS)
    for directory in directories:
        for path in pathlib.Path(directory).rglob("*.swift"):
            for name in _HEADER_NAME.findall(path.read_text()):
                if "-" in name and name != name.upper():
                    names.add(name)
    return sorted(names)


_QUERY_NAME = re.compile(r'queryParameters\.get\("(\w+)"')


def query_names(directory, routes):
    """Every query parameter the routes declare or the sources read."""
    names = {name for route in routes for name in route.query}
    for path in pathlib.Path(directory).rglob("*.swift"):
        names.update(_QUERY_NAME.findall(path.read_text()))
    return sorted(names)
