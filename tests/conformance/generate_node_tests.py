#!/usr/bin/python3
"""Generates the ONNX backend node test cases (model.onnx + test_data_set_*/input_N.pb, output_N.pb)
from the installed python3-onnx into a cache folder, and prints the folder holding the cases.

    /usr/bin/python3 tests/conformance/generate_node_tests.py [--cache-dir DIR] [--force]

The cases go to DIR/onnx-node-tests-<onnx version>/node/ (DIR defaults to
${EPHOST_TEST_CACHE:-$HOME/.cache/ephost}). Idempotent: a stamp file, written last, marks a complete
generation; when it is there (and the case count it records matches) nothing is generated. Only the
node folder's path goes to stdout; the case count and progress go to stderr.

Run it with Debian's /usr/bin/python3, whose python3-onnx (1.12) and python3-numpy the suite is
generated from. numpy 1.24 removed the aliases np.float, np.int, np.bool and np.object that onnx
1.12's generators still use; they are restored before the generators are imported.
"""
import argparse
import fcntl
import os
import shutil
import sys
import tempfile
import warnings

STAMP = ".complete"


def log(message):
    print(f"generate_node_tests: {message}", file=sys.stderr, flush=True)


def restore_numpy_aliases():
    import numpy as np

    with warnings.catch_warnings():
        # numpy 1.24 warns on the hasattr probe itself ("In the future np.bool will be defined ...").
        warnings.simplefilter("ignore", FutureWarning)
        for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object)):
            if not hasattr(np, alias):
                setattr(np, alias, builtin)


def count_cases(node_dir):
    return sum(1 for entry in os.scandir(node_dir) if os.path.isfile(os.path.join(entry.path, "model.onnx")))


def read_stamp(suite_dir):
    """The case count a complete generation recorded, or None."""
    try:
        with open(os.path.join(suite_dir, STAMP)) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def is_complete(suite_dir):
    recorded = read_stamp(suite_dir)
    node_dir = os.path.join(suite_dir, "node")
    return recorded is not None and os.path.isdir(node_dir) and count_cases(node_dir) == recorded


def generate(suite_dir):
    """Generates into a scratch folder next to suite_dir, then moves it into place, so that an
    interrupted run never leaves a half-written suite behind a stamp."""
    restore_numpy_aliases()
    import numpy as np
    import onnx
    from onnx.backend.test import cmd_tools

    parent = os.path.dirname(suite_dir)
    scratch = tempfile.mkdtemp(prefix=".generating-", dir=parent)
    try:
        # The generators draw their inputs from np.random: a fixed seed makes the data (and so any
        # failure) the same on every machine.
        np.random.seed(0)
        # onnx's own command line: `python3 -m onnx.backend.test.cmd_tools generate-data -o DIR`.
        saved_argv = sys.argv
        sys.argv = ["cmd_tools", "generate-data", "-o", scratch]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cmd_tools.main()
        finally:
            sys.argv = saved_argv
        node_dir = os.path.join(scratch, "node")
        count = count_cases(node_dir)
        if count == 0:
            raise RuntimeError(f"onnx generated no node cases into {node_dir}")
        if os.path.exists(suite_dir):
            shutil.rmtree(suite_dir)
        os.rename(scratch, suite_dir)
        with open(os.path.join(suite_dir, STAMP), "w") as f:
            f.write(f"{count} node cases, onnx {onnx.__version__}, numpy {np.__version__}\n")
    finally:
        if os.path.exists(scratch):
            shutil.rmtree(scratch, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_cache = os.environ.get("EPHOST_TEST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ephost")
    parser.add_argument("--cache-dir", default=default_cache, help=f"cache folder (default {default_cache})")
    parser.add_argument("--force", action="store_true", help="regenerate even when a complete suite is there")
    args = parser.parse_args()

    try:
        import onnx
    except ImportError as e:
        log(f"cannot import onnx ({e}); install python3-onnx and run this with /usr/bin/python3")
        return 1

    suite_dir = os.path.join(os.path.abspath(args.cache_dir), f"onnx-node-tests-{onnx.__version__}")
    os.makedirs(args.cache_dir, exist_ok=True)
    # Several test runs may start at once: one generates, the others wait for it and reuse the result.
    with open(suite_dir + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if args.force or not is_complete(suite_dir):
            log(f"generating the ONNX {onnx.__version__} node test cases into {suite_dir}")
            generate(suite_dir)
    node_dir = os.path.join(suite_dir, "node")
    log(f"{count_cases(node_dir)} node cases in {node_dir}")
    print(node_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
