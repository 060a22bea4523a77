"""JSON bodies written byte by byte, so they can hold what `json.dumps` refuses (NaN, numbers past
any integer type, invalid UTF-8 in strings), and the mutations of their leaves and shapes."""

import json

from . import hostile


class Raw:
    """Bytes written into the JSON as they are."""

    def __init__(self, data):
        self.data = data


def encode(value):
    if isinstance(value, Raw):
        return value.data
    if isinstance(value, dict):
        return b"{" + b",".join(encode(str(key)) + b":" + encode(item) for key, item in value.items()) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(encode(item) for item in value) + b"]"
    if isinstance(value, bytes):  # a string's raw bytes, escaped only where JSON demands
        return b'"' + value.replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'
    return json.dumps(value).encode()


def _leaves(value, path=()):
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list):
        yield path
        for index, item in enumerate(value):
            yield from _leaves(item, path + (index,))
    else:
        yield path


def _replace(value, path, new):
    if not path:
        return new
    if isinstance(value, dict):
        copy = dict(value)
    else:
        copy = list(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


def _leaf_values():
    values = [Raw(number) for number in hostile.NUMBERS if number and number[0:1] in b"-0123456789"]
    values += [Raw(b"NaN"), Raw(b"Infinity"), Raw(b"-Infinity"), Raw(b"1e99999"), Raw(b"-"), Raw(b"01"), Raw(b"1."),
               Raw(b'"\\ud800"'), Raw(b'"\\u0000"'), Raw(b'"\\x"'), Raw(b"'single'")]
    values += hostile.TEXT  # as strings, their raw bytes
    values += [None, True, False, [], {}, [None], {"": None}, 0.1, -0.0, 1.7976931348623157e308, [1] * 1000]
    return values


LEAF_VALUES = _leaf_values()


def mutate(body, rng):
    """A hostile variant of a well-formed body (a Python value); returns (bytes, description)."""
    choice = rng.randrange(10)
    if choice <= 4:
        path = rng.choice(list(_leaves(body)))
        value = rng.choice(LEAF_VALUES)
        return encode(_replace(body, path, value)), f"json leaf {list(path)} = {_describe(value)}"
    if choice == 5:
        depth = rng.choice([100, 1000, 10000, 100000])
        opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
        return opener * depth + b"1" + closer * depth, f"json nested {depth} deep"
    if choice == 6:
        path = rng.choice(list(_leaves(body)))
        wrapped = _replace(body, path, Raw(b"[" * 10000 + b"]" * 10000))
        return encode(wrapped), f"json leaf {list(path)} nested 10000 deep"
    if choice == 7:
        encoded = encode(body)
        cut = rng.randrange(len(encoded) + 1)
        return encoded[:cut], f"json cut at {cut}"
    if choice == 8:
        shape = rng.choice([b"", b"null", b"[]", b"{}", b"1", b'"x"', b"{" * 3, b'{"a":1,"a":2}', b"\xef\xbb\xbf{}",
                            b"{}" * 2, b'{"' + b"k" * 70000 + b'":1}', b"\xff\xfe{}", b'{"name":"' + b"\xff" * 10 + b'"}'])
        return shape, f"json shape {_describe(Raw(shape))}"
    if isinstance(body, dict) and body:
        key = rng.choice(list(body))
        trimmed = {name: item for name, item in body.items() if name != key}
        return encode(trimmed), f"json without {key!r}"
    return encode({"extra": Raw(b"1" * 400)}), "json extra member"


def _describe(value):
    data = value.data if isinstance(value, Raw) else value if isinstance(value, bytes) else json.dumps(value).encode()
    return repr(data[:60]) + (f"… ({len(data)} bytes)" if len(data) > 60 else "")
