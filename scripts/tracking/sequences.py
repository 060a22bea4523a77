"""Synthetic video sequences with ground truth, for the tracking score test
(TrackingScoreEndToEndTests) and scripts/bench/tracking. Run with the Python of
.build/tracking-reference (scripts/bootstrap: numpy<2, pandas<2.3, motmetrics 1.4.0 and
supervision 0.26.1).

    python3 sequences.py make DIR      writes DIR/<sequence>/{gt,detections,bytetrack}.jsonl
    python3 sequences.py score DIR     scores DIR/<sequence>/{bytetrack,ours}.jsonl with motmetrics

Each sequence is 640x480, 300 frames, seeded: objects of 30 to 90 pixels that move at a steady
velocity with a little wobble, bounce off the edges, cross one another, leave the frame and come
back. The detector sees each object with its box jittered by 2 pixels (its size by 3%), misses
it 5% of the time (and whenever another object hides most of it), scores it 0.6-0.95 (0.2-0.45
when half hidden) and adds false positives (a few percent of frames, scores 0.2-0.6). Families:
  apart-N     N objects on their own lanes, never overlapping (id switches must be 0)
  crossing-N  N objects whose paths cross
  reentry-N   N objects that leave the frame for 10 to 60 frames and come back
"""
import json
import os
import sys

import numpy as np

WIDTH, HEIGHT, FRAMES = 640, 480, 300


def iou(a, b):
    ax2, ay2, bx2, by2 = a[0] + a[2], a[1] + a[3], b[0] + b[2], b[1] + b[3]
    w, h = min(ax2, bx2) - max(a[0], b[0]), min(ay2, by2) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def covered(box, others):
    """The share of `box` that the boxes in front of it hide (at most 1)."""
    area = box[2] * box[3]
    hidden = 0.0
    for other in others:
        w = min(box[0] + box[2], other[0] + other[2]) - max(box[0], other[0])
        h = min(box[1] + box[3], other[1] + other[3]) - max(box[1], other[1])
        if w > 0 and h > 0:
            hidden += w * h
    return min(1.0, hidden / area)


def sequence(family, count, seed):
    rng = np.random.default_rng(seed)
    objects = []
    for index in range(count):
        size = rng.uniform(30, 90)
        if family == "apart":
            lane = HEIGHT / count
            y = lane * index + (lane - size) / 2
            objects.append(dict(x=rng.uniform(0, WIDTH - size), y=y, vx=rng.choice([-1, 1]) * rng.uniform(1, 4), vy=0.0, size=size,
                                away=set(), depth=index))
        else:
            objects.append(dict(x=rng.uniform(0, WIDTH - size), y=rng.uniform(0, HEIGHT - size), vx=rng.uniform(-4, 4), vy=rng.uniform(-3, 3),
                                size=size, away=set(), depth=index))
        if family == "reentry":
            start = int(rng.uniform(30, 200))
            objects[-1]["away"] = set(range(start, start + int(rng.uniform(10, 60))))
    gt, detections = [], []
    for frame in range(1, FRAMES + 1):
        boxes = {}
        for identity, o in enumerate(objects, start=1):
            o["x"] += o["vx"] + (rng.normal(0, 0.3) if family != "apart" else 0)
            o["y"] += o["vy"] + (rng.normal(0, 0.3) if family != "apart" else 0)
            if o["x"] < 0 or o["x"] + o["size"] > WIDTH:
                o["vx"] = -o["vx"]
                o["x"] = min(max(o["x"], 0), WIDTH - o["size"])
            if o["y"] < 0 or o["y"] + o["size"] > HEIGHT:
                o["vy"] = -o["vy"]
                o["y"] = min(max(o["y"], 0), HEIGHT - o["size"])
            if frame not in o["away"]:
                boxes[identity] = [o["x"], o["y"], o["size"], o["size"]]
        gt.append({"frame": frame, "objects": [[identity] + box for identity, box in boxes.items()]})
        seen = []
        for identity, box in boxes.items():
            depth = objects[identity - 1]["depth"]
            hidden = covered(box, [other for other_id, other in boxes.items() if objects[other_id - 1]["depth"] > depth])
            if hidden > 0.7 or rng.random() < 0.05:
                continue
            score = rng.uniform(0.2, 0.45) if hidden > 0.4 else rng.uniform(0.6, 0.95)
            jitter = [rng.normal(0, 2), rng.normal(0, 2), box[2] * rng.normal(0, 0.03), box[3] * rng.normal(0, 0.03)]
            seen.append([box[0] + jitter[0], box[1] + jitter[1], max(4, box[2] + jitter[2]), max(4, box[3] + jitter[3]), score])
        if rng.random() < 0.04:
            size = rng.uniform(20, 80)
            seen.append([rng.uniform(0, WIDTH - size), rng.uniform(0, HEIGHT - size), size, size, rng.uniform(0.2, 0.6)])
        detections.append({"frame": frame, "detections": [[float(v) for v in d] for d in seen]})
    return gt, detections


def bytetrack(detections):
    import supervision as sv

    tracker = sv.ByteTrack()
    frames = []
    for frame in detections:
        boxes = np.array([[d[0], d[1], d[0] + d[2], d[1] + d[3]] for d in frame["detections"]], dtype=float).reshape(-1, 4)
        scores = np.array([d[4] for d in frame["detections"]], dtype=float)
        tracked = tracker.update_with_detections(sv.Detections(xyxy=boxes, confidence=scores, class_id=np.zeros(len(scores), dtype=int)))
        frames.append({"frame": frame["frame"], "tracks": [[int(i), float(b[0]), float(b[1]), float(b[2] - b[0]), float(b[3] - b[1])]
                                                              for i, b in zip(tracked.tracker_id, tracked.xyxy)]})
    return frames


def write(path, lines):
    with open(path, "w") as file:
        for line in lines:
            file.write(json.dumps(line) + "\n")


def read(path):
    """The frames of a JSON lines file (a tracker's closing summary line left out)."""
    with open(path) as file:
        return [line for line in map(json.loads, file) if "frame" in line]


SEQUENCES = [(family, count, seed) for family, count in (("apart", 5), ("crossing", 5), ("crossing", 8), ("reentry", 5)) for seed in (1, 2, 3)]


def make(directory):
    for family, count, seed in SEQUENCES:
        name = f"{family}-{count}-seed{seed}"
        os.makedirs(os.path.join(directory, name), exist_ok=True)
        gt, detections = sequence(family, count, seed)
        write(os.path.join(directory, name, "gt.jsonl"), gt)
        write(os.path.join(directory, name, "detections.jsonl"), detections)
        write(os.path.join(directory, name, "bytetrack.jsonl"), bytetrack(detections))


def score(directory):
    import motmetrics as mm

    results = {}
    for name in sorted(entry for entry in os.listdir(directory) if os.path.isdir(os.path.join(directory, entry))):
        gt = read(os.path.join(directory, name, "gt.jsonl"))
        for tracker in ("bytetrack", "ours"):
            accumulator = mm.MOTAccumulator(auto_id=True)
            for truth, hypothesis in zip(gt, read(os.path.join(directory, name, tracker + ".jsonl"))):
                distances = mm.distances.iou_matrix([o[1:] for o in truth["objects"]], [t[1:] for t in hypothesis["tracks"]], max_iou=0.5)
                accumulator.update([o[0] for o in truth["objects"]], [t[0] for t in hypothesis["tracks"]], distances)
            summary = mm.metrics.create().compute(accumulator, metrics=["mota", "idf1", "num_switches"], name=tracker)
            results[(name, tracker)] = (float(summary["mota"].iloc[0]), float(summary["idf1"].iloc[0]), int(summary["num_switches"].iloc[0]))
    print(json.dumps({f"{name} {tracker}": value for (name, tracker), value in results.items()}))


if __name__ == "__main__":
    {"make": make, "score": score}[sys.argv[1]](sys.argv[2])
