"""Metadata updates, for scripts/bench/delta (run in a venv with tflite-support 0.4.4).

    python3 delta_metadata.py OUT [REAL.tflite ...]

From OUT/plain/<float32|int8>.tflite (delta_pairs.py) writes, as pairs OUT/<pair>/{old,new}.tflite:
  - metadata-added-<p>   the model, then the same model with Task Library metadata and labels
                         written by tflite-support's MetadataWriter (the file is re-packed: every
                         buffer moves, no weight changes; what MediaPipe's releases did)
  - labels-only-<p>      the model with its labels, then with one label renamed
and for each REAL model (files from a MediaPipe wheel): real-metadata-<name>, the model as shipped,
then with its name, description and version in the metadata changed (the file re-packed).
"""
import os
import sys

import flatbuffers
from tflite_support import metadata as _metadata
from tflite_support import metadata_schema_py_generated as _metadata_fb
from tflite_support.metadata_writers import image_classifier, writer_utils

OUT = sys.argv[1]
LABELS = [f"class {index}" for index in range(20)]


def write(pair, old, new):
    os.makedirs(os.path.join(OUT, pair), exist_ok=True)
    for name, data in (("old", old), ("new", new)):
        with open(os.path.join(OUT, pair, name + ".tflite"), "wb") as file:
            file.write(data)
    print(f"  {pair}: {len(old):,} -> {len(new):,} bytes", flush=True)


def with_labels(model, labels, integer):
    path = os.path.join(OUT, "labels.txt")
    with open(path, "w") as file:
        file.write("\n".join(labels))
    mean, std = ([0.0], [1.0]) if integer else ([127.5], [127.5])
    writer = image_classifier.MetadataWriter.create_for_inference(model, input_norm_mean=mean, input_norm_std=std, label_file_paths=[path])
    return writer.populate()


def with_description(model, version):
    """`model` with generic metadata (a name, a description, a version, one entry per tensor)."""
    from tflite_support import schema_py_generated as _schema_fb

    graph = _schema_fb.Model.GetRootAsModel(model, 0).Subgraphs(0)
    info = _metadata_fb.ModelMetadataT()
    info.name = "detector"
    info.description = f"Release {version}: the same weights, described again."
    info.version = f"v{version}"
    subgraph = _metadata_fb.SubGraphMetadataT()
    subgraph.inputTensorMetadata = [_metadata_fb.TensorMetadataT() for _ in range(graph.InputsLength())]
    subgraph.outputTensorMetadata = [_metadata_fb.TensorMetadataT() for _ in range(graph.OutputsLength())]
    info.subgraphMetadata = [subgraph]
    builder = flatbuffers.Builder(0)
    builder.Finish(info.Pack(builder), _metadata.MetadataPopulator.METADATA_FILE_IDENTIFIER)
    populator = _metadata.MetadataPopulator.with_model_buffer(model)
    populator.load_metadata_buffer(builder.Output())
    populator.populate()
    return populator.get_model_buffer()


for precision in ("float32", "int8"):
    plain = writer_utils.load_file(os.path.join(OUT, "plain", precision + ".tflite"))
    labelled = with_labels(plain, LABELS, precision == "int8")
    write(f"metadata-added-{precision}", plain, labelled)
    renamed = LABELS[:7] + ["a renamed class"] + LABELS[8:]
    write(f"labels-only-{precision}", labelled, with_labels(plain, renamed, precision == "int8"))

for path in sys.argv[2:]:
    shipped = writer_utils.load_file(path)
    name = os.path.splitext(os.path.basename(path))[0]
    try:
        write(f"real-metadata-{name}", shipped, with_description(shipped, 2))
    except Exception as error:  # a model the populator cannot describe is left out, and said so
        print(f"  real-metadata-{name}: left out ({error})", flush=True)
