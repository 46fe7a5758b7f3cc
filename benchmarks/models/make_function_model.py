#!/usr/bin/python3
"""Writes a model with nested model-local functions, for session-creation timings (issue 24):
OUT/model.onnx, OUT/inputs.json and OUT/x.bin (the format ephost_model_runner reads).

    /usr/bin/python3 benchmarks/models/make_function_model.py OUT_DIR [--blocks N]

The main graph is N (default 48) calls of com.example Block(X) on x[1, 64, 256]; Block is a residual
LayerNorm-then-MLP written with two more functions (Norm, a decomposed layer normalisation, and Mlp,
which calls Gelu, written with Erf): four levels of functions, none of which any provider has a kernel
for, so session creation expands them all (with Debian's python3-onnx, nothing downloaded).
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DOMAIN = "com.example"
OPSETS = [helper.make_opsetid("", 13), helper.make_opsetid(DOMAIN, 1)]


def function(name, inputs, outputs, nodes):
    return helper.make_function(DOMAIN, name, inputs, outputs, nodes, OPSETS)


def functions():
    gelu = function("Gelu", ["X"], ["Y"], [
        helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(np.array(0.70710678, np.float32))),
        helper.make_node("Constant", [], ["h"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
        helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1.0, np.float32))),
        helper.make_node("Mul", ["X", "s"], ["xs"]),
        helper.make_node("Erf", ["xs"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["e1"]),
        helper.make_node("Mul", ["X", "h"], ["xh"]),
        helper.make_node("Mul", ["xh", "e1"], ["Y"]),
    ])
    norm = function("Norm", ["X"], ["Y"], [
        helper.make_node("ReduceMean", ["X"], ["m"], axes=[-1]),
        helper.make_node("Sub", ["X", "m"], ["d"]),
        helper.make_node("Mul", ["d", "d"], ["d2"]),
        helper.make_node("ReduceMean", ["d2"], ["v"], axes=[-1]),
        helper.make_node("Constant", [], ["eps"], value=numpy_helper.from_array(np.array(1e-5, np.float32))),
        helper.make_node("Add", ["v", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["sd"]),
        helper.make_node("Div", ["d", "sd"], ["Y"]),
    ])
    mlp = function("Mlp", ["X", "W1", "W2"], ["Y"], [
        helper.make_node("MatMul", ["X", "W1"], ["a"]),
        helper.make_node("Gelu", ["a"], ["g"], domain=DOMAIN),
        helper.make_node("MatMul", ["g", "W2"], ["Y"]),
    ])
    block = function("Block", ["X", "W1", "W2"], ["Y"], [
        helper.make_node("Norm", ["X"], ["n"], domain=DOMAIN),
        helper.make_node("Mlp", ["n", "W1", "W2"], ["m"], domain=DOMAIN),
        helper.make_node("Add", ["X", "m"], ["Y"]),
    ])
    return [gelu, norm, mlp, block]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--blocks", type=int, default=48)
    args = ap.parse_args()
    rng = np.random.default_rng(24)
    d, hidden = 256, 512
    nodes, inits = [], []
    x = "x"
    for i in range(args.blocks):
        w1 = (rng.standard_normal((d, hidden)) / np.sqrt(d)).astype(np.float32)
        w2 = (rng.standard_normal((hidden, d)) / np.sqrt(hidden)).astype(np.float32)
        inits += [numpy_helper.from_array(w1, f"w1_{i}"), numpy_helper.from_array(w2, f"w2_{i}")]
        y = "y" if i == args.blocks - 1 else f"h{i}"
        nodes.append(helper.make_node("Block", [x, f"w1_{i}", f"w2_{i}"], [y], name=f"block{i}", domain=DOMAIN))
        x = y
    graph = helper.make_graph(nodes, "nested_functions",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, d])], inits)
    model = helper.make_model(graph, opset_imports=OPSETS, functions=functions(), ir_version=8)
    onnx.checker.check_model(model)
    os.makedirs(args.out, exist_ok=True)
    onnx.save(model, os.path.join(args.out, "model.onnx"))
    rng.standard_normal((1, 64, d)).astype(np.float32).tofile(os.path.join(args.out, "x.bin"))
    with open(os.path.join(args.out, "inputs.json"), "w") as f:
        json.dump([{"name": "x", "dtype": "float32", "shape": [1, 64, d], "file": "x.bin"}], f)


if __name__ == "__main__":
    main()
