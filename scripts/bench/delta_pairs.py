"""Model updates as ML engineers make them, for scripts/bench/delta (run in a venv with tensorflow-cpu).

    python3 delta_pairs.py OUT [--large]

Writes OUT/<pair>/old.tflite and OUT/<pair>/new.tflite for (float32 and int8, seeded, so every
run makes the same files):
  - retrain-last-layer   the classifier head trained again on new data, the backbone frozen
  - finetune-top-blocks  the last blocks and the head moved by fine-tuning, the rest frozen
  - finetune-all         every weight moved a little
  - new-model            another model of the same architecture (another initialisation)
and OUT/plain/<float32|int8>.tflite, the model without metadata, for delta_metadata.py to make
the labels-only and metadata-added pairs. With --large, also two ResNet50s (94 and 102 MB in
float32, heads of 20 and 1000 classes) with their heads retrained: the patch creation time target.
The models are MobileNetV2 (alpha 1.0, 224x224, a head of 20 classes) with random weights: an update
changes bytes where training would, which is what a patch sees; accuracy plays no part.
"""
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

OUT = sys.argv[1]
LARGE = "--large" in sys.argv
SIZE = 224


def mobilenet(seed):
    tf.keras.utils.set_random_seed(seed)
    base = tf.keras.applications.MobileNetV2(input_shape=(SIZE, SIZE, 3), alpha=1.0, include_top=False, weights=None, pooling="avg")
    outputs = tf.keras.layers.Dense(20, activation="softmax", name="head")(base.output)
    return tf.keras.Model(base.input, outputs)


def moved(model, layers, scale, seed):
    """A copy of `model` whose weights in `layers` moved by `scale` times their spread (training's steps)."""
    rng = np.random.default_rng(seed)
    copy = tf.keras.models.clone_model(model)
    copy.set_weights(model.get_weights())
    for layer in layers:
        layer = copy.get_layer(layer.name)
        layer.set_weights([w + rng.normal(0, scale * (np.std(w) + 1e-8), w.shape).astype(w.dtype) for w in layer.get_weights()])
    return copy


def retrained_head(model, seed):
    rng = np.random.default_rng(seed)
    copy = tf.keras.models.clone_model(model)
    copy.set_weights(model.get_weights())
    head = copy.get_layer("head")
    kernel, bias = head.get_weights()
    head.set_weights([rng.normal(0, np.std(kernel), kernel.shape).astype(np.float32), rng.normal(0, 0.01, bias.shape).astype(np.float32)])
    return copy


def convert(model, int8, size):
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    if int8:
        rng = np.random.default_rng(7)
        samples = rng.random((16, size, size, 3), dtype=np.float32)

        def representative():
            for sample in samples:
                yield [sample[None]]

        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = representative
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = tf.uint8
        converter.inference_output_type = tf.uint8
    return converter.convert()


def write(pair, old, new):
    os.makedirs(os.path.join(OUT, pair), exist_ok=True)
    for name, data in (("old", old), ("new", new)):
        with open(os.path.join(OUT, pair, name + ".tflite"), "wb") as file:
            file.write(data)
    print(f"  {pair}: {len(old):,} -> {len(new):,} bytes", flush=True)


base = mobilenet(1)
conv_layers = [layer for layer in base.layers if layer.get_weights()]
top = [layer for layer in conv_layers if layer.name.startswith(("block_15", "block_16", "Conv_1", "head"))]
updates = {
    "retrain-last-layer": retrained_head(base, 2),
    "finetune-top-blocks": moved(base, top, 0.05, 3),
    "finetune-all": moved(base, conv_layers, 0.02, 4),
    "new-model": mobilenet(5),
}
os.makedirs(os.path.join(OUT, "plain"), exist_ok=True)
for precision in ("float32", "int8"):
    old = convert(base, precision == "int8", SIZE)
    with open(os.path.join(OUT, "plain", precision + ".tflite"), "wb") as file:
        file.write(old)
    for name, model in updates.items():
        write(f"{name}-{precision}", old, convert(model, precision == "int8", SIZE))

if LARGE:
    for classes in (20, 1000):
        tf.keras.utils.set_random_seed(11)
        resnet = tf.keras.applications.ResNet50(input_shape=(224, 224, 3), include_top=False, weights=None, pooling="avg")
        large = tf.keras.Model(resnet.input, tf.keras.layers.Dense(classes, activation="softmax", name="head")(resnet.output))
        write(f"large-{classes}-classes-retrain-last-layer-float32", convert(large, False, 224), convert(retrained_head(large, 12), False, 224))
