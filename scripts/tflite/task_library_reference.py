#!/usr/bin/env python3
"""What the TFLite Task Library (tflite-support 0.4.4) answers, as JSON, for ModelDepot's tests.

    task_library_reference.py classify MODEL IMAGE MAX_RESULTS [THRESHOLD]
        -> [{"index", "label", "score"}, ...]          (ImageClassifier, best first)
    task_library_reference.py classify-region MODEL IMAGE MAX_RESULTS X Y WIDTH HEIGHT
        -> the same for the box (ImageClassifier.classify(image, bounding_box))
    task_library_reference.py detect MODEL IMAGE [THRESHOLD]
        -> [{"x", "y", "width", "height", "classIndex", "label", "score"}, ...]   (ObjectDetector)
    task_library_reference.py pixels MODEL IMAGE
        -> [r, g, b, r, ...]   the pixels the Task Library fed the pixel_echo fixture, which
           outputs its input as scores: the image after the Task Library's own resize.

Run it with the Python of .build/tflite-support (scripts/bootstrap). IMAGE is a PNG the Task
Library decodes itself.
"""
import json
import sys

from tflite_support.task import core, processor, vision


def classify(model, image, max_results, threshold=None):
    options = processor.ClassificationOptions(max_results=int(max_results))
    if threshold is not None:
        options.score_threshold = float(threshold)
    classifier = vision.ImageClassifier.create_from_options(vision.ImageClassifierOptions(
        base_options=core.BaseOptions(file_name=model), classification_options=options))
    result = classifier.classify(vision.TensorImage.create_from_file(image))
    return [{"index": c.index, "label": c.category_name, "score": c.score} for c in result.classifications[0].categories]


def classify_region(model, image, max_results, x, y, width, height):
    classifier = vision.ImageClassifier.create_from_options(vision.ImageClassifierOptions(
        base_options=core.BaseOptions(file_name=model), classification_options=processor.ClassificationOptions(max_results=int(max_results))))
    box = processor.BoundingBox(origin_x=int(x), origin_y=int(y), width=int(width), height=int(height))
    result = classifier.classify(vision.TensorImage.create_from_file(image), box)
    return [{"index": c.index, "label": c.category_name, "score": c.score} for c in result.classifications[0].categories]


def detect(model, image, threshold=None):
    options = processor.DetectionOptions()
    if threshold is not None:
        options.score_threshold = float(threshold)
    detector = vision.ObjectDetector.create_from_options(vision.ObjectDetectorOptions(
        base_options=core.BaseOptions(file_name=model), detection_options=options))
    result = detector.detect(vision.TensorImage.create_from_file(image))
    return [{"x": d.bounding_box.origin_x, "y": d.bounding_box.origin_y, "width": d.bounding_box.width,
             "height": d.bounding_box.height, "classIndex": d.categories[0].index,
             "label": d.categories[0].category_name, "score": d.categories[0].score} for d in result.detections]


def pixels(model, image):
    # pixel_echo's metadata normalizes with mean -1 and std 1: score = pixel + 1 (never 0, so no
    # threshold drops one), and label "p<i>" is the pixel's position.
    scores = classify(model, image, 16 * 16 * 3)
    values = [0] * len(scores)
    for category in scores:
        values[int(category["label"][1:])] = int(round(category["score"] - 1))
    return values


def main(arguments):
    commands = {"classify": classify, "classify-region": classify_region, "detect": detect, "pixels": pixels}
    if not arguments or arguments[0] not in commands:
        sys.exit(__doc__)
    print(json.dumps(commands[arguments[0]](*arguments[1:])))


if __name__ == "__main__":
    main(sys.argv[1:])
