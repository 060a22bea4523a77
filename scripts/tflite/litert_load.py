#!/usr/bin/env python3
"""Differential crash check: load .tflite files with the real LiteRT C API.

Usage: litert_load.py DIR_OR_FILE... [--timeout SECONDS] [--memory-limit MB]

For every file (directories are searched recursively for *.tflite) this
creates a LiteRT environment, loads the model from the file and compiles it
for the CPU accelerator (LiteRtCreateEnvironment -> LiteRtCreateModelFromFile
-> LiteRtCreateOptions/LiteRtSetOptionsHardwareAccelerators ->
LiteRtCreateCompiledModel), then destroys everything again.

The C loader is not hardened against damaged files: it can segfault, abort or
hang. So libLiteRt.so is loaded once in this (parent) process and every file is
loaded in a forked child with a timeout. Prints a JSON list on stdout:

  [{"file": PATH, "outcome": "loaded"}
   {"file": PATH, "outcome": "rejected", "stage": "model"|"compile"|..., "status": N}
   {"file": PATH, "outcome": "crashed", "signal": "SIGSEGV"}   # or "exitCode": N
   {"file": PATH, "outcome": "hang"}]

and a throughput line on stderr. Exit status: 0 if no file crashed or hung,
1 otherwise, 2 on usage / setup errors.

Also importable: make_fixtures.py uses load_library() and check_files().
"""

import argparse
import ctypes
import importlib.util
import json
import os
import resource
import select
import signal
import sys
import time
from pathlib import Path

# Hardware accelerator bit for LiteRtSetOptionsHardwareAccelerators.
CPU_ACCELERATOR = 1
# Exit code of a child whose Python code (not LiteRT) raised.
_CHILD_PYTHON_ERROR = 70
# Address-space cap for each child, in MiB (loading a small model needs ~30).
DEFAULT_MEMORY_LIMIT_MB = 1024


def library_path():
    """Path of libLiteRt.so shipped next to the installed ai_edge_litert."""
    spec = importlib.util.find_spec("ai_edge_litert")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("python package ai_edge_litert is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "libLiteRt.so"
    if not path.is_file():
        raise RuntimeError(f"{path} does not exist")
    return path


def load_library(path=None):
    """dlopen libLiteRt.so and declare the few C functions used here."""
    lib = ctypes.CDLL(str(path or library_path()))
    vp, pvp, c_int = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int
    signatures = {
        "LiteRtCreateEnvironment": [c_int, vp, pvp],
        # 2.3.0 order: environment first, then the path.
        "LiteRtCreateModelFromFile": [vp, ctypes.c_char_p, pvp],
        "LiteRtCreateOptions": [pvp],
        "LiteRtSetOptionsHardwareAccelerators": [vp, c_int],
        "LiteRtCreateCompiledModel": [vp, vp, vp, pvp],
    }
    for name, argtypes in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, c_int
    for name in ("LiteRtDestroyCompiledModel", "LiteRtDestroyModel",
                 "LiteRtDestroyOptions", "LiteRtDestroyEnvironment"):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = [vp], None
    return lib


def _load_in_this_process(lib, path):
    """Runs steps 1-4 on `path`; returns a result dict. Runs in the child."""
    env, model, opts, compiled = (ctypes.c_void_p() for _ in range(4))
    try:
        st = lib.LiteRtCreateEnvironment(0, None, ctypes.byref(env))
        if st:
            return {"outcome": "rejected", "stage": "environment", "status": st}
        st = lib.LiteRtCreateModelFromFile(env, os.fsencode(path), ctypes.byref(model))
        if st:
            return {"outcome": "rejected", "stage": "model", "status": st}
        st = lib.LiteRtCreateOptions(ctypes.byref(opts))
        if st == 0:
            st = lib.LiteRtSetOptionsHardwareAccelerators(opts, CPU_ACCELERATOR)
        if st:
            return {"outcome": "rejected", "stage": "options", "status": st}
        st = lib.LiteRtCreateCompiledModel(env, model, opts, ctypes.byref(compiled))
        if st:
            return {"outcome": "rejected", "stage": "compile", "status": st}
        return {"outcome": "loaded"}
    finally:
        # Tear down too: a crash in a destructor is a crash worth reporting.
        if compiled:
            lib.LiteRtDestroyCompiledModel(compiled)
        if model:
            lib.LiteRtDestroyModel(model)
        if opts:
            lib.LiteRtDestroyOptions(opts)
        if env:
            lib.LiteRtDestroyEnvironment(env)


def check_file(lib, path, timeout=5.0, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB):
    """Loads one file in a forked child; returns {"file", "outcome", ...}."""
    path = str(path)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(rfd)
            # Silence the library's INFO/WARNING chatter (stderr and stdout).
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            os.dup2(devnull, 1)
            if memory_limit_mb:
                # A damaged header can ask for absurd tensor sizes; cap the
                # child's address space so it fails instead of eating the
                # machine. (A failed allocation usually ends in SIGABRT.)
                limit = memory_limit_mb << 20
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            result = _load_in_this_process(lib, path)
            os.write(wfd, json.dumps(result).encode())
            os.close(wfd)
        except BaseException:  # a bug in this script, not in LiteRT
            os._exit(_CHILD_PYTHON_ERROR)
        # Never return into the parent's code; skip atexit/destructors.
        os._exit(0)

    os.close(wfd)
    data, deadline, timed_out = b"", time.monotonic() + timeout, False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([rfd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(rfd, 65536)
            if not chunk:  # EOF: the child wrote its result or died
                break
            data += chunk
        if timed_out:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"file": path, "outcome": "hang"}
        # EOF comes just before the child's _exit (or from its death); reap it
        # under the same deadline.
        status = _wait_with_deadline(pid, deadline)
    finally:
        os.close(rfd)

    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return {"file": path, "outcome": "hang"}
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"SIG{sig}"
        return {"file": path, "outcome": "crashed", "signal": name}
    code = os.WEXITSTATUS(status)
    if code == _CHILD_PYTHON_ERROR and not data:
        raise RuntimeError(f"litert_load: child failed in Python code on {path}")
    if code != 0 or not data:
        # The library called exit() (or similar) instead of returning a status.
        return {"file": path, "outcome": "crashed", "exitCode": code}
    return {"file": path, **json.loads(data)}


def _wait_with_deadline(pid, deadline):
    """waitpid with a deadline; returns the wait status or None on timeout."""
    delay = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def expand(paths):
    """Files as given; directories -> their *.tflite files, recursively, sorted."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*.tflite") if f.is_file()))
        else:
            files.append(p)
    return files


def check_files(lib, files, timeout=5.0, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB):
    return [check_file(lib, f, timeout, memory_limit_mb) for f in files]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="DIR_OR_FILE")
    ap.add_argument("--timeout", type=float, default=5.0,
                    help="seconds before a child counts as hung (default 5)")
    ap.add_argument("--memory-limit", type=int, default=DEFAULT_MEMORY_LIMIT_MB,
                    metavar="MB", help="address-space limit per child "
                    f"(default {DEFAULT_MEMORY_LIMIT_MB}; 0 = none)")
    args = ap.parse_args(argv)

    files = expand(args.paths)
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        print(f"litert_load: no such file: {missing[0]}", file=sys.stderr)
        return 2
    try:
        lib = load_library()
    except (RuntimeError, OSError, AttributeError) as e:
        print(f"litert_load: cannot load libLiteRt.so: {e}", file=sys.stderr)
        return 2

    start = time.monotonic()
    results = check_files(lib, files, args.timeout, args.memory_limit)
    elapsed = time.monotonic() - start

    json.dump(results, sys.stdout, indent=1)
    sys.stdout.write("\n")
    counts = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    rate = len(files) / elapsed if elapsed > 0 else float("inf")
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"litert_load: {len(files)} files in {elapsed:.2f}s "
          f"({rate:.1f} files/s): {summary or 'nothing to do'}", file=sys.stderr)
    bad = counts.get("crashed", 0) + counts.get("hang", 0)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
