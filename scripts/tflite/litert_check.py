#!/usr/bin/env python3
"""Is real LiteRT available? Tests run this to decide whether to use it.

Exit 0 and print the ai_edge_litert version if the Python package imports
(with its Interpreter) and libLiteRt.so loads with the C functions that
litert_load.py uses; otherwise exit 1 with a one-line reason on stderr.
"""

import sys
from pathlib import Path


def main():
    try:
        import ai_edge_litert
        from ai_edge_litert.interpreter import Interpreter  # noqa: F401
    except Exception as e:  # noqa: BLE001 - any failure means "unavailable"
        print(f"ai_edge_litert does not import: {type(e).__name__}: {e}",
              file=sys.stderr)
        return 1
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import litert_load
        litert_load.load_library()
    except Exception as e:  # noqa: BLE001
        print(f"libLiteRt.so does not load: {type(e).__name__}: {e}",
              file=sys.stderr)
        return 1
    print(getattr(ai_edge_litert, "__version__", "unknown"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
