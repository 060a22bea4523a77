"""Reads the block YAML of an OpenAPI document with the standard library only: mappings,
sequences, block scalars (`|`, `>`), flow sequences and mappings on one line, quoted and plain
scalars. Enough for openapi.yaml; not a general YAML parser."""

import json
import re

_KEY = re.compile(r"""^('(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|[^'"\s#][^:]*?):(?:\s+|$)""")


def load(text):
    lines = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            lines.append((len(raw) - len(raw.lstrip(" ")), raw.strip()))
    value, _ = _block(lines, 0, lines[0][0] if lines else 0)
    return value


def _block(lines, index, indent):
    if lines[index][1].startswith("- ") or lines[index][1] == "-":
        return _sequence(lines, index, indent)
    return _mapping(lines, index, indent)


def _mapping(lines, index, indent):
    result = {}
    while index < len(lines) and lines[index][0] == indent and not lines[index][1].startswith("- "):
        match = _KEY.match(lines[index][1])
        if not match:
            raise ValueError(f"line {index}: not a key: {lines[index][1]!r}")
        key = _scalar(match.group(1))
        rest = lines[index][1][match.end():].strip()
        index += 1
        if rest in ("|", ">", "|-", ">-", "|+", ">+"):
            parts = []
            while index < len(lines) and lines[index][0] > indent:
                parts.append(lines[index][1])
                index += 1
            result[key] = "\n".join(parts)
        elif rest:
            parts = [rest]
            while index < len(lines) and lines[index][0] > indent:  # a plain scalar folded over lines
                parts.append(lines[index][1])
                index += 1
            result[key] = _scalar(" ".join(parts))
        elif index < len(lines) and (lines[index][0] > indent or (lines[index][0] == indent and lines[index][1].startswith("- "))):
            result[key], index = _block(lines, index, lines[index][0])
        else:
            result[key] = None
    return result, index


def _sequence(lines, index, indent):
    result = []
    while index < len(lines) and lines[index][0] == indent and (lines[index][1].startswith("- ") or lines[index][1] == "-"):
        item = lines[index][1][2:].strip()
        if not item:
            value, index = _block(lines, index + 1, lines[index + 1][0])
        elif _KEY.match(item) and not item.startswith(("[", "{")):
            lines[index] = (indent + 2, item)  # `- key: value` opens a mapping two columns in
            value, index = _mapping(lines, index, indent + 2)
        else:
            value, index = _scalar(item), index + 1
        result.append(value)
    return result, index


def _scalar(text):
    text = text.strip()
    if text.startswith("'") and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("''", "'")
    if text.startswith('"') and text.endswith('"') and len(text) >= 2:
        return json.loads(text)
    if text.startswith("[") and text.endswith("]"):
        return [_scalar(part) for part in _split_flow(text[1:-1])]
    if text.startswith("{") and text.endswith("}"):
        entries = {}
        for part in _split_flow(text[1:-1]):
            key, _, value = part.partition(":")
            entries[_scalar(key)] = _scalar(value)
        return entries
    if text in ("null", "~", ""):
        return None
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?\d+\.\d*(e[-+]?\d+)?", text):
        return float(text)
    return text


def _split_flow(text):
    parts, depth, current, quote = [], 0, "", None
    for char in text:
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += char
    if current.strip():
        parts.append(current)
    return parts
