#!/usr/bin/python3
"""Times the CPU plugin's fused Attention-23 and RMSNormalization-23 kernels against the same
computation written as the primitive operators their ONNX function definitions expand to, at the
sizes of a small transformer (12 heads of 64, 128 tokens; one decoding step over a 512-token cache;
hidden size 768), with `ephost bench`, and prints the latencies and their ratios.

    /usr/bin/python3 benchmarks/transformer_ops_latency.py --ephost BUILD/tools/cli/ephost [--repeat N]

Not part of CTest (timings need a quiet machine); run by hand.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "conformance"))
from generate_node_tests import restore_numpy_aliases  # noqa: E402

restore_numpy_aliases()
import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=(), opset=23):
    graph = helper.make_graph(nodes, "bench", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, F, None) for n in outputs], list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 11
    return m


def attention_pair(heads, q_seq, kv_seq, past, head, causal):
    """The fused node, and Q K^T * scale (+ causal mask) -> Softmax -> x V as primitives."""
    q, k, v = [("q", [1, heads, q_seq, head]), ("k", [1, heads, kv_seq, head]), ("v", [1, heads, kv_seq, head])]
    inputs = [q, k, v]
    names = ["q", "k", "v"]
    if past:
        inputs += [("past_k", [1, heads, past, head]), ("past_v", [1, heads, past, head])]
        names += ["", "past_k", "past_v"]
    fused = model([helper.make_node("Attention", names, ["y"], is_causal=int(causal))], inputs, ["y"])
    total = past + kv_seq
    nodes, inits = [], [numpy_helper.from_array(np.array(1 / np.sqrt(head), np.float32), "scale")]
    keys, values = "k", "v"
    if past:
        nodes += [helper.make_node("Concat", ["past_k", "k"], ["keys"], axis=2),
                  helper.make_node("Concat", ["past_v", "v"], ["values"], axis=2)]
        keys, values = "keys", "values"
    nodes += [helper.make_node("Transpose", [keys], ["kt"], perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["q", "kt"], ["qk"]),
              helper.make_node("Mul", ["qk", "scale"], ["scores"])]
    scores = "scores"
    if causal:
        i = np.arange(q_seq).reshape(-1, 1)
        j = np.arange(total).reshape(1, -1)
        mask = np.where(j <= i + past, 0, -np.inf).astype(np.float32)
        inits.append(numpy_helper.from_array(mask, "mask"))
        nodes.append(helper.make_node("Add", ["scores", "mask"], ["masked"]))
        scores = "masked"
    nodes += [helper.make_node("Softmax", [scores], ["p"], axis=-1), helper.make_node("MatMul", ["p", values], ["y"])]
    return fused, model(nodes, inputs, ["y"], inits)


def rms_pair(tokens, hidden):
    x = ("x", [1, tokens, hidden])
    scale = numpy_helper.from_array(np.random.default_rng(0).uniform(0.5, 1.5, hidden).astype(np.float32), "w")
    fused = model([helper.make_node("RMSNormalization", ["x", "w"], ["y"])], [x], ["y"], [scale])
    inits = [scale, numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             numpy_helper.from_array(np.array([-1], np.int64), "axes")]
    nodes = [helper.make_node("Mul", ["x", "x"], ["sq"]),
             helper.make_node("ReduceMean", ["sq", "axes"], ["ms"], keepdims=1),
             helper.make_node("Add", ["ms", "eps"], ["mse"]), helper.make_node("Sqrt", ["mse"], ["rms"]),
             helper.make_node("Div", ["x", "rms"], ["n"]), helper.make_node("Mul", ["n", "w"], ["y"])]
    return fused, model(nodes, [x], ["y"], inits)


def bench(ephost, m, repeat, folder, name):
    path = os.path.join(folder, name + ".onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    out = subprocess.run([ephost, "bench", path, "--repeat", str(repeat), "--warmup", "5", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return float(json.loads(out)["run_ms_median"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ephost", required=True)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    pairs = [("Attention-23 prefill 12x128x64 causal", *attention_pair(12, 128, 128, 0, 64, True)),
             ("Attention-23 decode 12x1 over 512 past", *attention_pair(12, 1, 1, 512, 64, False)),
             ("RMSNormalization-23 128x768", *rms_pair(128, 768))]
    with tempfile.TemporaryDirectory() as folder:
        print(f"{'case':42} {'fused ms':>10} {'expanded ms':>12} {'ratio':>7}")
        for i, (name, fused, expanded) in enumerate(pairs):
            a = bench(args.ephost, fused, args.repeat, folder, f"fused{i}")
            b = bench(args.ephost, expanded, args.repeat, folder, f"expanded{i}")
            print(f"{name:42} {a:10.3f} {b:12.3f} {b / a:6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
