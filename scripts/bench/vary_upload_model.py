#!/usr/bin/env python3
"""Makes a benchmark model new content before a timed upload, so that every upload stores a new
blob (the server's duplicate path is not what the upload benchmark measures):

    vary_upload_model.py MODEL HEADER_FILE

Overwrites 16 bytes in the middle of the model's largest buffer (its weights) with random bytes,
in place (the model stays valid), and writes `Depot-Content-SHA256: <hex>` of the result to
HEADER_FILE for `curl -H @HEADER_FILE`.
"""
import hashlib
import mmap
import os
import sys

from ai_edge_litert import schema_py_generated as fb


def weights_middle(view):
    model = fb.Model.GetRootAs(view, 0)
    start, length = 0, 0
    for index in range(model.BuffersLength()):
        buffer = model.Buffers(index)
        if buffer.DataLength() > length:
            start, length = buffer._tab.Vector(buffer._tab.Offset(4)), buffer.DataLength()
    if length < 64:
        sys.exit(f"{sys.argv[1]}: no buffer of at least 64 bytes to vary")
    return start + length // 2


def main(path, header_file):
    with open(path, "r+b") as file, mmap.mmap(file.fileno(), 0) as view:
        offset = weights_middle(view)
        view[offset:offset + 16] = os.urandom(16)
        view.flush()
        digest = hashlib.sha256()
        for start in range(0, len(view), 16 << 20):
            digest.update(view[start:start + (16 << 20)])
    with open(header_file, "w") as out:
        out.write(f"Depot-Content-SHA256: {digest.hexdigest()}\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
