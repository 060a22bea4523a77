#!/usr/bin/env python3
"""Prints what real LiteRT (the Python Interpreter) reports about .tflite files.

Usage: litert_describe.py FILE [FILE...]

One file: prints one JSON object. Several files: a JSON object keyed by path.
Each description is

  {"inputs": [T], "outputs": [T],
   "signatures": [{"key": K, "subgraphIndex": N,
                   "inputs": [names], "outputs": [names],
                   "inputTensors": {name: tensorIndex},
                   "outputTensors": {name: tensorIndex}}]}

  T = {"index", "name", "type", "shape", "shapeSignature",
       "quantization": {"scales": [float], "zeroPoints": [int],
                        "quantizedDimension": int}}

inputs/outputs come from get_input_details()/get_output_details() (subgraph 0,
in LiteRT's order). Signature input/output name lists come from
get_signature_list() and are sorted, as LiteRT gives them; inputTensors /
outputTensors come from get_signature_runner(key).get_*_details(), and their
tensor indices are indices into the signature's subgraph (subgraphIndex).
Scales are the float32 values LiteRT holds, written as exact doubles.

The model is loaded and allocate_tensors() is called. If the interpreter
rejects any file, nothing is printed on stdout, a one-line message per rejected
file goes to stderr and the exit status is 1. This runs LiteRT in-process: use
litert_load.py, not this, on files that may be damaged.
"""

import contextlib
import json
import os
import sys
from pathlib import Path

import numpy as np
from ai_edge_litert import schema_py_generated as fb
from ai_edge_litert.interpreter import Interpreter

# numpy dtype -> LiteRT type name.
_NAMES = {
    np.float32: "float32", np.float16: "float16", np.float64: "float64",
    np.int8: "int8", np.uint8: "uint8", np.int16: "int16", np.uint16: "uint16",
    np.int32: "int32", np.uint32: "uint32", np.int64: "int64",
    np.uint64: "uint64", np.bool_: "bool", np.bytes_: "string",
    np.complex64: "complex64", np.complex128: "complex128",
}

# The interpreter reports string tensors as bytes_, but resource and variant
# tensors as object_ too, so for object_ the file's TensorType decides.
_OBJECT_TYPES = {fb.TensorType.STRING: "string",
                 fb.TensorType.RESOURCE: "resource",
                 fb.TensorType.VARIANT: "variant"}


def _schema_type(raw, subgraph, tensor):
    """TensorType of one tensor as stored in the flatbuffer, or None."""
    try:
        model = fb.Model.GetRootAs(raw, 0)
        return model.Subgraphs(subgraph).Tensors(tensor).Type()
    except Exception:  # noqa: BLE001 - best effort refinement only
        return None


def type_name(dtype, raw, subgraph, tensor):
    dtype = np.dtype(dtype)
    if dtype == np.object_:
        return _OBJECT_TYPES.get(_schema_type(raw, subgraph, tensor), "string")
    return _NAMES.get(dtype.type, dtype.name)


def tensor_json(detail, raw, subgraph):
    q = detail["quantization_parameters"]
    return {
        "index": int(detail["index"]),
        "name": detail["name"],
        "type": type_name(detail["dtype"], raw, subgraph, detail["index"]),
        "shape": [int(d) for d in detail["shape"]],
        "shapeSignature": [int(d) for d in detail["shape_signature"]],
        "quantization": {
            "scales": [float(s) for s in q["scales"]],
            "zeroPoints": [int(z) for z in q["zero_points"]],
            "quantizedDimension": int(q["quantized_dimension"]),
        },
    }


def describe(path):
    raw = Path(path).read_bytes()
    interp = Interpreter(model_path=str(path))
    interp.allocate_tensors()
    signatures = []
    for key, names in interp.get_signature_list().items():
        runner = interp.get_signature_runner(key)
        sig = {"key": key,
               "inputs": list(names["inputs"]),
               "outputs": list(names["outputs"]),
               "inputTensors": {n: int(d["index"])
                                for n, d in runner.get_input_details().items()},
               "outputTensors": {n: int(d["index"])
                                 for n, d in runner.get_output_details().items()}}
        # Not public API; omitted if a future LiteRT renames it.
        subgraph = getattr(runner, "_subgraph_index", None)
        if subgraph is not None:
            sig["subgraphIndex"] = int(subgraph)
        signatures.append(sig)
    return {
        "inputs": [tensor_json(d, raw, 0) for d in interp.get_input_details()],
        "outputs": [tensor_json(d, raw, 0) for d in interp.get_output_details()],
        "signatures": signatures,
    }


@contextlib.contextmanager
def quiet_stderr():
    """Silences LiteRT's own logging (fd 2) so stderr holds only our lines."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def main(argv):
    if not argv or any(a in ("-h", "--help") for a in argv):
        print(__doc__, file=sys.stderr)
        return 2
    results, failed = {}, False
    for path in argv:
        try:
            with quiet_stderr():
                results[path] = describe(path)
        except Exception as e:  # noqa: BLE001 - any rejection is reported
            message = " ".join(str(e).split()) or type(e).__name__
            print(f"litert_describe: {path}: {message}", file=sys.stderr)
            failed = True
    if failed:
        return 1
    out = results[argv[0]] if len(argv) == 1 else results
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
