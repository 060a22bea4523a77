#!/usr/bin/env python3
"""Writes Shared/ModelDepotShared/TFLite/TFLiteSchema+Tables.swift and
Shared/ModelDepotShared/TFLite/Metadata/TFLiteMetadataSchema+Tables.swift.

The table layouts (every field's vtable slot and kind), the union members and the enum
names that the Swift verifier needs, derived from the schemas' generated Python: the TFLite
schema that the `ai-edge-litert` wheel ships (`schema_py_generated.py`) and the TFLite Model
Metadata schema that the `tflite-support` wheel ships (`metadata_schema_py_generated.py`).

    pip install ai-edge-litert==2.3.0 tflite-support==0.4.4
    python3 scripts/tflite/generate_schema.py
"""
import importlib.util
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TFLITE_DIR = os.path.join(ROOT, "Shared", "ModelDepotShared", "TFLite")

FLAG_SIZES = {"Bool": 1, "Uint8": 1, "Int8": 1, "Uint16": 2, "Int16": 2, "Uint32": 4,
              "Int32": 4, "Float32": 4, "Uint64": 8, "Int64": 8, "Float64": 8}
SKIPPED_SUFFIXES = ("AsNumpy", "Length", "IsNone")
# Per schema: the package whose generated Python holds it, the file, the Swift namespace,
# the tables whose slots the Swift code reads by name, and the enums whose names it needs.
SCHEMAS = [
    ("ai_edge_litert", "schema_py_generated.py", "TFLiteSchema", "TFLiteSchema+Tables.swift",
     ["Model", "SubGraph", "Tensor", "Operator", "OperatorCode", "Buffer", "Metadata",
      "SignatureDef", "TensorMap", "QuantizationParameters"],
     ["BuiltinOperator", "TensorType"]),
    ("tensorflow_lite_support", os.path.join("metadata", "metadata_schema_py_generated.py"),
     "TFLiteMetadataSchema", os.path.join("Metadata", "TFLiteMetadataSchema+Tables.swift"),
     ["ModelMetadata", "SubGraphMetadata", "TensorMetadata", "AssociatedFile", "Content",
      "ImageProperties", "ImageSize", "BoundingBoxProperties", "AudioProperties", "ValueRange",
      "ProcessUnit", "NormalizationOptions", "ScoreCalibrationOptions",
      "ScoreThresholdingOptions", "BertTokenizerOptions", "SentencePieceTokenizerOptions",
      "RegexTokenizerOptions", "Stats", "TensorGroup", "CustomMetadata"],
     ["AssociatedFileType", "ColorSpaceType", "BoundingBoxType", "CoordinateType",
      "ScoreTransformationType", "ContentProperties", "ProcessUnitOptions"]),
]


def lower_camel(name):
    return name[0].lower() + name[1:]


def parse(source):
    classes = {}
    for match in re.finditer(r"^class (\w+)\(object\):\n(.*?)(?=^\S)", source, re.S | re.M):
        classes[match.group(1)] = match.group(2)
    enums, tables = {}, {}
    for name, body in classes.items():
        if "def GetRootAs(" in body:
            tables[name] = body
        elif re.search(r"^    \w+ = -?\d+$", body, re.M) and "def " not in body:
            enums[name] = [(m.group(1), int(m.group(2)))
                           for m in re.finditer(r"^    (\w+) = (-?\d+)$", body, re.M)]
    return classes, enums, tables


def fields_of(table, body, classes):
    object_api = classes.get(table + "T", "")
    fields = []
    for method in re.finditer(r"    # \w+\n    def (\w+)\(self(, j)?\):\n(.*?)(?=\n    # |\Z)", body, re.S):
        name, body_text = method.group(1), method.group(3)
        if name.endswith(SKIPPED_SUFFIXES) or "self._tab.Offset(" not in body_text:
            continue
        slot = (int(re.search(r"self\._tab\.Offset\((\d+)\)", body_text).group(1)) - 4) // 2
        scalar = re.search(r"number_types\.(\w+)Flags, (o|a) \+", body_text)
        element_table = re.search(r"obj = (\w+)\(\)", body_text)
        if "self._tab.Union(" in body_text:
            creator = re.search(r"self\.%s = (\w+)Creator\(" % lower_camel(name), object_api).group(1)
            kind = ("union", creator)
        elif "self._tab.Vector(o)" in body_text:
            if element_table:
                kind = ("tableVector", element_table.group(1))
            elif "self._tab.String(a" in body_text:
                kind = ("stringVector",)
            else:
                kind = ("scalarVector", FLAG_SIZES[scalar.group(1)])
        elif "self._tab.String(o" in body_text:
            kind = ("string",)
        elif element_table:
            kind = ("table", element_table.group(1))
        else:
            kind = ("scalar", FLAG_SIZES[scalar.group(1)])
        fields.append((name, slot, kind))
    return fields


def swift_kind(kind, table_ids, union_ids, type_slots, name):
    if kind[0] == "scalar":
        if name.endswith("SubgraphIndex"):
            return ".subgraphIndex"
        return ".scalar(size: %d)" % kind[1]
    if kind[0] == "scalarVector":
        return ".scalarVector(elementSize: %d)" % kind[1]
    if kind[0] in ("string", "stringVector"):
        return "." + kind[0]
    if kind[0] in ("table", "tableVector"):
        return ".%s(%d)" % (kind[0], table_ids[kind[1]])
    return ".union(%d, typeSlot: %d)" % (union_ids[kind[1]], type_slots[name + "Type"])


def generate(package, source_name, namespace, output_name, named_tables, named_enums):
    spec = importlib.util.find_spec(package)
    if spec is None:
        sys.exit("generate_schema: %s is not installed; see the docstring" % package)
    source_path = os.path.join(list(spec.submodule_search_locations)[0], source_name)
    output = os.path.join(TFLITE_DIR, output_name)
    with open(source_path) as handle:
        source = handle.read()
    classes, enums, tables = parse(source)
    table_names = sorted(tables)
    table_ids = {name: index for index, name in enumerate(table_names)}
    union_names = sorted(name for name in enums if "def %sCreator(" % name in source)
    union_ids = {name: index for index, name in enumerate(union_names)}

    out = ["// Generated by scripts/tflite/generate_schema.py from %s in the" % os.path.basename(source_name),
           "// %s package. Do not edit; run the script." % package,
           "", "extension %s {" % namespace,
           "    /// Every table of the schema, indexed by the ids in `%s.TableID`." % namespace,
           "    static let tables: [FlatBufferTableLayout] = ["]
    for name in table_names:
        fields = fields_of(name, tables[name], classes)
        type_slots = {f[0]: f[1] for f in fields}
        rendered = ", ".join('.init("%s", %d, %s)' % (lower_camel(f[0]), f[1],
                                                       swift_kind(f[2], table_ids, union_ids, type_slots, f[0]))
                             for f in fields)
        out.append('        FlatBufferTableLayout(name: "%s", fields: [%s]),' % (name, rendered))
    out += ["    ]", "",
            "    /// Every union of the schema: member tables by type value (nil for NONE and gaps).",
            "    static let unions: [FlatBufferUnionLayout] = ["]
    for name in union_names:
        members = dict((value, member) for member, value in enums[name])
        ordered = ", ".join(str(table_ids[members[v]]) if v in members and members[v] in table_ids else "nil"
                            for v in range(max(members) + 1))
        out.append('        FlatBufferUnionLayout(name: "%s", members: [%s]),' % (name, ordered))
    out += ["    ]", "", "    /// Table ids of the tables read by name.", "    enum TableID {"]
    for name in named_tables:
        out.append("        static let `%s` = %d" % (lower_camel(name), table_ids[name]))
    out += ["    }", ""]
    for name in named_tables:
        out.append("    /// Field slots of `%s`." % name)
        out.append("    enum %s {" % name)
        for field, slot, _ in fields_of(name, tables[name], classes):
            out.append("        static let `%s`: UInt16 = %d" % (lower_camel(field), slot))
        out += ["    }", ""]
    for enum in named_enums:
        members = dict((value, member) for member, value in enums[enum])
        out.append("    /// `%s` names by value." % enum)
        out.append("    static let %sNames: [String] = [" % lower_camel(enum))
        for value in range(max(members) + 1):
            out.append('        "%s",' % members.get(value, ""))
        out += ["    ]", ""]
    out[-1:] = ["}", ""]
    with open(output, "w") as handle:
        handle.write("\n".join(out))
    print("wrote %s: %d tables, %d unions" % (os.path.relpath(output, ROOT), len(table_names), len(union_names)))


def main():
    for schema in SCHEMAS:
        generate(*schema)


if __name__ == "__main__":
    sys.exit(main())
