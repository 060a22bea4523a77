"""Real model updates for scripts/bench/delta: every pair of consecutive versions of each .tflite
file in a git repository's history (for google/mediapipe, its models under mediapipe/modules, as
each release shipped them), written as
OUT/history-<file>-<old blob>-<new blob>/{old,new}.tflite.

    python3 delta_history.py REPOSITORY OUT [PATHSPEC]    (PATHSPEC: default '*.tflite')

A version whose bytes the clone does not hold (a shallow or partial clone) is left out.
"""
import os
import subprocess
import sys

repository, out = sys.argv[1], sys.argv[2]
pathspec = sys.argv[3] if len(sys.argv) > 3 else "*.tflite"


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

pairs = 0
for path, blobs in sorted(versions.items()):
    for old, new in zip(blobs, blobs[1:]):
        if not (present(old) and present(new)):
            continue
        directory = os.path.join(out, f"history-{os.path.splitext(os.path.basename(path))[0]}-{old[:7]}-{new[:7]}")
        os.makedirs(directory, exist_ok=True)
        for name, version in (("old", old), ("new", new)):
            with open(os.path.join(directory, name + ".tflite"), "wb") as file:
                file.write(contents(version))
        pairs += 1
print(f"{pairs} pairs from the history of {repository}")
