#!/usr/bin/env python3
"""Writes the small, real TFLite models used by ModelDepot's tests.

Output, all deterministic (same bytes on every run):
  * Tests/Fixtures/tflite/*.tflite: valid models. Each is loaded, allocated
    and invoked with the LiteRT Python Interpreter, with the results checked
    against numpy references, and loaded and compiled through the LiteRT C API
    in a forked child (litert_load.py).
  * Tests/Fixtures/tflite/invalid/*.tflite (+ README.md): structurally valid
    flatbuffers with exactly one semantic defect each, for ModelDepot's
    verifier. They are not loaded in LiteRT here (it may crash on them); the
    script only checks that the generated accessors can unpack them.
  * Tests/Fixtures/tflite/policy/*.tflite: valid models that only a stricter
    policy rejects (custom / Flex operators, sparse tensors). Each must
    construct a Python Interpreter and load through the LiteRT C API without
    crashing; the ones LiteRT can run (no unresolved custom op) are also
    allocated, invoked and checked.
The script exits non-zero with a message if anything fails.

Models are built with the TFLite schema's Python object API, laid out the way
the TF converter lays them out: buffer 0 is the empty sentinel buffer (a Buffer
table without fields), constant data is 16-byte aligned, operator codes fill
both deprecated_builtin_code and builtin_code, schema version 3. Tensors without
constant data point at buffer 0.
"""

import io
import sys
import zipfile
from pathlib import Path

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as fb
from ai_edge_litert.interpreter import Interpreter

SCRIPT_DIR = Path(__file__).resolve().parent
REPO_ROOT = SCRIPT_DIR.parent.parent
OUT_DIR = REPO_ROOT / "Tests" / "Fixtures" / "tflite"

sys.path.insert(0, str(SCRIPT_DIR))
import litert_load  # noqa: E402  (sibling script)

Op = fb.BuiltinOperator
TT = fb.TensorType

# numpy little-endian dtype for each tensor type used here.
NP_DTYPE = {TT.FLOAT32: "<f4", TT.FLOAT16: "<f2", TT.INT32: "<i4",
            TT.INT8: "i1", TT.UINT8: "u1", TT.BOOL: "?"}

MAX_FIXTURE_SIZE = 2048


# --------------------------------------------------------------------------
# Building models

class AlignedBufferT(fb.BufferT):
    """BufferT whose data vector is 16-byte aligned (schema: force_align: 16).

    The generated BufferT.Pack ignores force_align; the TF converter honours it,
    and kernels may read constant data in place, so align it here too.
    """

    def Pack(self, builder):
        data = None
        if self.data:
            builder.StartVector(1, len(self.data), 16)
            for byte in reversed(self.data):
                builder.PrependUint8(byte)
            data = builder.EndVector()
        fb.BufferStart(builder)
        if data is not None:
            fb.BufferAddData(builder, data)
        # Data stored outside the flatbuffer; 0 (the default) is not written.
        fb.BufferAddOffset(builder, self.offset)
        fb.BufferAddSize(builder, self.size)
        return fb.BufferEnd(builder)


def quant(scales, zero_points, axis=0):
    q = fb.QuantizationParametersT()
    q.scale = [float(s) for s in scales]
    q.zeroPoint = [int(z) for z in zero_points]
    q.quantizedDimension = axis
    return q


class ModelBuilder:
    def __init__(self, description):
        self.model = fb.ModelT()
        self.model.version = 3
        self.model.description = description
        self.model.buffers = [AlignedBufferT()]  # buffer 0: empty sentinel
        self.model.operatorCodes = []
        self.model.subgraphs = []
        self._opcodes = {}

    def buffer(self, data):
        buf = AlignedBufferT()
        buf.data = list(bytes(data))
        self.model.buffers.append(buf)
        return len(self.model.buffers) - 1

    def opcode(self, builtin, version):
        key = (builtin, version)
        if key not in self._opcodes:
            code = fb.OperatorCodeT()
            code.builtinCode = builtin
            # int8 legacy field: codes >= 127 are stored as 127 (placeholder).
            code.deprecatedBuiltinCode = min(builtin, 127)
            code.version = version
            self._opcodes[key] = len(self.model.operatorCodes)
            self.model.operatorCodes.append(code)
        return self._opcodes[key]

    def subgraph(self, name):
        g = Graph(self, name)
        self.model.subgraphs.append(g.sg)
        return g

    def signature(self, key, subgraph_index, inputs, outputs):
        """inputs/outputs: lists of (signature name, tensor index)."""
        def maps(pairs):
            out = []
            for name, index in pairs:
                m = fb.TensorMapT()
                m.name, m.tensorIndex = name, index
                out.append(m)
            return out
        sig = fb.SignatureDefT()
        sig.signatureKey = key
        sig.subgraphIndex = subgraph_index
        sig.inputs, sig.outputs = maps(inputs), maps(outputs)
        if self.model.signatureDefs is None:
            self.model.signatureDefs = []
        self.model.signatureDefs.append(sig)

    def metadata(self, name, data):
        meta = fb.MetadataT()
        meta.name, meta.buffer = name, self.buffer(data)
        if self.model.metadata is None:
            self.model.metadata = []
        self.model.metadata.append(meta)

    def serialize(self):
        builder = flatbuffers.Builder(1024)
        builder.Finish(self.model.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())


class Graph:
    def __init__(self, mb, name):
        self.mb = mb
        self.sg = fb.SubGraphT()
        self.sg.name = name
        self.sg.tensors, self.sg.operators = [], []
        self.sg.inputs, self.sg.outputs = [], []

    def tensor(self, name, ttype, shape, data=None, quantization=None,
               shape_signature=None, sparsity=None):
        """sparsity: SparsityParametersT; data then holds only the stored
        (non-zero) values."""
        t = fb.TensorT()
        t.name, t.type, t.shape = name, ttype, list(shape)
        t.shapeSignature = shape_signature
        t.quantization = quantization
        t.sparsity = sparsity
        if data is not None:
            arr = np.asarray(data, dtype=NP_DTYPE[ttype])
            if sparsity is None:
                arr = arr.reshape(shape)
            t.buffer = self.mb.buffer(arr.tobytes())
        else:
            t.buffer = 0
        self.sg.tensors.append(t)
        return len(self.sg.tensors) - 1

    def op(self, builtin, inputs, outputs, options_type=0, options=None,
           version=1):
        o = fb.OperatorT()
        o.opcodeIndex = self.mb.opcode(builtin, version)
        o.inputs, o.outputs = list(inputs), list(outputs)
        o.builtinOptionsType, o.builtinOptions = options_type, options
        self.sg.operators.append(o)

    def io(self, inputs, outputs):
        self.sg.inputs, self.sg.outputs = list(inputs), list(outputs)


# --------------------------------------------------------------------------
# Fixtures. Each make_* returns (ModelBuilder, check) where check(interpreter)
# runs the model in the Python Interpreter and raises on a wrong result. The
# builder is returned unserialized so that variant() can derive broken or
# policy-relevant models from it.

CLASSIFIER_W = np.array([[4, -1, -1, 0],
                         [-1, 4, -1, 0],
                         [-1, -1, 4, 0.5]], dtype=np.float32)
CLASSIFIER_B = np.array([0.1, 0.0, -0.1], dtype=np.float32)


def make_float_classifier():
    mb = ModelBuilder("ModelDepot float32 classifier fixture")
    g = mb.subgraph("main")
    image = g.tensor("image", TT.FLOAT32, [1, 4])
    w = g.tensor("classifier/weights", TT.FLOAT32, [3, 4], CLASSIFIER_W)
    b = g.tensor("classifier/bias", TT.FLOAT32, [3], CLASSIFIER_B)
    logits = g.tensor("classifier/logits", TT.FLOAT32, [1, 3])
    probs = g.tensor("probabilities", TT.FLOAT32, [1, 3])
    g.op(Op.FULLY_CONNECTED, [image, w, b], [logits],
         fb.BuiltinOptions.FullyConnectedOptions, fb.FullyConnectedOptionsT())
    softmax = fb.SoftmaxOptionsT()
    softmax.beta = 1.0
    g.op(Op.SOFTMAX, [logits], [probs], fb.BuiltinOptions.SoftmaxOptions, softmax)
    g.io([image], [probs])
    mb.signature("serving_default", 0, [("image", image)],
                 [("probabilities", probs)])
    # The TF converter stores the minimum runtime version as a 16-byte,
    # zero-padded string.
    mb.metadata("min_runtime_version", b"1.5.0".ljust(16, b"\0"))

    def check(interp):
        for cls in range(3):
            x = np.zeros((1, 4), np.float32)
            x[0, cls] = 1.0
            got = run(interp, [x])[0]
            logits = x @ CLASSIFIER_W.T + CLASSIFIER_B
            want = np.exp(logits) / np.exp(logits).sum()
            expect(np.allclose(got, want, atol=1e-5), f"probabilities {got} != {want}")
            expect(int(np.argmax(got)) == cls, f"top class {np.argmax(got)} != {cls}")
    return mb, check


def append_labels(model_bytes, labels):
    """Appends a zip holding labels.txt after the model, the way TFLite
    metadata writers attach associated files (zipfile in append mode on the
    model bytes, so offsets in the zip are relative to the start of the file).
    """
    buf = io.BytesIO(model_bytes)
    with zipfile.ZipFile(buf, "a", compression=zipfile.ZIP_STORED) as zf:
        info = zipfile.ZipInfo("labels.txt", date_time=(1980, 1, 1, 0, 0, 0))
        info.create_system = 0        # fixed, not the host OS
        info.external_attr = 0o644 << 16
        zf.writestr(info, labels)
    return buf.getvalue()


def make_int8_conv():
    in_scale, in_zp = 0.5, -1
    f_scales = np.array([0.02, 0.05, 0.1])
    # Deterministic filter values in [-10, 10], layout [out, h, w, in].
    f_q = ((np.arange(24) * 37) % 21 - 10).astype(np.int8).reshape(3, 2, 2, 2)
    bias_scales = in_scale * f_scales
    bias_real = np.array([0.5, -1.0, 2.0])
    bias_q = np.round(bias_real / bias_scales).astype(np.int32)
    out_scale, out_zp = 0.25, 5

    mb = ModelBuilder("ModelDepot int8 per-channel conv fixture")
    g = mb.subgraph("main")
    x = g.tensor("input", TT.INT8, [1, 4, 4, 2], quantization=quant([in_scale], [in_zp]))
    f = g.tensor("conv/filter", TT.INT8, [3, 2, 2, 2], f_q,
                 quant(f_scales, [0, 0, 0], axis=0))
    b = g.tensor("conv/bias", TT.INT32, [3], bias_q, quant(bias_scales, [0, 0, 0], axis=0))
    y = g.tensor("output", TT.INT8, [1, 3, 3, 3], quantization=quant([out_scale], [out_zp]))
    opts = fb.Conv2DOptionsT()
    opts.padding = fb.Padding.VALID
    opts.strideW = opts.strideH = 1
    opts.dilationWFactor = opts.dilationHFactor = 1
    g.op(Op.CONV_2D, [x, f, b], [y], fb.BuiltinOptions.Conv2DOptions, opts,
         version=3)  # version 3 = int8 (per-channel) kernel
    g.io([x], [y])
    mb.signature("serving_default", 0, [("input", x)], [("output", y)])

    def check(interp):
        xq = ((np.arange(32) * 7) % 19 - 9).astype(np.int8).reshape(1, 4, 4, 2)
        got = run(interp, [xq])[0]
        # float reference of the quantized computation
        xr = (xq.astype(np.float64) - in_zp) * in_scale
        fr = f_q.astype(np.float64) * f_scales[:, None, None, None]
        br = bias_q * bias_scales
        want = np.zeros((1, 3, 3, 3))
        for i in range(3):
            for j in range(3):
                patch = xr[0, i:i + 2, j:j + 2, :]
                want[0, i, j, :] = (fr * patch).sum(axis=(1, 2, 3)) + br
        want_q = np.clip(np.round(want / out_scale) + out_zp, -128, 127)
        diff = np.abs(got.astype(int) - want_q).max()
        expect(diff <= 1, f"int8 conv differs from reference by {diff}")
        expect(len(np.unique(got)) > 5, "int8 conv output is degenerate")
    return mb, check


# uint8 asymmetric quantization parameters: (scale, zero point)
A_Q, B_Q, SUM_Q, PROD_Q = (0.1, 10), (0.05, 128), (0.15, 50), (1.25, 128)


def _add_mul_graph(mb, name, with_product):
    g = mb.subgraph(name)

    def u8(tensor_name, qp):
        return g.tensor(tensor_name, TT.UINT8, [1, 2, 2, 1],
                        quantization=quant([qp[0]], [qp[1]]))
    if with_product:
        a, b, s = u8("a_tensor", A_Q), u8("b_tensor", B_Q), u8("sum_tensor", SUM_Q)
    else:
        # Different tensor order than in "main", so that signature tensor
        # indices (a=1, b=2, sum=0) tell the two subgraphs apart.
        s, a, b = u8("sum_tensor", SUM_Q), u8("a_tensor", A_Q), u8("b_tensor", B_Q)
    g.op(Op.ADD, [a, b], [s], fb.BuiltinOptions.AddOptions, fb.AddOptionsT())
    outs = [s]
    if with_product:
        p = u8("product_tensor", PROD_Q)
        g.op(Op.MUL, [a, b], [p], fb.BuiltinOptions.MulOptions, fb.MulOptionsT())
        outs.append(p)
    g.io([a, b], outs)
    return a, b, outs


def make_uint8_two_in_two_out():
    mb = ModelBuilder("ModelDepot uint8 two-input two-output fixture")
    a, b, (s, p) = _add_mul_graph(mb, "main", with_product=True)
    # Signature names differ from tensor names ("a" vs "a_tensor").
    mb.signature("serving_default", 0, [("a", a), ("b", b)],
                 [("sum", s), ("product", p)])
    a1, b1, (s1,) = _add_mul_graph(mb, "sum_only", with_product=False)
    mb.signature("sum_only", 1, [("a", a1), ("b", b1)], [("sum", s1)])

    def deq(q, qp):
        return (q.astype(np.float64) - qp[1]) * qp[0]

    def requant(r, qp):
        return np.clip(np.round(r / qp[0]) + qp[1], 0, 255)

    def check(interp):
        aq = np.array([0, 40, 130, 255], np.uint8).reshape(1, 2, 2, 1)
        bq = np.array([255, 100, 128, 0], np.uint8).reshape(1, 2, 2, 1)
        got_s, got_p = run(interp, [aq, bq])
        want_s = requant(deq(aq, A_Q) + deq(bq, B_Q), SUM_Q)
        want_p = requant(deq(aq, A_Q) * deq(bq, B_Q), PROD_Q)
        expect(np.abs(got_s.astype(int) - want_s).max() <= 1, f"sum {got_s.ravel()}")
        expect(np.abs(got_p.astype(int) - want_p).max() <= 1, f"product {got_p.ravel()}")
        got = interp.get_signature_runner("sum_only")(a=aq, b=bq)["sum"]
        expect(np.array_equal(got, got_s), f"sum_only gives {got.ravel()}")
    return mb, check


def make_dynamic_batch():
    mb = ModelBuilder("ModelDepot dynamic batch fixture")
    g = mb.subgraph("main")
    x = g.tensor("input", TT.FLOAT32, [1, 4], shape_signature=[-1, 4])
    y = g.tensor("output", TT.FLOAT32, [1, 4], shape_signature=[-1, 4])
    g.op(Op.RELU, [x], [y])
    g.io([x], [y])

    def check(interp):
        x1 = np.array([[-1, 2, -3, 4]], np.float32)
        expect(np.array_equal(run(interp, [x1])[0], np.maximum(x1, 0)), "relu")
        # The -1 batch dimension must be resizable.
        x3 = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
        interp.resize_tensor_input(interp.get_input_details()[0]["index"], [3, 4],
                                   strict=True)
        interp.allocate_tensors()
        expect(np.array_equal(run(interp, [x3])[0], np.maximum(x3, 0)), "relu batch 3")
    return mb, check


FP16_WEIGHTS = np.array([[0.5, -1.0, 2.0, 0.25]], np.float16)


def make_fp16_weights():
    mb = ModelBuilder("ModelDepot float16 weights fixture")
    g = mb.subgraph("main")
    w16 = g.tensor("weights_fp16", TT.FLOAT16, [1, 4], FP16_WEIGHTS)
    w32 = g.tensor("weights", TT.FLOAT32, [1, 4])
    x = g.tensor("input", TT.FLOAT32, [1, 4])
    y = g.tensor("output", TT.FLOAT32, [1, 4])
    g.op(Op.DEQUANTIZE, [w16], [w32], version=3)  # version 3 = float16 input
    g.op(Op.ADD, [x, w32], [y], fb.BuiltinOptions.AddOptions, fb.AddOptionsT())
    g.io([x], [y])

    def check(interp):
        x1 = np.array([[1, 2, 3, 4]], np.float32)
        want = x1 + FP16_WEIGHTS.astype(np.float32)
        expect(np.array_equal(run(interp, [x1])[0], want), "fp16 add")
    return mb, check


WHILE_LIMIT = 3


def make_while_loop():
    """i -> while (i < 3) { i = i + 1 } -> result, on int32 scalars."""
    mb = ModelBuilder("ModelDepot while loop fixture")
    main = mb.subgraph("main")
    cond = mb.subgraph("while_cond")
    body = mb.subgraph("while_body")

    i = main.tensor("i", TT.INT32, [])
    result = main.tensor("result", TT.INT32, [])
    opts = fb.WhileOptionsT()
    opts.condSubgraphIndex, opts.bodySubgraphIndex = 1, 2
    main.op(Op.WHILE, [i], [result], fb.BuiltinOptions.WhileOptions, opts)
    main.io([i], [result])

    ci = cond.tensor("i", TT.INT32, [])
    limit = cond.tensor("limit", TT.INT32, [], WHILE_LIMIT)
    keep_going = cond.tensor("keep_going", TT.BOOL, [])
    cond.op(Op.LESS, [ci, limit], [keep_going], fb.BuiltinOptions.LessOptions,
            fb.LessOptionsT())
    cond.io([ci], [keep_going])

    bi = body.tensor("i", TT.INT32, [])
    one = body.tensor("one", TT.INT32, [], 1)
    nxt = body.tensor("next", TT.INT32, [])
    body.op(Op.ADD, [bi, one], [nxt], fb.BuiltinOptions.AddOptions, fb.AddOptionsT())
    body.io([bi], [nxt])

    def check(interp):
        for start, want in ((0, 3), (-2, 3), (7, 7)):
            got = run(interp, [np.array(start, np.int32)])[0]
            expect(got.shape == () and int(got) == want, f"while({start}) = {got}")
    return mb, check


SPARSE_WEIGHTS = np.array([[3, 0], [0, 5]], np.float32)


def csr_sparsity(dense):
    """SparsityParametersT storing a 2-D matrix row by row: dim 0 DENSE, dim 1
    SPARSE_CSR with int32 segments/indices. Returns (sparsity, stored values).
    """
    def int32_vector(values):
        v = fb.Int32VectorT()
        v.values = [int(x) for x in values]
        return v
    rows, cols = np.nonzero(dense)
    row_dim = fb.DimensionMetadataT()
    row_dim.format, row_dim.denseSize = fb.DimensionType.DENSE, dense.shape[0]
    col_dim = fb.DimensionMetadataT()
    col_dim.format = fb.DimensionType.SPARSE_CSR
    col_dim.arraySegmentsType = fb.SparseIndexVector.Int32Vector
    col_dim.arraySegments = int32_vector(
        np.searchsorted(rows, np.arange(dense.shape[0] + 1)))
    col_dim.arrayIndicesType = fb.SparseIndexVector.Int32Vector
    col_dim.arrayIndices = int32_vector(cols)
    sparsity = fb.SparsityParametersT()
    sparsity.traversalOrder = [0, 1]
    sparsity.dimMetadata = [row_dim, col_dim]
    return sparsity, dense[rows, cols]


def make_sparse_tensor():
    """output = input + W, W a sparse (CSR) constant densified by DENSIFY,
    the way the TF converter stores sparse weights."""
    mb = ModelBuilder("ModelDepot sparse constant fixture")
    g = mb.subgraph("main")
    sparsity, values = csr_sparsity(SPARSE_WEIGHTS)
    x = g.tensor("input", TT.FLOAT32, [2, 2])
    w_sparse = g.tensor("weights_sparse", TT.FLOAT32, [2, 2], values,
                        sparsity=sparsity)
    w = g.tensor("weights", TT.FLOAT32, [2, 2])
    y = g.tensor("output", TT.FLOAT32, [2, 2])
    g.op(Op.DENSIFY, [w_sparse], [w], fb.BuiltinOptions.DensifyOptions,
         fb.DensifyOptionsT())
    g.op(Op.ADD, [x, w], [y], fb.BuiltinOptions.AddOptions, fb.AddOptionsT())
    g.io([x], [y])

    def check(interp):
        x1 = np.array([[1, 2], [3, 4]], np.float32)
        expect(np.array_equal(run(interp, [x1])[0], x1 + SPARSE_WEIGHTS),
               "sparse add")
    return mb, check


# --------------------------------------------------------------------------
# Variants: a base model with one change, for the invalid/ and policy/ sets.

def serialized(make):
    mb, check = make()
    return mb.serialize(), check


def variant(make_base, mutate):
    """Builds a fresh base model, applies mutate(model: ModelT), serializes."""
    mb, _ = make_base()
    mutate(mb.model)
    return mb.serialize()


def assign(obj, **fields):
    for name, value in fields.items():
        setattr(obj, name, value)


def main_op(m, index):
    return m.subgraphs[0].operators[index]


def main_tensor(m, name):
    return next(t for t in m.subgraphs[0].tensors if t.name == name)


def constant_buffer(m, tensor_name):
    return m.buffers[main_tensor(m, tensor_name).buffer]


def add_tensor(m, name, ttype, shape, buffer=0):
    t = fb.TensorT()
    t.name, t.type, t.shape, t.buffer = name, ttype, list(shape), buffer
    m.subgraphs[0].tensors.append(t)


def add_external_buffer(m, offset, size):
    buf = AlignedBufferT()
    buf.offset, buf.size = offset, size
    m.buffers.append(buf)
    return len(m.buffers) - 1


def softmax_to_custom(m, custom_code):
    """Turns the classifier's SOFTMAX into a CUSTOM operator (no options)."""
    op = main_op(m, CLASSIFIER_SOFTMAX)
    assign(m.operatorCodes[op.opcodeIndex], builtinCode=Op.CUSTOM,
           deprecatedBuiltinCode=Op.CUSTOM, customCode=custom_code, version=1)
    assign(op, builtinOptionsType=fb.BuiltinOptions.NONE, builtinOptions=None)


# Operator indices in the float classifier: FULLY_CONNECTED, then SOFTMAX.
CLASSIFIER_FC, CLASSIFIER_SOFTMAX = 0, 1

# name: (defect, base model, mutation). The defect text goes to README.md.
# Tensors of the float classifier: 0 image, 1 classifier/weights,
# 2 classifier/bias, 3 classifier/logits, 4 probabilities; buffers: 0 empty,
# 1 weights, 2 bias, 3 metadata "min_runtime_version".
INVALID = {
    "no_subgraphs": (
        "Model.subgraphs is present but empty (the signature, which would "
        "name the missing subgraph 0, is dropped too)",
        make_float_classifier,
        lambda m: assign(m, subgraphs=[], signatureDefs=None)),
    "tensor_buffer_out_of_range": (
        "tensor 3 (classifier/logits) has buffer 99; the model has 4 buffers",
        make_float_classifier,
        lambda m: assign(main_tensor(m, "classifier/logits"), buffer=99)),
    "opcode_index_out_of_range": (
        "operators[0] (FULLY_CONNECTED) has opcode_index 7; the model has 2 "
        "operator codes",
        make_float_classifier,
        lambda m: assign(main_op(m, CLASSIFIER_FC), opcodeIndex=7)),
    "operator_input_out_of_range": (
        "operators[0] (FULLY_CONNECTED) has input 0 = tensor 42; subgraph 0 "
        "has 5 tensors",
        make_float_classifier,
        lambda m: assign(main_op(m, CLASSIFIER_FC),
                         inputs=[42] + main_op(m, CLASSIFIER_FC).inputs[1:])),
    "operator_output_optional": (
        "operators[1] (SOFTMAX) has output -1 (the optional-tensor marker, "
        "only meaningful for inputs)",
        make_float_classifier,
        lambda m: assign(main_op(m, CLASSIFIER_SOFTMAX), outputs=[-1])),
    "subgraph_input_out_of_range": (
        "SubGraph.inputs = [17]; subgraph 0 has 5 tensors",
        make_float_classifier,
        lambda m: assign(m.subgraphs[0], inputs=[17])),
    "tensor_input_and_output": (
        "operators[1] (SOFTMAX) has tensor 4 (probabilities) as its input and "
        "as its output",
        make_float_classifier,
        lambda m: assign(main_op(m, CLASSIFIER_SOFTMAX), inputs=[4])),
    "negative_dimension": (
        "input tensor 0 (image) has shape [1, -4]",
        make_float_classifier,
        lambda m: assign(main_tensor(m, "image"), shape=[1, -4])),
    "shape_signature_rank_mismatch": (
        "input tensor 0 (image) has shape [1, 4] but shape_signature [-1]",
        make_float_classifier,
        lambda m: assign(main_tensor(m, "image"), shapeSignature=[-1])),
    "tensor_size_overflow": (
        "extra unused tensor 5 (huge, float32, no data) has shape "
        "[1073741824, 1073741824, 1073741824]: 2^92 bytes",
        make_float_classifier,
        lambda m: add_tensor(m, "huge", TT.FLOAT32, [1 << 30] * 3)),
    "tensor_size_overflow_int2": (
        "extra unused tensor 5 (huge, int2, no data) has shape "
        "[2147483647, 3, 715827883]: 2^62 - 1 elements of 2 bits, whose bits "
        "fit an Int64 but not once rounded up to whole bytes",
        make_float_classifier,
        lambda m: add_tensor(m, "huge", TT.INT2, [2147483647, 3, 715827883])),
    "constant_data_mismatch": (
        "buffer 1 of tensor 1 (classifier/weights, float32 [3, 4]) holds 44 "
        "bytes instead of 48",
        make_float_classifier,
        lambda m: assign(constant_buffer(m, "classifier/weights"),
                         data=constant_buffer(m, "classifier/weights").data[:-4])),
    "unknown_tensor_type": (
        "tensor 3 (classifier/logits) has type 99",
        make_float_classifier,
        lambda m: assign(main_tensor(m, "classifier/logits"), type=99)),
    "quantization_count_mismatch": (
        "tensor 0 (image) has quantization scale [0.5, 0.5] but zero_point [0] "
        "(2 scales on quantized_dimension 0 of size 1, too)",
        make_float_classifier,
        lambda m: assign(main_tensor(m, "image"), quantization=quant([0.5, 0.5], [0]))),
    "per_channel_dimension_mismatch": (
        "int8_conv: filter tensor 1 (conv/filter, [3, 2, 2, 2]) has 3 scales "
        "but quantized_dimension 1, which has size 2",
        make_int8_conv,
        lambda m: assign(main_tensor(m, "conv/filter").quantization,
                         quantizedDimension=1)),
    "external_buffer_out_of_bounds": (
        "buffer 4 has no data, offset 2^40, size 16 (far past the end of the "
        "file); an extra unused constant tensor 5 (external, float32 [4]) "
        "refers to it",
        make_float_classifier,
        lambda m: add_tensor(m, "external", TT.FLOAT32, [4],
                             buffer=add_external_buffer(m, 1 << 40, 16))),
    "signature_tensor_out_of_range": (
        "signature serving_default's output probabilities has tensor_index "
        "50; subgraph 0 has 5 tensors",
        make_float_classifier,
        lambda m: assign(m.signatureDefs[0].outputs[0], tensorIndex=50)),
    "signature_subgraph_out_of_range": (
        "signature serving_default has subgraph_index 3; the model has 1 "
        "subgraph",
        make_float_classifier,
        lambda m: assign(m.signatureDefs[0], subgraphIndex=3)),
    "metadata_buffer_out_of_range": (
        "metadata[0] (min_runtime_version) has buffer 77; the model has 4 "
        "buffers",
        make_float_classifier,
        lambda m: assign(m.metadata[0], buffer=77)),
    "negative_operator_code": (
        "operator_codes[1] (used by operators[1]) has deprecated_builtin_code "
        "-5 and builtin_code -5",
        make_float_classifier,
        lambda m: assign(m.operatorCodes[main_op(m, CLASSIFIER_SOFTMAX).opcodeIndex],
                         deprecatedBuiltinCode=-5, builtinCode=-5)),
    "custom_operator_without_name": (
        "operators[1] is a CUSTOM operator (builtin_code and "
        "deprecated_builtin_code 32) whose operator code has no custom_code",
        make_float_classifier,
        lambda m: softmax_to_custom(m, None)),
    "control_flow_subgraph_out_of_range": (
        "while_loop: the WHILE operator's WhileOptions.body_subgraph_index is "
        "9; the model has 3 subgraphs",
        make_while_loop,
        lambda m: assign(main_op(m, 0).builtinOptions, bodySubgraphIndex=9)),
}



def custom_classifier(custom_code):
    """The classifier with SOFTMAX as CUSTOM operator custom_code. LiteRT has
    no kernel for it, so there is no check (None): it is only loaded."""
    return variant(make_float_classifier,
                   lambda m: softmax_to_custom(m, custom_code)), None


# name: () -> (bytes, check or None)
POLICY = {
    "custom_operator": lambda: custom_classifier("MyCustomSoftmax"),
    "flex_operator": lambda: custom_classifier("FlexSoftmax"),
    "sparse_tensor": lambda: serialized(make_sparse_tensor),
}


# --------------------------------------------------------------------------
# Verification

class FixtureError(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise FixtureError(message)


def run(interp, inputs):
    """Sets subgraph 0's inputs in order, invokes, returns outputs in order."""
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def check_in_python(path, check):
    """Constructs an Interpreter; unless check is None, allocates and checks."""
    interp = Interpreter(model_path=str(path))
    if check is not None:
        interp.allocate_tensors()
        check(interp)


def check_unpacks(data):
    """For invalid fixtures: the TFL3 identifier is there and the generated
    accessors read every table (a smoke test, not a flatbuffer verifier)."""
    expect(fb.Model.ModelBufferHasIdentifier(data, 0), "no TFL3 file identifier")
    fb.ModelT.InitFromPackedBuf(data, 0)


def invalid_readme():
    lines = ["# Invalid TFLite fixtures", "",
             "Written by scripts/tflite/make_fixtures.py. Each file is a "
             "structurally valid flatbuffer with exactly one semantic defect; "
             "unless noted, it is float_classifier.tflite with that change.", ""]
    lines += [f"- `{name}.tflite` — {defect}"
              for name, (defect, _, _) in INVALID.items()]
    return "\n".join(lines) + "\n"


def main():
    classifier, classifier_check = serialized(make_float_classifier)
    valid = {
        "float_classifier.tflite": (classifier, classifier_check),
        "float_classifier_labels.tflite": (
            append_labels(classifier, "daisy\nrose\ntulip\n"), classifier_check),
        "int8_conv.tflite": serialized(make_int8_conv),
        "uint8_two_in_two_out.tflite": serialized(make_uint8_two_in_two_out),
        "dynamic_batch.tflite": serialized(make_dynamic_batch),
        "fp16_weights.tflite": serialized(make_fp16_weights),
        "while_loop.tflite": serialized(make_while_loop),
    }
    policy = {f"policy/{name}.tflite": make() for name, make in POLICY.items()}
    invalid = {f"invalid/{name}.tflite": variant(make_base, mutate)
               for name, (_, make_base, mutate) in INVALID.items()}

    failures, sizes = [], {}

    def write(name, data):
        path = OUT_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        sizes[name] = len(data)
        if path.suffix == ".tflite" and len(data) >= MAX_FIXTURE_SIZE:
            failures.append(f"{name}: {len(data)} bytes, limit {MAX_FIXTURE_SIZE}")
        return path

    def attempt(name, what, fn, *args):
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 - report every failure
            failures.append(f"{name}: {what}: {type(e).__name__}: {e}")

    runnable = {**valid, **policy}
    for name, (data, check) in runnable.items():
        attempt(name, "Python Interpreter", check_in_python, write(name, data), check)
    for name, data in invalid.items():
        write(name, data)
        attempt(name, "unpack", check_unpacks, data)
    write("invalid/README.md", invalid_readme().encode())

    # Every valid and policy model must load and compile through the C API,
    # except that a model with an unresolved custom operator (no check) may be
    # rejected when it is compiled.
    lib = litert_load.load_library()
    results = litert_load.check_files(lib, [OUT_DIR / n for n in runnable], timeout=10)
    for name, result in zip(runnable, results):
        may_fail_compile = runnable[name][1] is None
        if result["outcome"] != "loaded" and not (
                may_fail_compile and result.get("stage") == "compile"):
            failures.append(f"{name}: LiteRT C API: {result}")

    for name, size in sizes.items():
        print(f"{size:5d}  {(OUT_DIR / name).relative_to(REPO_ROOT)}")
    if failures:
        print("\nFIXTURE CHECK FAILED:", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    print("valid fixtures load, allocate and invoke in the Python Interpreter and "
          "load + compile through the LiteRT C API; policy fixtures load (and run "
          "where LiteRT has the kernels); invalid fixtures unpack")
    return 0


if __name__ == "__main__":
    sys.exit(main())
