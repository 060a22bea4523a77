"""The Task Library's side of scripts/bench/camera (run with the Python of .build/tflite-support):
tflite-support 0.4.4's ObjectDetector and ImageClassifier on the benchmark's RGB frames, as an
app without tracking runs them: each frame detected (five results at most, score 0.35 and up),
then each detection's box, cut to the frame, classified.

    camera_task_library.py DIR THREADS     prints one JSON line: milliseconds per frame (median,
                                           p99), objects per frame (median) and the first frame's
                                           objects
The Python API takes RGB arrays only, so the frames come as RGB (frames.rgb) and the NV12
conversion is not part of this side's time; ours includes it.
"""
import json
import sys
import time
from pathlib import Path

import numpy as np
from tflite_support.task import core, processor, vision

WIDTH, HEIGHT = 640, 480


def inside(box):
    """The box cut to the frame, as an app must before classifying it (the Task Library refuses
    a box that is not inside the image)."""
    left, top = max(0, box.origin_x), max(0, box.origin_y)
    right, bottom = min(WIDTH, box.origin_x + box.width), min(HEIGHT, box.origin_y + box.height)
    return processor.BoundingBox(origin_x=left, origin_y=top, width=max(1, right - left), height=max(1, bottom - top))


def main(directory, threads):
    folder = Path(directory)
    base = lambda name: core.BaseOptions(file_name=str(folder / name), num_threads=threads)
    detector = vision.ObjectDetector.create_from_options(vision.ObjectDetectorOptions(
        base_options=base("detector_300.tflite"), detection_options=processor.DetectionOptions(max_results=5, score_threshold=0.35)))
    classifier = vision.ImageClassifier.create_from_options(vision.ImageClassifierOptions(
        base_options=base("classifier_224.tflite"), classification_options=processor.ClassificationOptions(max_results=10)))
    frames = np.memmap(folder / "frames.rgb", dtype=np.uint8, mode="r").reshape(-1, HEIGHT, WIDTH, 3)
    times, counts, first = [], [], None
    for frame in frames:
        start = time.perf_counter()
        image = vision.TensorImage.create_from_array(np.ascontiguousarray(frame))
        objects = []
        for detection in detector.detect(image).detections:
            box = inside(detection.bounding_box)
            labels = classifier.classify(image, bounding_box=box).classifications[0].categories
            objects.append((box, labels))
        times.append((time.perf_counter() - start) * 1000)
        counts.append(len(objects))
        if first is None:
            first = [{"x": box.origin_x, "y": box.origin_y, "width": box.width, "height": box.height, "label": labels[0].category_name if labels else ""}
                     for box, labels in objects]
    times.sort()
    print(json.dumps({"median": times[len(times) // 2], "p99": times[min(len(times) - 1, int(len(times) * 0.99))],
                      "objects": sorted(counts)[len(counts) // 2], "frames": len(times), "first": first}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
