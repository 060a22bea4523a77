"""The camera benchmark's models and frames (scripts/bench/camera). Run with the Python of
.build/tflite-support (tflite-support 0.4.4, ai-edge-litert):

    camera_models.py DIR      writes DIR/{detector_300.tflite, classifier_224.tflite, frames.nv12, frames.rgb}

No PyPI package ships a trained SSD or image classifier (see the README), so both models are
MobileNetV2 (Sandler et al., 2018: the inverted residual stack, width 1.0) with seeded random
weights, giving the compute of the models apps run, with a colour head beside the backbone so
that their answers mean something on the frames:
  * detector_300: float32 [1, 300, 300, 3] input; MobileNetV2 to a 10x10x1280 map, SSD heads
    (1x1 convolutions: box encodings, class logits) on it, plus each anchor's colour excess over
    its window (average pooling of the input); TFLite_Detection_PostProcess (100 anchors of two
    cells, 10 detections, NMS IoU 0.1); ObjectDetectorWriter metadata (mean and std 127.5).
  * classifier_224: float32 [1, 224, 224, 3] input; MobileNetV2 to 7x7x1280, average pooling,
    a fully connected layer to five classes plus the colour excess of the whole image, softmax;
    ImageClassifierWriter metadata (red, green, blue, dark, bright).
The backbone's contribution is scaled down (its weights times 1e-3 in the heads) but computed
in full. Frames: 200 of 640x480, five coloured squares of 128x96 pixels on a grey gradient with
noise, each moving on a lane (a row) of its own and bouncing at the edges; NV12 in BT.601 video range
(frames.nv12) and the same frames as RGB (frames.rgb) for the Task Library, which takes RGB.
"""
import sys
import tempfile
from pathlib import Path

import flatbuffers
import numpy as np
from flatbuffers import flexbuffers

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tflite"))
from make_fixtures import Op, TT, ModelBuilder, fb  # noqa: E402
from tflite_support.metadata_writers import image_classifier, object_detector  # noqa: E402

CLASSES = ["red", "green", "blue", "dark", "bright"]
WIDTH, HEIGHT, FRAMES = 640, 480, 200
# MobileNetV2's inverted residual settings: expansion, channels, repeats, first stride.
SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


class FastBufferT(fb.BufferT):
    """A buffer whose data (bytes) is copied in one slice, 16-byte aligned, instead of byte by byte."""

    def Pack(self, builder):
        data = None
        if self.data:
            builder.StartVector(1, len(self.data), 16)
            builder.head -= len(self.data)
            builder.Bytes[builder.head:builder.head + len(self.data)] = self.data
            data = builder.EndVector()
        fb.BufferStart(builder)
        if data is not None:
            fb.BufferAddData(builder, data)
        return fb.BufferEnd(builder)


class Builder(ModelBuilder):
    def buffer(self, data):
        buf = FastBufferT()
        buf.data = bytes(data)
        self.model.buffers.append(buf)
        return len(self.model.buffers) - 1

    def serialize(self):
        builder = flatbuffers.Builder(64 << 20)
        builder.Finish(self.model.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())


class Net:
    def __init__(self, g, seed):
        self.g, self.rng, self.count = g, np.random.default_rng(seed), 0

    def name(self, kind):
        self.count += 1
        return f"{kind}_{self.count}"

    def shape(self, x):
        return self.g.sg.tensors[x].shape

    def conv(self, x, out_channels, kernel=1, stride=1, relu6=True, scale=1.0, weights=None, bias=None):
        _, h, w, c = self.shape(x)
        name = self.name("conv")
        fan_in = kernel * kernel * c
        if weights is None:
            weights = self.rng.normal(0, np.sqrt(2.0 / fan_in), (out_channels, kernel, kernel, c)) * scale
        bias = np.zeros(out_channels) if bias is None else bias
        wt = self.g.tensor(name + "/weights", TT.FLOAT32, [out_channels, kernel, kernel, c], weights.astype(np.float32))
        bt = self.g.tensor(name + "/bias", TT.FLOAT32, [out_channels], np.asarray(bias, np.float32))
        out = self.g.tensor(name, TT.FLOAT32, [1, -(-h // stride), -(-w // stride), out_channels])
        options = fb.Conv2DOptionsT()
        options.padding, options.strideW, options.strideH = fb.Padding.SAME, stride, stride
        options.dilationWFactor = options.dilationHFactor = 1
        options.fusedActivationFunction = fb.ActivationFunctionType.RELU6 if relu6 else fb.ActivationFunctionType.NONE
        self.g.op(Op.CONV_2D, [x, wt, bt], [out], fb.BuiltinOptions.Conv2DOptions, options)
        return out

    def depthwise(self, x, stride):
        _, h, w, c = self.shape(x)
        name = self.name("depthwise")
        wt = self.g.tensor(name + "/weights", TT.FLOAT32, [1, 3, 3, c], self.rng.normal(0, np.sqrt(2.0 / 9), (1, 3, 3, c)).astype(np.float32))
        bt = self.g.tensor(name + "/bias", TT.FLOAT32, [c], np.zeros(c, np.float32))
        out = self.g.tensor(name, TT.FLOAT32, [1, -(-h // stride), -(-w // stride), c])
        options = fb.DepthwiseConv2DOptionsT()
        options.padding, options.strideW, options.strideH, options.depthMultiplier = fb.Padding.SAME, stride, stride, 1
        options.dilationWFactor = options.dilationHFactor = 1
        options.fusedActivationFunction = fb.ActivationFunctionType.RELU6
        self.g.op(Op.DEPTHWISE_CONV_2D, [x, wt, bt], [out], fb.BuiltinOptions.DepthwiseConv2DOptions, options)
        return out

    def add(self, a, b):
        out = self.g.tensor(self.name("add"), TT.FLOAT32, self.shape(a))
        self.g.op(Op.ADD, [a, b], [out], fb.BuiltinOptions.AddOptions, fb.AddOptionsT())
        return out

    def pool(self, x, size, stride):
        _, h, w, c = self.shape(x)
        out = self.g.tensor(self.name("pool"), TT.FLOAT32, [1, -(-h // stride), -(-w // stride), c])
        options = fb.Pool2DOptionsT()
        options.padding, options.strideW, options.strideH = fb.Padding.SAME, stride, stride
        options.filterWidth = options.filterHeight = size
        self.g.op(Op.AVERAGE_POOL_2D, [x], [out], fb.BuiltinOptions.Pool2DOptions, options)
        return out

    def reshape(self, x, shape):
        out = self.g.tensor(self.name("reshape"), TT.FLOAT32, shape)
        shape_tensor = self.g.tensor(self.name("shape"), TT.INT32, [len(shape)], np.array(shape, np.int32))
        options = fb.ReshapeOptionsT()
        options.newShape = list(shape)
        self.g.op(Op.RESHAPE, [x, shape_tensor], [out], fb.BuiltinOptions.ReshapeOptions, options)
        return out

    def unary(self, op, x, options_type=0, options=None):
        out = self.g.tensor(self.name("out"), TT.FLOAT32, self.shape(x))
        self.g.op(op, [x], [out], options_type, options)
        return out

    def mobilenet_v2(self, image):
        x = self.conv(image, 32, kernel=3, stride=2)
        channels = 32
        for expansion, out_channels, repeats, first_stride in SETTINGS:
            for index in range(repeats):
                stride = first_stride if index == 0 else 1
                y = self.conv(x, channels * expansion) if expansion != 1 else x
                y = self.depthwise(y, stride)
                y = self.conv(y, out_channels, relu6=False)
                x = self.add(x, y) if stride == 1 and channels == out_channels else y
                channels = out_channels
        return self.conv(x, 1280)


def colour_weights(rows, first):
    """Class logits from a window's mean colour (pixels in [-1, 1]): rows `first` to `first + 2`
    score red, green and blue by their channel's excess over the other two; with five rows and
    `first` 0, the last two score dark and bright by the overall level."""
    w = np.zeros((rows, 3), np.float32)
    for c in range(3):
        w[first + c] = [(2.0 if other == c else -1.0) * 3.0 for other in range(3)]
    if rows == len(CLASSES) and first == 0:
        w[3], w[4] = [-2.0] * 3, [2.0] * 3
    return w


def detector():
    mb = Builder("ModelDepot camera benchmark detector (MobileNetV2 SSD, 300x300)")
    g = mb.subgraph("main")
    net = Net(g, 300)
    image = g.tensor("image", TT.FLOAT32, [1, 300, 300, 3])
    features = net.mobilenet_v2(image)  # [1, 10, 10, 1280]
    anchors_count, colour_classes = 100, 4  # background + red, green, blue
    boxes = net.reshape(net.conv(features, 4, relu6=False, scale=1e-3), [1, anchors_count, 4])
    learned = net.conv(features, colour_classes, relu6=False, scale=1e-3)
    windows = net.pool(image, 60, 30)  # each anchor's window: two cells around its own
    colour = net.conv(windows, colour_classes, relu6=False, weights=colour_weights(colour_classes, 1)[:, None, None, :],
                      bias=np.array([0.0, -3.5, -3.5, -3.5]))
    scores = net.reshape(net.unary(Op.LOGISTIC, net.add(learned, colour)), [1, anchors_count, colour_classes])
    anchors = np.array([[(r + 0.5) / 10, (c + 0.5) / 10, 0.2, 0.2] for r in range(10) for c in range(10)], np.float32)
    anchor_tensor = g.tensor("anchors", TT.FLOAT32, [anchors_count, 4], anchors)
    outputs = [g.tensor("TFLite_Detection_PostProcess", TT.FLOAT32, [1, 10, 4]), g.tensor("TFLite_Detection_PostProcess:1", TT.FLOAT32, [1, 10]),
               g.tensor("TFLite_Detection_PostProcess:2", TT.FLOAT32, [1, 10]), g.tensor("TFLite_Detection_PostProcess:3", TT.FLOAT32, [1])]
    code = fb.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = Op.CUSTOM
    code.customCode, code.version = "TFLite_Detection_PostProcess", 1
    mb.model.operatorCodes.append(code)
    op = fb.OperatorT()
    op.opcodeIndex = len(mb.model.operatorCodes) - 1
    op.inputs, op.outputs = [boxes, scores, anchor_tensor], outputs
    op.customOptions = list(flexbuffers.Dumps({
        "max_detections": 10, "max_classes_per_detection": 1, "detections_per_class": 100, "use_regular_nms": False,
        "nms_score_threshold": 0.05, "nms_iou_threshold": 0.1, "num_classes": 3,
        "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}))
    op.customOptionsFormat = fb.CustomOptionsFormat.FLEXBUFFERS
    g.sg.operators.append(op)
    g.io([image], outputs)
    return mb.serialize()


def classifier():
    mb = Builder("ModelDepot camera benchmark classifier (MobileNetV2, 224x224)")
    g = mb.subgraph("main")
    net = Net(g, 224)
    image = g.tensor("image", TT.FLOAT32, [1, 224, 224, 3])
    features = net.pool(net.mobilenet_v2(image), 7, 7)  # [1, 1, 1, 1280]
    learned = net.conv(features, len(CLASSES), relu6=False, scale=1e-3)
    colour = net.conv(net.pool(image, 224, 224), len(CLASSES), relu6=False, weights=colour_weights(len(CLASSES), 0)[:, None, None, :],
                      bias=np.array([0.0, 0.0, 0.0, -1.0, -1.0]))
    logits = net.reshape(net.add(learned, colour), [1, len(CLASSES)])
    options = fb.SoftmaxOptionsT()
    options.beta = 1.0
    probabilities = net.unary(Op.SOFTMAX, logits, fb.BuiltinOptions.SoftmaxOptions, options)
    g.io([image], [probabilities])
    return mb.serialize()


def frames():
    """RGB frames: five squares, each on a lane (a row) of its own, moving and bouncing at the
    edges; a seeded noise on the background."""
    rng = np.random.default_rng(5)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    background = (100 + (x + y) * 50 // (WIDTH + HEIGHT)).astype(np.int16)
    colours = [(230, 30, 30), (30, 200, 40), (30, 40, 230), (220, 40, 60), (40, 210, 90)]
    starts, speeds = [20, 400, 200, 480, 100], [2, 3, 2, 1, 3]
    size_x, size_y = 128, 96
    span = WIDTH - size_x
    for frame in range(FRAMES):
        image = np.repeat(background[:, :, None], 3, axis=2) + rng.integers(-6, 7, (HEIGHT, WIDTH, 3))
        for lane, (colour, start, speed) in enumerate(zip(colours, starts, speeds)):
            position = (start + speed * frame) % (2 * span)
            left = position if position < span else 2 * span - position
            image[lane * size_y:(lane + 1) * size_y, left:left + size_x] = colour
        yield np.clip(image, 0, 255).astype(np.uint8)


def nv12(rgb):
    """BT.601 video range, chroma averaged over each 2x2 block."""
    r, g, b = (rgb[:, :, i].astype(np.float64) for i in range(3))
    luma = 16 + 0.257 * r + 0.504 * g + 0.098 * b
    u = 128 - 0.148 * r - 0.291 * g + 0.439 * b
    v = 128 + 0.439 * r - 0.368 * g - 0.071 * b
    quarter = lambda plane: plane.reshape(HEIGHT // 2, 2, WIDTH // 2, 2).mean(axis=(1, 3))
    chroma = np.stack([quarter(u), quarter(v)], axis=-1).reshape(HEIGHT // 2, WIDTH)
    return np.concatenate([np.round(luma).clip(0, 255).astype(np.uint8).ravel(), np.round(chroma).clip(0, 255).astype(np.uint8).ravel()])


def main(directory):
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        labels = Path(scratch) / "labels.txt"
        labels.write_text("\n".join(CLASSES) + "\n")
        colours = Path(scratch) / "labelmap.txt"
        colours.write_text("\n".join(CLASSES[:3]) + "\n")
        (out / "classifier_224.tflite").write_bytes(
            image_classifier.MetadataWriter.create_for_inference(classifier(), [127.5], [127.5], [str(labels)]).populate())
        (out / "detector_300.tflite").write_bytes(
            object_detector.MetadataWriter.create_for_inference(detector(), [127.5], [127.5], [str(colours)]).populate())
    with open(out / "frames.nv12", "wb") as yuv, open(out / "frames.rgb", "wb") as rgb:
        for image in frames():
            yuv.write(nv12(image).tobytes())
            rgb.write(image.tobytes())


if __name__ == "__main__":
    main(sys.argv[1])
