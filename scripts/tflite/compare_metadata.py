#!/usr/bin/env python3
"""Compares what ModelDepot read from models' metadata with tflite-support's MetadataDisplayer.

    compare_metadata.py OURS.json MODEL.tflite [OURS.json MODEL.tflite ...]

OURS.json is `depot inspect --json` of MODEL.tflite. For each pair the script checks, field by
field, that "modelMetadata" equals MetadataDisplayer.get_metadata_json() and that "packedFiles"
names the files of get_packed_associated_file_list(), in order, with the bytes
get_associated_file_buffer() returns (size). It prints one line per model:
    equal MODEL fields=N files=M
or  differs MODEL PATH: ours VALUE, reference VALUE
and exits 1 when any model differs. Run it with tflite-support 0.4.4 installed (scripts/bootstrap
puts it in .build/tflite-support).

flatc's JSON, which the displayer prints, leaves out scalars that hold the schema's default and
vectors that are absent; ModelDepot writes them. Those are removed from ours before comparing, and
so are the fields ModelDepot adds (custom metadata's "size"; "data" beyond the kept size).
"""
import json
import math
import sys

from tflite_support import metadata as _metadata

# Scalars flatc leaves out when they hold the schema's default (metadata_schema.fbs).
DEFAULTS = {"type": "UNKNOWN", "color_space": "UNKNOWN", "coordinate_type": "RATIO", "width": 0,
            "height": 0, "sample_rate": 0, "channels": 0, "min": 0, "max": 0,
            "score_transformation": "IDENTITY", "default_score": 0.0, "global_score_threshold": 0.0}
KEPT_CUSTOM_DATA = 4096


def normalized(value, key=None):
    if isinstance(value, dict):
        result = {}
        for k, v in value.items():
            if v is None or (isinstance(v, list) and not v and k != "index"):
                continue
            if k in DEFAULTS and not isinstance(v, (list, dict)) and v == DEFAULTS[k]:
                continue
            if key == "custom_metadata" and k == "size":
                continue
            result[k] = normalized(v, k)
        return result
    if isinstance(value, list):
        return [normalized(v, key) for v in value]
    return value


def reference_normalized(value, key=None):
    if isinstance(value, dict):
        return {k: reference_normalized(v, k) for k, v in value.items()
                if not (isinstance(v, list) and not v and k != "index")}
    if isinstance(value, list):
        if key == "custom_metadata":
            return [reference_custom(v) for v in value]
        return [reference_normalized(v, key) for v in value]
    return value


def reference_custom(entry):
    entry = dict(entry)
    if len(entry.get("data", [])) > KEPT_CUSTOM_DATA:
        del entry["data"]
    return {k: v for k, v in entry.items() if not (isinstance(v, list) and not v)}


def compare(ours, theirs, path, counter):
    if isinstance(theirs, dict) and isinstance(ours, dict):
        for key in sorted(set(ours) | set(theirs)):
            if key not in ours or key not in theirs:
                return "%s.%s: ours %s, reference %s" % (path, key, json.dumps(ours.get(key)), json.dumps(theirs.get(key)))
            found = compare(ours[key], theirs[key], "%s.%s" % (path, key), counter)
            if found:
                return found
        return None
    if isinstance(theirs, list) and isinstance(ours, list):
        if len(ours) != len(theirs):
            return "%s: ours has %d entries, reference %d" % (path, len(ours), len(theirs))
        for index, (a, b) in enumerate(zip(ours, theirs)):
            found = compare(a, b, "%s[%d]" % (path, index), counter)
            if found:
                return found
        return None
    counter[0] += 1
    if isinstance(theirs, float) or isinstance(ours, float):
        if isinstance(ours, (int, float)) and isinstance(theirs, (int, float)) and \
                math.isclose(ours, theirs, rel_tol=1e-6, abs_tol=1e-7):
            return None
    elif ours == theirs and type(ours) == type(theirs):
        return None
    return "%s: ours %s, reference %s" % (path, json.dumps(ours), json.dumps(theirs))


def main(arguments):
    if not arguments or len(arguments) % 2:
        sys.exit(__doc__)
    failed = False
    for ours_path, model in zip(arguments[0::2], arguments[1::2]):
        with open(ours_path) as handle:
            ours = json.load(handle)
        displayer = _metadata.MetadataDisplayer.with_model_file(model)
        theirs = reference_normalized(json.loads(displayer.get_metadata_json()))
        counter = [0]
        difference = compare(normalized(ours["modelMetadata"]), theirs, "modelMetadata", counter)
        packed = [(name, len(displayer.get_associated_file_buffer(name)))
                  for name in displayer.get_packed_associated_file_list()]
        ours_packed = [(f["name"], f["size"]) for f in ours.get("packedFiles") or []]
        if difference is None and ours_packed != packed:
            difference = "packedFiles: ours %s, reference %s" % (ours_packed, packed)
        if difference:
            failed = True
            print("differs %s %s" % (model, difference))
        else:
            print("equal %s fields=%d files=%d" % (model, counter[0], len(packed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
