#!/usr/bin/python3
"""Latency of the CPU plugin against ONNX Runtime on the operators of today's LLMs, at LLM-like sizes
(32 heads of 128, hidden 4096): Attention-23 (causal prefill of 128 tokens; one decoding step over a
1024-token cache), RMSNormalization-23, RotaryEmbedding-23, and a MatMul whose weight is a
DequantizeLinear-21 of a block-quantized int4 matrix (4096 x 4096, block 32, zero points), as
exporters write LLM weights, for 1 and 128 rows. Each model runs in benchmarks/model_runner.cpp
(ephost_model_runner) and in benchmarks/ort_runner.js (onnxruntime-node, CPU EP, optimisation "all"),
on the same inputs, one thread each. ONNX Runtime runs the int4 product as MatMulNBits, by default
with the activations quantized to int8 (session.qdq_matmulnbits_accuracy_level 4, not float
arithmetic); its float path (level 0, ephost's arithmetic) is timed too. ephost's outputs are checked
against ONNX Runtime's evaluation of the graph as written (benchmarks/ort_eval.js, optimisation
disabled: DequantizeLinear then MatMul in float) before the timings count.

    /usr/bin/python3 benchmarks/llm_ops_vs_ort.py --runner BUILD/benchmarks/ephost_model_runner \
        [--ort ~/.cache/ephost/ort] [--threads 1] [--min-seconds 2]

Prints a table of wall and CPU medians and the ratios ORT / ephost (above 1: ephost is faster). On a
loaded machine the CPU-time ratio is the one to read. Not part of CTest (timings need a quiet machine).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "conformance"))
from generate_node_tests import restore_numpy_aliases  # noqa: E402

restore_numpy_aliases()
import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

sys.path.insert(0, HERE)
from model_bench import ensure_ort  # noqa: E402

F = TensorProto.FLOAT
INT4 = 22  # TensorProto.INT4 (onnx 1.16 on; Debian's onnx 1.12 lacks the name)


def model(nodes, inputs, initializers=(), opset=23):
    graph = helper.make_graph(nodes, "bench", [helper.make_tensor_value_info(n, t, a.shape) for n, t, a in inputs],
                              [helper.make_tensor_value_info("y", F, None)], list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 11
    return m, {n: a for n, _, a in inputs}


def rng():
    return np.random.default_rng(23)


def attention(heads, q_seq, past, head, causal):
    r = rng()
    arr = lambda *s: r.standard_normal(s).astype(np.float32)  # noqa: E731
    inputs = [("q", F, arr(1, heads, q_seq, head)), ("k", F, arr(1, heads, q_seq, head)),
              ("v", F, arr(1, heads, q_seq, head))]
    names = ["q", "k", "v"]
    if past:
        inputs += [("past_k", F, arr(1, heads, past, head)), ("past_v", F, arr(1, heads, past, head))]
        names += ["", "past_k", "past_v"]
    # ONNX Runtime wants the present key and value whenever the past is given.
    outputs = ["y", "present_k", "present_v"] if past else ["y"]
    return model([helper.make_node("Attention", names, outputs, is_causal=int(causal))], inputs)


def rms_norm(tokens, hidden):
    r = rng()
    w = numpy_helper.from_array(r.uniform(0.5, 1.5, hidden).astype(np.float32), "w")
    x = r.standard_normal((1, tokens, hidden)).astype(np.float32)
    return model([helper.make_node("RMSNormalization", ["x", "w"], ["y"])], [("x", F, x)], [w])


def rotary(heads, tokens, head, max_pos):
    r = rng()
    x = r.standard_normal((1, heads, tokens, head)).astype(np.float32)
    theta = np.arange(max_pos)[:, None] / (10000.0 ** (np.arange(head // 2)[None, :] * 2.0 / head))
    cos = numpy_helper.from_array(np.cos(theta).astype(np.float32), "cos")
    sin = numpy_helper.from_array(np.sin(theta).astype(np.float32), "sin")
    pos = np.arange(100, 100 + tokens, dtype=np.int64).reshape(1, tokens)
    return model([helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"])],
                 [("x", F, x), ("pos", TensorProto.INT64, pos)], [cos, sin])


def packed_int4(name, values):
    """An int4 initializer: two's-complement nibbles, the first element in the low nibble."""
    flat = (values.astype(np.int8).ravel() & 0xF).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, np.uint8(0))
    t = TensorProto()
    t.name = name
    t.data_type = INT4
    t.dims.extend(values.shape)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()
    return t


def int4_matmul(rows, k, n, block):
    r = rng()
    blocks = (k + block - 1) // block
    w = packed_int4("w_q", r.integers(-8, 8, (k, n)))
    zp = packed_int4("w_z", r.integers(-2, 3, (blocks, n)))
    scale = numpy_helper.from_array((r.uniform(0.5, 1.5, (blocks, n)) / 64).astype(np.float32), "w_s")
    x = r.standard_normal((rows, k)).astype(np.float32)
    nodes = [helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_z"], ["w"], axis=0, block_size=block),
             helper.make_node("MatMul", ["x", "w"], ["y"])]
    return model(nodes, [("x", F, x)], [w, zp, scale], opset=21)


def write_case(folder, name, m, feeds):
    path = os.path.join(folder, name)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    spec = []
    for i, (input_name, a) in enumerate(feeds.items()):
        a.tofile(os.path.join(path, f"in{i}.bin"))
        spec.append({"name": input_name, "dtype": {np.float32: "float32", np.int64: "int64"}[a.dtype.type],
                     "shape": list(a.shape), "file": f"in{i}.bin"})
    with open(os.path.join(path, "inputs.json"), "w") as f:
        json.dump(spec, f)
    return path


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runner", required=True, help="ephost_model_runner")
    parser.add_argument("--ort", default=os.path.expanduser("~/.cache/ephost/ort"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--min-seconds", type=float, default=2.0)
    args = parser.parse_args()
    ensure_ort(args.ort)
    cases = [("Attention-23 prefill 32x128x128 causal", attention(32, 128, 0, 128, True)),
             ("Attention-23 decode 32x1 over 1023 past", attention(32, 1, 1023, 128, False)),
             ("RMSNormalization-23 1x4096", rms_norm(1, 4096)),
             ("RMSNormalization-23 128x4096", rms_norm(128, 4096)),
             ("RotaryEmbedding-23 32x128x128", rotary(32, 128, 128, 4096)),
             ("int4 block-32 MatMul 1x4096 . 4096x4096", int4_matmul(1, 4096, 4096, 32)),
             ("int4 block-32 MatMul 128x4096 . 4096x4096", int4_matmul(128, 4096, 4096, 32))]
    timing = ["--threads", str(args.threads), "--warmup", "3", "--min-runs", "10", "--min-seconds", str(args.min_seconds)]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for i, (name, (m, feeds)) in enumerate(cases):
            path = write_case(folder, f"case{i}", m, feeds)
            model_path, inputs = os.path.join(path, "model.onnx"), os.path.join(path, "inputs.json")
            subprocess.run(["node", os.path.join(HERE, "ort_eval.js"), "--ort", args.ort, "--model", model_path,
                            "--inputs", inputs, "--optimization", "disabled", "--dump-outputs",
                            os.path.join(path, "ort.bin")], check=True)
            ours = run_json([args.runner, "--model", model_path, "--inputs", inputs,
                             "--dump-outputs", os.path.join(path, "ephost.bin")] + timing)
            ort = ["node", os.path.join(HERE, "ort_runner.js"), "--ort", args.ort, "--model", model_path,
                   "--inputs", inputs] + timing
            theirs = run_json(ort)
            if "int4" in name:
                theirs_float = run_json(ort + ["--config", "session.qdq_matmulnbits_accuracy_level=0"])
                rows.append((name + " (ORT float path)", ours, theirs_float, None))
            want = np.fromfile(os.path.join(path, "ort.bin"), np.float32)
            got = np.fromfile(os.path.join(path, "ephost.bin"), np.float32)
            if got.shape != want.shape:
                raise SystemExit(f"{name}: ephost gave {got.size} values, ONNX Runtime {want.size}")
            err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
            rows.insert(len(rows) - ("int4" in name), (name, ours, theirs, err))
            print(f"{name}: done (max |diff| / max |ort| = {err:.2e})", file=sys.stderr)
    print(f"threads {args.threads}; ONNX Runtime {rows[0][2].get('version', '?')}")
    print(f"| case | ephost ms | ORT ms | ephost CPU ms | ORT CPU ms | ORT/ephost (CPU) | max rel. diff |")
    print("|---|---|---|---|---|---|---|")
    for name, ours, theirs, err in rows:
        print(f"| {name} | {ours['median_ms']:.3f} | {theirs['median_ms']:.3f} | {ours['cpu_ms']:.3f} | "
              f"{theirs['cpu_ms']:.3f} | {theirs['cpu_ms'] / ours['cpu_ms']:.2f}x | "
              f"{'' if err is None else f'{err:.1e}'} |")
    bad = [name for name, _, _, err in rows if err is not None and not err < 1e-4]
    if bad:
        print("outputs differ from ONNX Runtime's: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
