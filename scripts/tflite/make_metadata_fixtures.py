#!/usr/bin/env python3
"""Writes the TFLite models with Model Metadata, the test images and the AutoML Vision Edge
export folder used by ModelDepot's metadata, classification and detection tests.

Run it with tflite-support 0.4.4 and ai-edge-litert (scripts/bootstrap installs both in
.build/tflite-support):

    .build/tflite-support/bin/python scripts/tflite/make_metadata_fixtures.py

Output, deterministic:
  * Tests/Fixtures/tflite/metadata/*.tflite: real models (built like make_fixtures.py builds its
    models, then given metadata by tflite-support's metadata writers and MetadataPopulator):
      - described_classifier: every kind of metadata field (stats, value range, dimension names,
        score thresholding and calibration, label files in two locales, tensor groups, custom
        metadata), its zip deflated and with offsets counted from the zip's start; small, for
        the mutation tests;
      - image_classifier: float input normalized by the metadata, five colour classes;
      - image_classifier_uint8: the same classifier, quantized (uint8 input and output);
      - object_detector: uint8 input, TFLite_Detection_PostProcess, three colour classes;
      - pixel_echo: outputs its (resized) input pixels as scores, so the Task Library's
        classifier reveals exactly which pixels its resize produced.
  * Tests/Fixtures/tflite/metadata/invalid/*.tflite (+ README.md): damaged metadata and zips.
  * Tests/Fixtures/images/*.png, scene_50x37.ppm: test images (PNG rows use every filter type).
  * Tests/Fixtures/automl/object_detection/: model.tflite (the detector without metadata),
    dict.txt, tflite_metadata.json, as AutoML Vision Edge exports them.
Each model is run in LiteRT's Python Interpreter and in the Task Library here; the script
exits non-zero if anything fails.
"""
import io
import json
import struct
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

import numpy as np
from flatbuffers import flexbuffers
from tflite_support import metadata as _metadata
from tflite_support import metadata_schema_py_generated as _md
from tflite_support.metadata_writers import image_classifier, object_detector, writer_utils
from tflite_support.task import core as task_core
from tflite_support.task import processor, vision

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_fixtures import CLASSIFIER_B, CLASSIFIER_W, NP_DTYPE, Op, TT, ModelBuilder, fb, quant  # noqa: E402
from ai_edge_litert.interpreter import Interpreter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "Tests" / "Fixtures" / "tflite" / "metadata"
IMAGES = ROOT / "Tests" / "Fixtures" / "images"
AUTOML = ROOT / "Tests" / "Fixtures" / "automl" / "object_detection"
SIZE = 16
COLOURS = ["red", "green", "blue"]
CLASSES = COLOURS + ["dark", "bright"]


def reshape(g, x, shape, name):
    out = g.tensor(name, g.sg.tensors[x].type, shape, quantization=g.sg.tensors[x].quantization)
    shape_tensor = g.tensor(name + "/shape", TT.INT32, [len(shape)], np.array(shape, np.int32))
    options = fb.ReshapeOptionsT()
    options.newShape = list(shape)
    g.op(Op.RESHAPE, [x, shape_tensor], [out], fb.BuiltinOptions.ReshapeOptions, options)
    return out


def fully_connected(g, x, weights, bias, name, quantization=None, out_type=TT.FLOAT32):
    w = g.tensor(name + "/weights", g.sg.tensors[x].type if quantization else TT.FLOAT32, weights.shape, weights,
                 quantization[0] if quantization else None)
    b = g.tensor(name + "/bias", TT.INT32 if quantization else TT.FLOAT32, bias.shape, bias,
                 quantization[1] if quantization else None)
    out = g.tensor(name, out_type, [1, weights.shape[0]], quantization=quantization[2] if quantization else None)
    g.op(Op.FULLY_CONNECTED, [x, w, b], [out], fb.BuiltinOptions.FullyConnectedOptions, fb.FullyConnectedOptionsT())
    return out


def colour_weights():
    """FC weights over a flattened [16, 16, 3] image scaled to [-1, 1]: each colour class scores
    its channel's excess over the other two; dark and bright score the overall level."""
    pixels = SIZE * SIZE
    w = np.zeros((len(CLASSES), pixels * 3), np.float32)
    for c in range(3):
        for other in range(3):
            w[c, other::3] = (2.0 if other == c else -1.0) * 8.0 / pixels
    w[3, :] = -4.0 / pixels
    w[4, :] = 4.0 / pixels
    return w, np.array([0.0, 0.0, 0.0, -1.0, -1.0], np.float32)


def softmax(g, x, name, quantization=None, out_type=TT.FLOAT32):
    out = g.tensor(name, out_type, g.sg.tensors[x].shape, quantization=quantization)
    options = fb.SoftmaxOptionsT()
    options.beta = 1.0
    g.op(Op.SOFTMAX, [x], [out], fb.BuiltinOptions.SoftmaxOptions, options)
    return out


def float_classifier():
    mb = ModelBuilder("ModelDepot colour classifier fixture")
    g = mb.subgraph("main")
    image = g.tensor("image", TT.FLOAT32, [1, SIZE, SIZE, 3])
    flat = reshape(g, image, [1, SIZE * SIZE * 3], "flatten")
    w, b = colour_weights()
    logits = fully_connected(g, flat, w, b, "logits")
    probs = softmax(g, logits, "probabilities")
    g.io([image], [probs])
    return mb.serialize()


def uint8_classifier():
    """The same function on uint8 pixels: input scale 2/255, zero point 128 maps 0..255 to about
    [-1, 1]; weights quantized per tensor; softmax output at scale 1/256."""
    mb = ModelBuilder("ModelDepot quantized colour classifier fixture")
    g = mb.subgraph("main")
    in_q = (2.0 / 255.0, 128)
    image = g.tensor("image", TT.UINT8, [1, SIZE, SIZE, 3], quantization=quant([in_q[0]], [in_q[1]]))
    flat = reshape(g, image, [1, SIZE * SIZE * 3], "flatten")
    w, b = colour_weights()
    w_scale = float(np.abs(w).max()) / 127.0
    w_q = (np.round(w / w_scale) + 128).astype(np.uint8)
    b_q = np.round(b / (in_q[0] * w_scale)).astype(np.int32)
    logits_q = quant([0.05], [128])
    logits = fully_connected(g, flat, w_q, b_q, "logits",
                             (quant([w_scale], [128]), quant([in_q[0] * w_scale], [0]), logits_q), TT.UINT8)
    probs = softmax(g, logits, "probabilities", quant([1.0 / 256.0], [0]), TT.UINT8)
    g.io([image], [probs])
    return mb.serialize()


def pixel_echo():
    mb = ModelBuilder("ModelDepot pixel echo fixture")
    g = mb.subgraph("main")
    image = g.tensor("image", TT.FLOAT32, [1, SIZE, SIZE, 3])
    flat = reshape(g, image, [1, SIZE * SIZE * 3], "pixels")
    g.io([image], [flat])
    return mb.serialize()


GRID = 4
MAX_DETECTIONS = 6


def detector(automl_names=False):
    """A 4x4 grid of anchors over a 16x16 uint8 image; each anchor's class scores are the colour
    excess of its 4x4 cell (average pool, then one small fully connected layer); box encodings
    are fixed offsets, decoded by TFLite_Detection_PostProcess (as SSD and AutoML Vision Edge
    detectors are)."""
    mb = ModelBuilder("ModelDepot colour detector fixture")
    g = mb.subgraph("main")
    name = "normalized_input_image_tensor" if automl_names else "image"
    image = g.tensor(name, TT.UINT8, [1, SIZE, SIZE, 3], quantization=quant([1.0 / 255.0], [0]))
    pixels = g.tensor("pixels", TT.FLOAT32, [1, SIZE, SIZE, 3])
    g.op(Op.DEQUANTIZE, [image], [pixels])
    anchors_count = GRID * GRID
    cell = SIZE // GRID
    cells = g.tensor("cells", TT.FLOAT32, [1, GRID, GRID, 3])
    pool = fb.Pool2DOptionsT()
    pool.padding = fb.Padding.VALID
    pool.strideW = pool.strideH = pool.filterWidth = pool.filterHeight = cell
    g.op(Op.AVERAGE_POOL_2D, [pixels], [cells], fb.BuiltinOptions.Pool2DOptions, pool)
    rows = reshape(g, cells, [anchors_count, 3], "cell_colours")
    w_cls = np.zeros((4, 3), np.float32)
    for c in range(3):
        w_cls[c + 1] = [(36.0 if other == c else 0.0) - 12.0 for other in range(3)]
    b_cls = np.array([0.0, -4.0, -4.0, -4.0], np.float32)
    w = g.tensor("class_logits/weights", TT.FLOAT32, [4, 3], w_cls)
    b = g.tensor("class_logits/bias", TT.FLOAT32, [4], b_cls)
    class_logits = g.tensor("class_logits", TT.FLOAT32, [anchors_count, 4])
    g.op(Op.FULLY_CONNECTED, [rows, w, b], [class_logits], fb.BuiltinOptions.FullyConnectedOptions, fb.FullyConnectedOptionsT())
    class_scores = g.tensor("class_scores", TT.FLOAT32, [anchors_count, 4])
    g.op(Op.LOGISTIC, [class_logits], [class_scores])
    scores = reshape(g, class_scores, [1, anchors_count, 4], "raw_outputs/class_predictions")
    rng = np.random.default_rng(7)
    boxes = g.tensor("raw_outputs/box_encodings", TT.FLOAT32, [1, anchors_count, 4],
                     rng.uniform(-1.0, 1.0, (1, anchors_count, 4)).astype(np.float32))
    anchors = np.array([[(r + 0.5) / GRID, (c + 0.5) / GRID, 1.2 / GRID, 1.2 / GRID]
                        for r in range(GRID) for c in range(GRID)], np.float32)
    anchor_tensor = g.tensor("anchors", TT.FLOAT32, [anchors_count, 4], anchors)
    outputs = [g.tensor("TFLite_Detection_PostProcess", TT.FLOAT32, [1, MAX_DETECTIONS, 4]),
               g.tensor("TFLite_Detection_PostProcess:1", TT.FLOAT32, [1, MAX_DETECTIONS]),
               g.tensor("TFLite_Detection_PostProcess:2", TT.FLOAT32, [1, MAX_DETECTIONS]),
               g.tensor("TFLite_Detection_PostProcess:3", TT.FLOAT32, [1])]
    code = fb.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = Op.CUSTOM
    code.customCode = "TFLite_Detection_PostProcess"
    code.version = 1
    mb.model.operatorCodes.append(code)
    op = fb.OperatorT()
    op.opcodeIndex = len(mb.model.operatorCodes) - 1
    op.inputs, op.outputs = [boxes, scores, anchor_tensor], outputs
    op.customOptions = list(flexbuffers.Dumps({
        "max_detections": MAX_DETECTIONS, "max_classes_per_detection": 1, "detections_per_class": 100,
        "use_regular_nms": False, "nms_score_threshold": 1e-8, "nms_iou_threshold": 0.6, "num_classes": 3,
        "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}))
    op.customOptionsFormat = fb.CustomOptionsFormat.FLEXBUFFERS
    g.sg.operators.append(op)
    g.io([image], outputs)
    return mb.serialize()


def temporary_file(directory, name, text):
    path = Path(directory) / name
    path.write_text(text)
    return str(path)


def with_classifier_metadata(model, mean, std, directory):
    writer = image_classifier.MetadataWriter.create_for_inference(
        model, [mean], [std], [temporary_file(directory, "labels.txt", "\n".join(CLASSES) + "\n")])
    return writer.populate()


def with_detector_metadata(model, directory):
    writer = object_detector.MetadataWriter.create_for_inference(
        model, [127.5], [127.5], [temporary_file(directory, "labelmap.txt", "\n".join(COLOURS) + "\n")])
    return writer.populate()


def described_classifier(directory):
    """The 4-value float classifier of make_fixtures.py with every kind of metadata field, its
    zip deflated and with offsets counted from the zip's own start."""
    mb = ModelBuilder("ModelDepot described classifier fixture")
    g = mb.subgraph("main")
    features = g.tensor("features", TT.FLOAT32, [1, 4])
    w = g.tensor("w", TT.FLOAT32, [3, 4], CLASSIFIER_W)
    b = g.tensor("b", TT.FLOAT32, [3], CLASSIFIER_B)
    logits = g.tensor("logits", TT.FLOAT32, [1, 3])
    g.op(Op.FULLY_CONNECTED, [features, w, b], [logits], fb.BuiltinOptions.FullyConnectedOptions, fb.FullyConnectedOptionsT())
    probs = softmax(g, logits, "probabilities")
    g.io([features], [probs])
    model = mb.serialize()

    def file(name, kind, locale=None, description=None):
        f = _md.AssociatedFileT()
        f.name, f.type, f.locale, f.description = name, kind, locale, description
        return f

    def unit(kind, options):
        u = _md.ProcessUnitT()
        u.optionsType, u.options = kind, options
        return u

    normalization = _md.NormalizationOptionsT()
    normalization.mean, normalization.std = [0.5], [2.0]
    features_md = _md.TensorMetadataT()
    features_md.name, features_md.description = "features", "Four measurements of a flower."
    features_md.dimensionNames = ["batch", "feature"]
    features_md.content = _md.ContentT()
    features_md.content.contentPropertiesType = _md.ContentProperties.FeatureProperties
    features_md.content.contentProperties = _md.FeaturePropertiesT()
    features_md.processUnits = [unit(_md.ProcessUnitOptions.NormalizationOptions, normalization)]
    features_md.stats = _md.StatsT()
    features_md.stats.max, features_md.stats.min = [8.0], [0.0]

    threshold = _md.ScoreThresholdingOptionsT()
    threshold.globalScoreThreshold = 0.25
    calibration = _md.ScoreCalibrationOptionsT()
    calibration.scoreTransformation = _md.ScoreTransformationType.LOG
    calibration.defaultScore = 0.125
    probs_md = _md.TensorMetadataT()
    probs_md.name, probs_md.description = "probability", "Probabilities of the three species."
    probs_md.content = _md.ContentT()
    probs_md.content.contentPropertiesType = _md.ContentProperties.FeatureProperties
    probs_md.content.contentProperties = _md.FeaturePropertiesT()
    probs_md.content.range = _md.ValueRangeT()
    probs_md.content.range.min, probs_md.content.range.max = 1, 2
    probs_md.processUnits = [unit(_md.ProcessUnitOptions.ScoreCalibrationOptions, calibration),
                             unit(_md.ProcessUnitOptions.ScoreThresholdingOptions, threshold)]
    probs_md.stats = _md.StatsT()
    probs_md.stats.max, probs_md.stats.min = [1.0], [0.0]
    probs_md.associatedFiles = [
        file("labels_en.txt", _md.AssociatedFileType.TENSOR_AXIS_LABELS, "en", "Species names"),
        file("labels_fr.txt", _md.AssociatedFileType.TENSOR_AXIS_LABELS, "fr"),
        file("calibration.csv", _md.AssociatedFileType.TENSOR_AXIS_SCORE_CALIBRATION)]

    group = _md.TensorGroupT()
    group.name, group.tensorNames = "scores", ["probability"]
    custom = _md.CustomMetadataT()
    custom.name, custom.data = "depot.fixture", list(b"\x01\x02\x03 ModelDepot")
    subgraph = _md.SubGraphMetadataT()
    subgraph.name, subgraph.description = "main", "Classifies flowers."
    subgraph.inputTensorMetadata, subgraph.outputTensorMetadata = [features_md], [probs_md]
    subgraph.outputTensorGroups, subgraph.customMetadata = [group], [custom]
    subgraph.associatedFiles = [file("README.txt", _md.AssociatedFileType.DESCRIPTIONS)]
    metadata = _md.ModelMetadataT()
    metadata.name, metadata.description, metadata.version = "Described classifier", "Every metadata field ModelDepot reads.", "v3"
    metadata.author, metadata.license = "ModelDepot", "Apache-2.0"
    metadata.subgraphMetadata = [subgraph]
    metadata.minParserVersion = _metadata.get_metadata_parser_version() if hasattr(_metadata, "get_metadata_parser_version") else None

    builder = __import__("flatbuffers").Builder(0)
    builder.Finish(metadata.Pack(builder), _metadata.MetadataPopulator.METADATA_FILE_IDENTIFIER)
    files = {"labels_en.txt": "daisy\nrose\n\ntulip\r\n", "labels_fr.txt": "marguerite\nrose\ntulipe\n",
             "calibration.csv": "1.0,0.5,0.1\n1.0,0.5,0.2\n1.0,0.5,0.3\n", "README.txt": "A fixture.\n" * 8}
    populator = _metadata.MetadataPopulator.with_model_buffer(model)
    populator.load_metadata_buffer(builder.Output())
    populator.load_associated_files([temporary_file(directory, name, text) for name, text in files.items()])
    populator.populate()
    populated = populator.get_model_buffer()
    start = min(info.header_offset for info in zipfile.ZipFile(io.BytesIO(populated)).infolist())
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 0
            zf.writestr(info, text)
    return populated[:start] + archive.getvalue()


# --------------------------------------------------------------------------
# Images

def test_image(width, height):
    """Deterministic RGB: a gradient background with a red, a green and a blue block."""
    y, x = np.mgrid[0:height, 0:width]
    image = np.stack([(x * 255 // max(width - 1, 1)), (y * 255 // max(height - 1, 1)),
                      ((x + y) * 97 % 256)], axis=-1).astype(np.uint8) // 2 + 40
    blocks = [((0.05, 0.1, 0.35, 0.45), (230, 20, 30)), ((0.55, 0.1, 0.95, 0.45), (20, 220, 40)),
              ((0.3, 0.55, 0.7, 0.95), (25, 35, 235))]
    for (left, top, right, bottom), colour in blocks:
        image[int(top * height):int(bottom * height), int(left * width):int(right * width)] = colour
    return image


def png(image):
    """A PNG (colour type 2 or 6, 8 bits) whose rows cycle through all five filter types."""
    height, width, channels = image.shape
    colour_type = {3: 2, 4: 6}[channels]
    rows = []
    previous = np.zeros(width * channels, np.int32)
    for row_index in range(height):
        row = image[row_index].reshape(-1).astype(np.int32)
        kind = row_index % 5
        left = np.concatenate([np.zeros(channels, np.int32), row[:-channels]])
        up_left = np.concatenate([np.zeros(channels, np.int32), previous[:-channels]])
        if kind == 0:
            filtered = row
        elif kind == 1:
            filtered = row - left
        elif kind == 2:
            filtered = row - previous
        elif kind == 3:
            filtered = row - (left + previous) // 2
        else:
            p = left + previous - up_left
            pa, pb, pc = np.abs(p - left), np.abs(p - previous), np.abs(p - up_left)
            predictor = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, previous, up_left))
            filtered = row - predictor
        rows.append(bytes([kind]) + (filtered % 256).astype(np.uint8).tobytes())
        previous = row

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
            + chunk(b"IEND", b""))


def ppm(image):
    height, width, _ = image.shape
    return b"P6\n# ModelDepot test image\n%d %d\n255\n" % (width, height) + image.tobytes()


# --------------------------------------------------------------------------
# Checks

class FixtureError(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise FixtureError(message)


def invoke(model, image):
    interpreter = Interpreter(model_content=bytes(model))
    interpreter.allocate_tensors()
    detail = interpreter.get_input_details()[0]
    interpreter.set_tensor(detail["index"], image.astype(detail["dtype"]).reshape(detail["shape"]))
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


def check_classifier(path, image_path):
    options = vision.ImageClassifierOptions(base_options=task_core.BaseOptions(file_name=str(path)),
                                            classification_options=processor.ClassificationOptions(max_results=5))
    result = vision.ImageClassifier.create_from_options(options).classify(vision.TensorImage.create_from_file(str(image_path)))
    names = [c.category_name for c in result.classifications[0].categories]
    expect(sorted(names) == sorted(CLASSES), f"{path.name}: Task Library classes {names}")
    return names


def check_detector(path, image_path):
    options = vision.ObjectDetectorOptions(base_options=task_core.BaseOptions(file_name=str(path)),
                                           detection_options=processor.DetectionOptions(score_threshold=0.5))
    result = vision.ObjectDetector.create_from_options(options).detect(vision.TensorImage.create_from_file(str(image_path)))
    names = [d.categories[0].category_name for d in result.detections]
    expect(set(names) == set(COLOURS), f"{path.name}: Task Library detections {names}")
    return names


INVALID = {
    "metadata_wrong_identifier": "the TFLITE_METADATA buffer's identifier is 'M002', not 'M001'",
    "metadata_input_count_mismatch": "the metadata describes 2 inputs; the subgraph has 1",
    "metadata_zero_std": "the input's normalization has std 0",
    "associated_file_missing": "the metadata names labels.txt; the zip holds only other.txt",
    "zip_crc_mismatch": "labels.txt's CRC-32 in the zip does not match its bytes",
    "zip_truncated": "the zip after the model is cut before its end record",
    "zip_damaged_deflate": "labels.txt is deflated and its compressed bytes are damaged",
}


def classifier_with(directory, mean=(0.0,), std=(1.0,), label_name="labels.txt", extra_inputs=0, identifier=b"M001",
                    packed=None, deflate=False):
    """The 4-value classifier with a small metadata: an input with normalization, an output with a label file."""
    mb = ModelBuilder("ModelDepot small labelled classifier")
    g = mb.subgraph("main")
    features = g.tensor("features", TT.FLOAT32, [1, 4])
    w = g.tensor("w", TT.FLOAT32, [3, 4], CLASSIFIER_W)
    b = g.tensor("b", TT.FLOAT32, [3], CLASSIFIER_B)
    probs = g.tensor("probabilities", TT.FLOAT32, [1, 3])
    g.op(Op.FULLY_CONNECTED, [features, w, b], [probs], fb.BuiltinOptions.FullyConnectedOptions, fb.FullyConnectedOptionsT())
    g.io([features], [probs])
    normalization = _md.NormalizationOptionsT()
    normalization.mean, normalization.std = list(mean), list(std)
    unit = _md.ProcessUnitT()
    unit.optionsType, unit.options = _md.ProcessUnitOptions.NormalizationOptions, normalization
    inputs = []
    for _ in range(1 + extra_inputs):
        tensor = _md.TensorMetadataT()
        tensor.name, tensor.processUnits = "features", [unit]
        inputs.append(tensor)
    label = _md.AssociatedFileT()
    label.name, label.type = label_name, _md.AssociatedFileType.TENSOR_AXIS_LABELS
    output = _md.TensorMetadataT()
    output.name, output.associatedFiles = "probabilities", [label]
    subgraph = _md.SubGraphMetadataT()
    subgraph.inputTensorMetadata, subgraph.outputTensorMetadata = inputs, [output]
    metadata = _md.ModelMetadataT()
    metadata.name, metadata.subgraphMetadata = "Small classifier", [subgraph]
    builder = __import__("flatbuffers").Builder(0)
    builder.Finish(metadata.Pack(builder), identifier)
    mb.metadata("TFLITE_METADATA", bytes(builder.Output()))
    model = mb.serialize()
    archive = io.BytesIO(model)
    with zipfile.ZipFile(archive, "a") as zf:
        for name, text in (packed or {label_name: "daisy\nrose\ntulip\n"}).items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.create_system = 0
            info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            zf.writestr(info, text)
    return archive.getvalue()


def invalid_fixtures(directory):
    good = classifier_with(directory)
    label_data = good.index(b"daisy\nrose")
    crc = bytearray(good)
    crc[label_data] ^= 0x20
    deflated = bytearray(classifier_with(directory, packed={"labels.txt": "daisy\nrose\ntulip\n" * 40}, deflate=True))
    info = zipfile.ZipFile(io.BytesIO(bytes(deflated))).infolist()[0]
    data_start = info.header_offset + 30 + len(info.filename)
    deflated[data_start] = 0xFF
    return {
        "metadata_wrong_identifier": classifier_with(directory, identifier=b"M002"),
        "metadata_input_count_mismatch": classifier_with(directory, extra_inputs=1),
        "metadata_zero_std": classifier_with(directory, std=(0.0,)),
        "associated_file_missing": classifier_with(directory, packed={"other.txt": "x\n"}),
        "zip_crc_mismatch": bytes(crc),
        "zip_truncated": good[:-30],
        "zip_damaged_deflate": bytes(deflated),
    }


def main():
    failures = []

    def attempt(what, function, *arguments):
        try:
            return function(*arguments)
        except Exception as error:  # noqa: BLE001 - report every failure
            failures.append(f"{what}: {type(error).__name__}: {error}")
            return None

    for directory in (OUT, OUT / "invalid", IMAGES, AUTOML):
        directory.mkdir(parents=True, exist_ok=True)
    images = {"scene_50x37": test_image(50, 37), "scene_16x16": test_image(16, 16), "scene_300x200": test_image(300, 200)}
    for name, image in images.items():
        (IMAGES / f"{name}.png").write_bytes(png(image))
    (IMAGES / "scene_50x37.ppm").write_bytes(ppm(images["scene_50x37"]))
    rgba = np.concatenate([images["scene_50x37"], np.full((37, 50, 1), 200, np.uint8)], axis=-1)
    (IMAGES / "scene_50x37_rgba.png").write_bytes(png(rgba))

    with tempfile.TemporaryDirectory() as directory:
        models = {
            "described_classifier": described_classifier(directory),
            "image_classifier": with_classifier_metadata(float_classifier(), 127.5, 127.5, directory),
            "image_classifier_uint8": with_classifier_metadata(uint8_classifier(), 0.0, 1.0, directory),
            "object_detector": with_detector_metadata(detector(), directory),
            "pixel_echo": image_classifier.MetadataWriter.create_for_inference(
                pixel_echo(), [-1.0], [1.0],
                [temporary_file(directory, "pixels.txt", "".join(f"p{i}\n" for i in range(SIZE * SIZE * 3)))]).populate(),
        }
        for name, model in models.items():
            (OUT / f"{name}.tflite").write_bytes(model)
        for name, model in invalid_fixtures(directory).items():
            (OUT / "invalid" / f"{name}.tflite").write_bytes(model)
    (OUT / "invalid" / "README.md").write_text(
        "# Damaged TFLite Model Metadata\n\nGenerated by scripts/tflite/make_metadata_fixtures.py: the small labelled "
        "classifier with one defect each.\n\n" + "".join(f"- `{name}.tflite` — {what}\n" for name, what in INVALID.items()))

    automl_model = detector(automl_names=True)
    (AUTOML / "model.tflite").write_bytes(automl_model)
    (AUTOML / "dict.txt").write_text("\n".join(COLOURS) + "\n")
    (AUTOML / "tflite_metadata.json").write_text(json.dumps({
        "batchSize": 1, "imageChannels": 3, "imageHeight": SIZE, "imageWidth": SIZE,
        "inferenceType": "QUANTIZED_UINT8", "inputShape": [1, SIZE, SIZE, 3],
        "inputTensor": "normalized_input_image_tensor", "maxDetections": MAX_DETECTIONS,
        "outputTensorRepresentation": ["bounding_boxes", "class_labels", "class_confidences", "num_of_boxes"],
        "outputTensors": ["TFLite_Detection_PostProcess", "TFLite_Detection_PostProcess:1",
                          "TFLite_Detection_PostProcess:2", "TFLite_Detection_PostProcess:3"]}, indent=2) + "\n")

    scene = IMAGES / "scene_50x37.png"
    print("image_classifier:", attempt("image_classifier", check_classifier, OUT / "image_classifier.tflite", scene))
    print("image_classifier_uint8:", attempt("image_classifier_uint8", check_classifier, OUT / "image_classifier_uint8.tflite", scene))
    print("object_detector:", attempt("object_detector", check_detector, OUT / "object_detector.tflite", IMAGES / "scene_300x200.png"))
    echo = attempt("pixel_echo", invoke, models["pixel_echo"], images["scene_16x16"].astype(np.float32) + 1.0)
    if echo is not None and not np.array_equal(echo[0].reshape(-1), images["scene_16x16"].reshape(-1) + 1.0):
        failures.append("pixel_echo does not echo its input")
    attempt("automl detector", invoke, automl_model, images["scene_16x16"])
    for path in sorted(OUT.glob("**/*.tflite")) + sorted(AUTOML.glob("*")) + sorted(IMAGES.glob("*")):
        print(f"{path.stat().st_size:7d}  {path.relative_to(ROOT)}")
    if failures:
        print("\nFIXTURE CHECK FAILED:", *failures, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
