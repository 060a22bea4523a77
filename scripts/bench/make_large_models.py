#!/usr/bin/env python3
"""Writes the models the TFLite verification benchmark reads, into the given directory:

  dense_50mb.tflite      4 FULLY_CONNECTED layers, 1792x1792 float32 weights (~51 MB)
  dense_1mb.tflite       the same 4 layers with 256x256 weights (~1 MB)
  chain_2000_ops.tflite  2000 ADD operators, 4001 tensors, small constants (~0.4 MB)

Same structure, 50x the bytes; then 500x the operators at a tenth of the bytes: the timings
show whether verification follows structure or size.
"""
import sys
from pathlib import Path

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as fb


def tensor(name, shape, buffer=0):
    return fb.TensorT(shape=list(shape), type=fb.TensorType.FLOAT32, buffer=buffer, name=name)


def operator(opcode, inputs, outputs):
    return fb.OperatorT(opcodeIndex=opcode, inputs=list(inputs), outputs=list(outputs))


def model(tensors, operators, buffers, opcode, inputs, outputs):
    code = fb.OperatorCodeT(deprecatedBuiltinCode=opcode, builtinCode=opcode, version=1)
    graph = fb.SubGraphT(tensors=tensors, operators=operators, inputs=inputs, outputs=outputs, name="main")
    result = fb.ModelT(version=3, operatorCodes=[code], subgraphs=[graph], buffers=buffers,
                       description="ModelDepot benchmark model")
    builder = flatbuffers.Builder(1 << 20)
    builder.Finish(result.Pack(builder), file_identifier=b"TFL3")
    return builder.Output()


def dense(width, layers=4):
    rng = np.random.default_rng(7)
    buffers = [fb.BufferT()]
    tensors = [tensor("input", (1, width))]
    operators = []
    for layer in range(layers):
        weights = rng.standard_normal((width, width), dtype=np.float32)
        buffers.append(fb.BufferT(data=np.frombuffer(weights.tobytes(), dtype=np.uint8)))
        tensors.append(tensor(f"dense_{layer}/weights", (width, width), buffer=len(buffers) - 1))
        tensors.append(tensor(f"dense_{layer}/output", (1, width)))
        operators.append(operator(0, [len(tensors) - 3 if layer else 0, len(tensors) - 2, -1], [len(tensors) - 1]))
    operators[0].inputs[0] = 0
    for layer in range(1, layers):
        operators[layer].inputs[0] = 2 * layer
    return model(tensors, operators, buffers, fb.BuiltinOperator.FULLY_CONNECTED, [0], [len(tensors) - 1])


def chain(length):
    buffers = [fb.BufferT()]
    tensors = [tensor("input", (1, 16))]
    operators = []
    for index in range(length):
        constant = np.full((1, 16), index, dtype=np.float32)
        buffers.append(fb.BufferT(data=np.frombuffer(constant.tobytes(), dtype=np.uint8)))
        tensors.append(tensor(f"add_{index}/constant", (1, 16), buffer=len(buffers) - 1))
        tensors.append(tensor(f"add_{index}/output", (1, 16)))
        operators.append(operator(0, [len(tensors) - 3, len(tensors) - 2], [len(tensors) - 1]))
    return model(tensors, operators, buffers, fb.BuiltinOperator.ADD, [0], [len(tensors) - 1])


def main(directory):
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for name, data in (("dense_50mb", dense(1792)), ("dense_1mb", dense(256)), ("chain_2000_ops", chain(2000))):
        (out / f"{name}.tflite").write_bytes(data)
        print(f"{name}.tflite: {len(data)} bytes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".build/bench")
