"""ONNX Runtime as the oracle of the opset cases (generate_opset_tests.py).

Each case is generated with a numpy reference written from the ONNX specification. Where ONNX Runtime
(onnxruntime-node 1.30, fetched into the test cache by fetch_ort.sh) runs the case, its outputs become
the case's expected outputs. The two oracles are compared first, with `ephost test`'s default
tolerances: where ONNX Runtime disagrees with the spec-derived reference the case keeps the reference
and the disagreement is recorded, so that neither a slip in a reference nor an ONNX Runtime bug goes
unnoticed. Every case's oracle is written to ORACLE_FILE in the suite folder:

    <case>\t<ort|numpy>\t<why numpy, when numpy>
"""
import base64
import json
import os
import subprocess
import tempfile

import numpy as np

ORACLE_FILE = "oracle.tsv"
HERE = os.path.dirname(os.path.abspath(__file__))
# `ephost test`'s default tolerances (tools/cli/cmd_test.cpp).
RTOL, ATOL = 1e-3, 1e-7
# numpy dtype -> onnxruntime-node tensor type
ORT_TYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64", np.dtype(np.float16): "float16",
             np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16",
             np.dtype(np.uint16): "uint16", np.dtype(np.int32): "int32", np.dtype(np.uint32): "uint32",
             np.dtype(np.int64): "int64", np.dtype(np.uint64): "uint64", np.dtype(np.bool_): "bool"}
NUMPY_TYPES = {v: k for k, v in ORT_TYPES.items()}


def fetch(cache_dir, log):
    """The folder onnxruntime-node is installed in, or None (npm unreachable: logged)."""
    done = subprocess.run(["bash", os.path.join(HERE, "fetch_ort.sh"), cache_dir], stdout=subprocess.PIPE, text=True)
    if done.returncode == 0:
        return done.stdout.strip()
    if done.returncode == 3:
        log("onnxruntime-node cannot be fetched: every case keeps its numpy reference")
        return None
    raise SystemExit(f"fetch_ort.sh failed (exit status {done.returncode})")


def unsupported(arrays):
    """Why ONNX Runtime for Node cannot be handed or give back these values, or None."""
    for name, a in arrays:
        if not isinstance(a, np.ndarray):
            return f"{name} is a packed or narrow type the Node binding has no tensor for"
        if a.dtype not in ORT_TYPES:
            return f"{name} has element type {a.dtype}, which the oracle does not pass to Node"
    return None


def encode(name, a):
    return {"name": name, "type": ORT_TYPES[a.dtype], "dims": list(a.shape),
            "data": base64.b64encode(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()).decode()}


def decode(t):
    dtype = NUMPY_TYPES[t["type"]]
    return np.frombuffer(base64.b64decode(t["data"]), dtype=dtype.newbyteorder("<")).astype(dtype).reshape(t["dims"])


def disagreement(expected, got):
    """Why ONNX Runtime's outputs differ from the reference's (names, types, shapes, values), or None."""
    if [n for n, _ in expected] != [t["name"] for t in got]:
        return f"outputs {[t['name'] for t in got]} instead of {[n for n, _ in expected]}"
    for (name, e), t in zip(expected, got):
        g = decode(t)
        if g.dtype != e.dtype or g.shape != e.shape:
            return f"{name} is {g.dtype}{list(g.shape)}, the reference {e.dtype}{list(e.shape)}"
        if e.dtype.kind == "f":
            e64, g64 = e.astype(np.float64), g.astype(np.float64)
            same_nan = np.isnan(e64) == np.isnan(g64)
            close = np.isclose(g64, e64, rtol=RTOL, atol=ATOL, equal_nan=True)
            if not (same_nan.all() and close.all()):
                worst = np.nanmax(np.abs(np.where(close, 0, g64 - e64)))
                return f"{name} differs by up to {worst:.3g}"
        elif not np.array_equal(e, g):
            return f"{name} differs in {int((e != g).sum())} of {e.size} values"
    return None


def serve(cases, root, ort_dir, write_outputs, log):
    """Runs the cases (written under root) on ONNX Runtime, makes its outputs the expected ones where it
    runs them and agrees with the reference, and writes ORACLE_FILE. Returns {case: (oracle, why)}."""
    oracle = {}
    job = []
    for c in cases:
        why = None if ort_dir else "onnxruntime-node is not available"
        why = why or unsupported(c.inputs) or unsupported(c.outputs)
        if why:
            oracle[c.name] = ("numpy", why)
        else:
            job.append({"name": c.name, "model": os.path.join(root, c.name, "model.onnx"),
                        "inputs": [encode(n, a) for n, a in c.inputs]})
    if job:
        with tempfile.TemporaryDirectory(prefix=".oracle-", dir=root) as scratch:
            job_file, result_file = os.path.join(scratch, "job.json"), os.path.join(scratch, "result.json")
            with open(job_file, "w") as f:
                json.dump(job, f)
            # ONNX Runtime 1.30 treats opset 27 as unreleased and loads it only when told to.
            env = dict(os.environ, ALLOW_RELEASED_ONNX_OPSET_ONLY="0")
            done = subprocess.run(["node", os.path.join(HERE, "ort_oracle.js"), "--ort", ort_dir, job_file,
                                   result_file], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if done.returncode != 0:
                raise SystemExit(f"ort_oracle.js failed (exit status {done.returncode}): {done.stderr[-2000:]}")
            with open(result_file) as f:
                results = json.load(f)
        by_name = {c.name: c for c in cases}
        for entry in job:
            c, r = by_name[entry["name"]], results.get(entry["name"], {"error": "no result"})
            if "error" in r:
                oracle[c.name] = ("numpy", "ONNX Runtime: " + r["error"].replace("\t", " "))
                continue
            why = disagreement(c.outputs, r["outputs"])
            if why:
                oracle[c.name] = ("numpy", "ONNX Runtime disagrees with the reference: " + why)
                continue
            write_outputs(root, c, [(t["name"], decode(t)) for t in r["outputs"]])
            oracle[c.name] = ("ort", "")
    with open(os.path.join(root, ORACLE_FILE), "w") as f:
        for c in cases:
            kind, why = oracle[c.name]
            f.write(f"{c.name}\t{kind}\t{why}\n")
    served = sum(1 for kind, _ in oracle.values() if kind == "ort")
    log(f"ONNX Runtime is the oracle of {served} of {len(cases)} cases (the rest: numpy, reasons in {ORACLE_FILE})")
    return oracle
