#!/usr/bin/env python3
"""Writes a model and its fine-tuned version, for the tests of patches that line up weights.

Output, deterministic (same bytes on every run), in Tests/Fixtures/tflite/delta/:
  * base.tflite: input [1, 64] -> int8 weights [128, 64] (DEQUANTIZE) -> FULLY_CONNECTED
    -> RELU -> float32 weights [96, 128] -> FULLY_CONNECTED -> SOFTMAX.
  * finetuned.tflite: the same graph after a little more training, as a converter writes it
    again: every weight moved a little (int8 by at most one step, float32 by about 1 %), the
    buffers in another order (so every weight is elsewhere in the file), another description,
    and the second bias renamed (as a converter renames what it fuses).
  * constants.json: each file's tensors with constant data, as the TFLite schema's Python
    classes read them: subgraph, name, type, data offset and size, and the first operator
    input that reads it. The tests compare ModelDepot's own reading with it.
Both models are loaded, allocated and invoked in LiteRT's Python Interpreter and checked
against numpy. The script exits non-zero with a message if anything fails.
"""

import json
import sys
from pathlib import Path

import numpy as np
from ai_edge_litert import schema_py_generated as fb
from ai_edge_litert.interpreter import Interpreter

SCRIPT_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPT_DIR))
from make_fixtures import TT, ModelBuilder, Op, quant, run  # noqa: E402  (sibling script)

OUT_DIR = SCRIPT_DIR.parent.parent / "Tests" / "Fixtures" / "tflite" / "delta"
W1_SCALE = 0.01


def weights(seed):
    rng = np.random.default_rng(seed)
    w1 = rng.integers(-127, 128, size=(128, 64)).astype(np.int8)
    b1 = rng.normal(0, 0.1, 128).astype(np.float32)
    w2 = rng.normal(0, 0.1, (96, 128)).astype(np.float32)
    b2 = rng.normal(0, 0.1, 96).astype(np.float32)
    return w1, b1, w2, b2


def finetuned(base):
    w1, b1, w2, b2 = base
    rng = np.random.default_rng(7)
    step = rng.choice([-1, 0, 0, 0, 1], size=w1.shape)
    w1 = np.clip(w1.astype(np.int16) + step, -127, 127).astype(np.int8)
    move = lambda a: (a * (1 + rng.normal(0, 0.01, a.shape))).astype(np.float32)  # noqa: E731
    return w1, move(b1), move(w2), move(b2)


def build(params, description, bias_name, reverse):
    w1, b1, w2, b2 = params
    mb = ModelBuilder(description)
    g = mb.subgraph("main")
    constants = [
        ("dense_1/kernel_int8", TT.INT8, [128, 64], w1, quant([W1_SCALE], [0])),
        ("dense_1/bias", TT.FLOAT32, [128], b1, None),
        ("dense_2/kernel", TT.FLOAT32, [96, 128], w2, None),
        (bias_name, TT.FLOAT32, [96], b2, None),
    ]
    index = {}
    for name, ttype, shape, data, q in (reversed(constants) if reverse else constants):
        index[name] = g.tensor(name, ttype, shape, data, quantization=q)
    x = g.tensor("input", TT.FLOAT32, [1, 64])
    w1f = g.tensor("dense_1/kernel", TT.FLOAT32, [128, 64])
    h = g.tensor("dense_1/relu", TT.FLOAT32, [1, 128])
    logits = g.tensor("dense_2/logits", TT.FLOAT32, [1, 96])
    probs = g.tensor("probabilities", TT.FLOAT32, [1, 96])
    g.op(Op.DEQUANTIZE, [index["dense_1/kernel_int8"]], [w1f])
    fc = fb.FullyConnectedOptionsT()
    fc.fusedActivationFunction = fb.ActivationFunctionType.RELU
    g.op(Op.FULLY_CONNECTED, [x, w1f, index["dense_1/bias"]], [h], fb.BuiltinOptions.FullyConnectedOptions, fc)
    g.op(Op.FULLY_CONNECTED, [h, index["dense_2/kernel"], index[bias_name]], [logits],
         fb.BuiltinOptions.FullyConnectedOptions, fb.FullyConnectedOptionsT())
    softmax = fb.SoftmaxOptionsT()
    softmax.beta = 1.0
    g.op(Op.SOFTMAX, [logits], [probs], fb.BuiltinOptions.SoftmaxOptions, softmax)
    g.io([x], [probs])
    return mb.serialize()


def check(path, params):
    w1, b1, w2, b2 = params
    interp = Interpreter(model_path=str(path))
    interp.allocate_tensors()
    x = np.random.default_rng(3).normal(0, 1, (1, 64)).astype(np.float32)
    h = np.maximum(x @ (w1.astype(np.float32) * W1_SCALE).T + b1, 0)
    logits = h @ w2.T + b2
    want = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    got = run(interp, [x])[0]
    if not np.allclose(got, want, atol=1e-5):
        raise SystemExit(f"{path.name}: probabilities differ from numpy's by {np.abs(got - want).max()}")


def constants(data):
    model = fb.Model.GetRootAsModel(data, 0)
    out = []
    for s in range(model.SubgraphsLength()):
        graph = model.Subgraphs(s)
        uses = {}
        for o in range(graph.OperatorsLength()):
            op = graph.Operators(o)
            for slot in range(op.InputsLength()):
                uses.setdefault(op.Inputs(slot), [o, slot])
        for t in range(graph.TensorsLength()):
            tensor = graph.Tensors(t)
            buffer = model.Buffers(tensor.Buffer())
            if buffer.DataLength() == 0:
                continue
            start = buffer.DataAsNumpy().ctypes.data - np.frombuffer(data, np.uint8).ctypes.data
            out.append({"subgraph": s, "name": tensor.Name().decode(), "type": tensor.Type(), "offset": int(start),
                        "size": buffer.DataLength(), "firstUse": uses.get(t)})
    return out


def main():
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    base = weights(1)
    tuned = finetuned(base)
    files = {
        "base.tflite": (build(base, "ModelDepot delta fixture", "dense_2/bias", False), base),
        "finetuned.tflite": (build(tuned, "ModelDepot delta fixture, fine-tuned", "dense_2/bias_fused", True), tuned),
    }
    listing = {}
    for name, (data, params) in files.items():
        path = OUT_DIR / name
        path.write_bytes(data)
        check(path, params)
        listing[name] = constants(data)
        print(f"{len(data):6d}  {path}")
    (OUT_DIR / "constants.json").write_text(json.dumps(listing, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
