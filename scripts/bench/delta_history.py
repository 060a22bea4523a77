"""Real model updates for scripts/bench/delta: every pair of consecutive versions of each .tflite
file in a git repository's history (for google/mediapipe, its models under mediapipe/modules, as
each release shipped them), written as
OUT/history-<file>-<old blob>-<new blob>/{old,new}.tflite.

    python3 delta_history.py REPOSITORY OUT [--pathspec '*.tflite'] [--released DIR]

With --released, each file's last version in the history is also paired with the file of the same
name in DIR, unless that is a version in the history of a file of that name (for MediaPipe, the
models of a released wheel: its 2021 face_detection_full_range_sparse against the one the wheels
ship). A version whose bytes the clone does not hold (a shallow or partial clone) is left out.
"""
import argparse
import os
import subprocess

arguments = argparse.ArgumentParser()
arguments.add_argument("repository")
arguments.add_argument("out")
arguments.add_argument("--pathspec", default="*.tflite")
arguments.add_argument("--released")
options = arguments.parse_args()
repository, out, pathspec = options.repository, options.out, options.pathspec


def contents(name):
    return subprocess.run(["git", "-C", repository, "cat-file", "blob", name], check=True, capture_output=True).stdout


def lines(*arguments):
    """git's output lines; a clone missing some objects (shallow or partial) gives what git read."""
    listed = subprocess.run(["git", "-C", repository, *arguments], capture_output=True, text=True)
    return listed.stdout.splitlines()


def present(blob):
    return subprocess.run(["git", "-C", repository, "cat-file", "-e", blob], capture_output=True).returncode == 0


# Each file's versions, oldest first: the blob it has in each commit that touched it.
versions = {}
for path in sorted(set(lines("log", "--all", "--format=", "--name-only", "--", pathspec))):
    for commit in lines("log", "--all", "--reverse", "--topo-order", "--format=%H", "--", path):
        entry = lines("ls-tree", commit, "--", path)
        blob = entry[0].split()[2] if entry else None
        if blob and (not versions.get(path) or versions[path][-1] != blob):
            versions.setdefault(path, []).append(blob)

def write(name, old, new):
    """A pair's directory under OUT, with its old and new bytes."""
    directory = os.path.join(out, name)
    os.makedirs(directory, exist_ok=True)
    for file_name, data in (("old", old), ("new", new)):
        with open(os.path.join(directory, file_name + ".tflite"), "wb") as file:
            file.write(data)


pairs = 0
for path, blobs in sorted(versions.items()):
    stem = os.path.splitext(os.path.basename(path))[0]
    for old, new in zip(blobs, blobs[1:]):
        if present(old) and present(new):
            write(f"history-{stem}-{old[:7]}-{new[:7]}", contents(old), contents(new))
            pairs += 1
    released = os.path.join(options.released or "", os.path.basename(path))
    if options.released and os.path.exists(released) and present(blobs[-1]):
        # A released file that is a version in the history (of any file of its name) is no update.
        shipped = subprocess.run(["git", "hash-object", released], check=True, capture_output=True, text=True).stdout.strip()
        if all(shipped not in other for name, other in versions.items() if os.path.basename(name) == os.path.basename(path)):
            write(f"history-{stem}-{blobs[-1][:7]}-released", contents(blobs[-1]), open(released, "rb").read())
            pairs += 1
print(f"{pairs} pairs from the history of {repository}")
