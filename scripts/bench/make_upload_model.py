#!/usr/bin/env python3
"""Writes a valid .tflite model of SIZE_MB MB (10^6 bytes) plus about 500 bytes of structure,
for the server benchmark:

    make_upload_model.py SIZE_MB OUT

One ADD operator: input [1, N] float32 + constant [1, N] float32 -> output [1, N], where the
constant (random float32 weights) carries almost all of the bytes. The constant is written
straight into the flatbuffer builder's preallocated buffer in 16 MiB pieces, so the process
holds about one copy of the model (never the two or three that CreateNumpyVector's
`tobytes()` plus a growing builder would), and the file is written from a memoryview.
"""
import sys

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as fb

PIECE = 16 << 20  # bytes generated at a time


class StreamedBufferT(fb.BufferT):
    """A Buffer whose `data` vector (count bytes) is filled in place, piece by piece."""

    def __init__(self, count, seed=7):
        super().__init__()
        self.count = count
        self.seed = seed

    def Pack(self, builder):
        count = self.count
        builder.StartVector(1, count, 16)
        builder.head = builder.head - count
        target = np.frombuffer(builder.Bytes, dtype=np.uint8, count=count, offset=builder.head)
        rng = np.random.default_rng(self.seed)
        for start in range(0, count, PIECE):
            piece = min(PIECE, count - start)
            target[start:start + piece] = rng.standard_normal(piece // 4, dtype=np.float32).view(np.uint8)
        del target  # release the export of builder.Bytes before the builder touches it again
        builder.vectorNumElems = count
        data = builder.EndVector()
        fb.BufferStart(builder)
        fb.BufferAddData(builder, data)
        return fb.BufferEnd(builder)


def main(size_mb, out):
    elements = max(1, int(float(size_mb) * 1e6) // 4)
    count = elements * 4

    def tensor(name, buffer=0):
        return fb.TensorT(shape=[1, elements], type=fb.TensorType.FLOAT32, buffer=buffer, name=name)

    code = fb.OperatorCodeT(deprecatedBuiltinCode=fb.BuiltinOperator.ADD, builtinCode=fb.BuiltinOperator.ADD, version=1)
    graph = fb.SubGraphT(
        tensors=[tensor("input"), tensor("weights", buffer=1), tensor("output")],
        operators=[fb.OperatorT(opcodeIndex=0, inputs=[0, 1], outputs=[2])],
        inputs=[0], outputs=[2], name="main")
    model = fb.ModelT(version=3, operatorCodes=[code], subgraphs=[graph],
                      buffers=[fb.BufferT(), StreamedBufferT(count)],
                      description=f"ModelDepot server benchmark model ({size_mb} MB)")
    builder = flatbuffers.Builder(count + (64 << 10))  # large enough never to grow (a grow copies)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    view = memoryview(builder.Bytes)[builder.Head():]
    with open(out, "wb") as file:
        file.write(view)
    print(f"{out}: {len(view)} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make_upload_model.py SIZE_MB OUT")
    main(sys.argv[1], sys.argv[2])
