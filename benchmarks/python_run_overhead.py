#!/usr/bin/python3
"""Python's cost per InferenceSession.run and per run_with_iobinding against the C API's, on a tiny
model (Add of two float[1, 8] tensors, CPU plugin, 1 thread): the median microseconds per run of each,
and the difference, which is what the Python layer adds (argument checks, numpy to C API tensors
without copies, the GIL released and taken back, outputs wrapped as numpy arrays). A bound run
(inputs bound once as numpy arrays, the output bound to the host) skips the feed's conversion; its
output is read with copy_outputs_to_cpu() only after the loop.

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


def median_us(call, runs, rounds):
    for _ in range(runs):  # warm up
        call()
    per_run = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(runs):
            call()
        per_run.append((time.perf_counter() - start) / runs * 1e6)
    return statistics.median(per_run)


def python_us_per_run(path, runs, rounds):
    """(run, run_with_iobinding) median us per call."""
    options = ephost.SessionOptions()
    options.intra_op_num_threads = 1
    session = ephost.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feed = {"x": np.full((1, 8), 0.5, np.float32), "y": np.full((1, 8), 0.5, np.float32)}
    run = median_us(lambda: session.run(None, feed), runs, rounds)
    binding = session.io_binding()
    binding.bind_cpu_input("x", feed["x"])
    binding.bind_cpu_input("y", feed["y"])
    binding.bind_output("z")
    bound = median_us(lambda: session.run_with_iobinding(binding), runs, rounds)
    assert np.allclose(binding.copy_outputs_to_cpu()[0], 1.0)
    return run, bound


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
        python, bound = python_us_per_run(path, args.runs, args.rounds)
    print(f"tiny model (Add, float[1,8]), median of {args.rounds} rounds x {args.runs} runs, 1 thread:")
    print(f"  C API run (C++ wrapper)   : {c_api:8.2f} us/run")
    print(f"  Python run                : {python:8.2f} us/run")
    print(f"  Python run_with_iobinding : {bound:8.2f} us/run")
    print(f"  Python overhead, run      : {python - c_api:8.2f} us/run ({python / c_api:.2f}x)")
    print(f"  Python overhead, bound run: {bound - c_api:8.2f} us/run ({bound / c_api:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
