#!/usr/bin/python3
"""Python's cost per InferenceSession.run against the C API's, on a tiny model (Add of two float[1, 8]
tensors, CPU plugin, 1 thread): the median microseconds per run of each, and the difference, which is
what the Python layer adds (argument checks, numpy to C API tensors without copies, the GIL released
and taken back, outputs wrapped as numpy arrays).

    PYTHONPATH=build/python/package /usr/bin/python3 benchmarks/python_run_overhead.py \
        --c-bench build/benchmarks/ephost_run_call_bench

Both run in this process's machine state one after the other; the C side is a separate process
(benchmarks/run_call_bench.cpp) timing the same loop through the C++ wrapper.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper

import ephost


def tiny_model(path):
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["z"])], "tiny",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 8]) for n in ("x", "y")],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def python_us_per_run(path, runs, rounds):
    options = ephost.SessionOptions()
    options.intra_op_num_threads = 1
    session = ephost.InferenceSession(path, options, providers=["cpu"])
    feed = {"x": np.full((1, 8), 0.5, np.float32), "y": np.full((1, 8), 0.5, np.float32)}
    for _ in range(runs):  # warm up
        session.run(None, feed)
    per_run = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(runs):
            session.run(None, feed)
        per_run.append((time.perf_counter() - start) / runs * 1e6)
    return statistics.median(per_run)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--c-bench", required=True, help="the ephost_run_call_bench program")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    os.environ.setdefault("EPHOST_PLUGIN_PATH", "")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "tiny.onnx")
        tiny_model(path)
        c_api = float(subprocess.run([args.c_bench, path, str(args.runs), str(args.rounds)], check=True,
                                     capture_output=True, text=True).stdout)
        python = python_us_per_run(path, args.runs, args.rounds)
    print(f"tiny model (Add, float[1,8]), median of {args.rounds} rounds x {args.runs} runs, 1 thread:")
    print(f"  C API (C++ wrapper): {c_api:8.2f} us/run")
    print(f"  Python ephost      : {python:8.2f} us/run")
    print(f"  Python overhead    : {python - c_api:8.2f} us/run ({python / c_api:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
