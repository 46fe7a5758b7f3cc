#!/usr/bin/python3
"""Multiply-accumulates of one run of an ONNX model, from its graph with shapes inferred for the given
inputs (benchmarks/model_bench.py turns them into the share of the FMA peak a runtime reaches).

Counted: Conv (N * Cout * output pixels * Cin/group * kernel), ConvTranspose (N * Cin * input pixels *
Cout/group * kernel), MatMul (batch * M * N * K: attention's Q.K^T and P.V are MatMuls between
activations), Gemm (M * N * K), LSTM / GRU / RNN (steps * directions * batch * gates * hidden *
(input + hidden)). Everything else (elementwise, normalisation, softmax, pooling) is left out: it is
memory-bound and has no FMA peak. Inside an If, the costlier branch counts; a Loop's or Scan's body
counts once. Dynamic dimensions are fixed to the input files' shapes before shape inference; the
shapes it still leaves unknown (a Reshape to a computed shape) are measured by running the model
through ONNX Runtime with those tensors as extra outputs (benchmarks/ort_eval.js --shapes), when --ort
names onnxruntime-node's folder. A node whose shapes stay unknown is reported, not guessed.

    /usr/bin/python3 benchmarks/models/flops.py MODEL.onnx INPUTS.json [--ort DIR]
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import helper


def concrete_model(model, spec):
    """A copy whose graph inputs have the input files' shapes, with shapes inferred (data propagated)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    shapes = {e['name']: e['shape'] for e in spec}
    for vi in m.graph.input:
        if vi.name in shapes:
            dims = vi.type.tensor_type.shape.dim
            for d, v in zip(dims, shapes[vi.name]):
                d.ClearField('dim_param')
                d.dim_value = int(v)
    return onnx.shape_inference.infer_shapes(m, data_prop=True)


def shape_table(graph, table=None):
    table = dict(table or {})
    for vi in list(graph.value_info) + list(graph.input) + list(graph.output):
        dims = vi.type.tensor_type.shape.dim
        if vi.type.tensor_type.HasField('shape') and all(d.HasField('dim_value') for d in dims):
            table[vi.name] = [d.dim_value for d in dims]
    for init in graph.initializer:
        table[init.name] = list(init.dims)
    return table


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def node_macs(node, shapes):
    """MACs of one node, 0 for ops not counted, None when a shape it needs is unknown."""
    op = node.op_type
    get = lambda i: shapes.get(node.input[i]) if i < len(node.input) and node.input[i] else None
    if op == 'Conv':
        w, y = get(1), shapes.get(node.output[0])
        if w is None or y is None:
            return None
        return int(y[0]) * int(np.prod(y[1:])) * int(np.prod(w[1:]))  # N * Cout * pixels * Cin/g * kernel
    if op == 'ConvTranspose':
        x, w = get(0), get(1)
        if x is None or w is None:
            return None
        return int(np.prod(x)) * int(np.prod(w[1:]))  # N * Cin * pixels * Cout/g * kernel
    if op == 'MatMul':
        a, b = get(0), get(1)
        if a is None or b is None:
            return None
        a2 = [1] + a if len(a) == 1 else a
        b2 = b + [1] if len(b) == 1 else b
        batch = np.broadcast_shapes(tuple(a2[:-2]), tuple(b2[:-2]))
        return int(np.prod(batch)) * a2[-2] * a2[-1] * b2[-1]
    if op == 'Gemm':
        a, b = get(0), get(1)
        if a is None or b is None:
            return None
        m = a[1] if attr(node, 'transA', 0) else a[0]
        k = a[0] if attr(node, 'transA', 0) else a[1]
        n = b[0] if attr(node, 'transB', 0) else b[1]
        return m * n * k
    if op in ('LSTM', 'GRU', 'RNN'):
        x, w, r = get(0), get(1), get(2)
        if x is None or w is None or r is None:
            return None
        steps, batch = (x[1], x[0]) if attr(node, 'layout', 0) else (x[0], x[1])
        dirs, gates_hidden, inp = w
        hidden = r[2]
        return steps * batch * dirs * gates_hidden * (inp + hidden)
    return 0


def graph_macs(graph, shapes):
    """(MACs, names of nodes whose shapes were unknown)."""
    shapes = shape_table(graph, shapes)
    total, unknown = 0, []
    for node in graph.node:
        if node.op_type == 'If':
            branches = [graph_macs(attr(node, b), shapes) for b in ('then_branch', 'else_branch')]
            best = max(branches, key=lambda r: r[0])
            total += best[0]
            unknown += best[1]
            continue
        if node.op_type in ('Loop', 'Scan'):
            body = graph_macs(attr(node, 'body'), shapes)
            total += body[0]
            unknown += body[1]
            continue
        n = node_macs(node, shapes)
        if n is None:
            unknown.append(node.name or node.output[0])
        else:
            total += n
    return total, unknown


def counted_inputs(graph, names):
    """The tensors whose shapes the counted nodes named `names` read (main graph only)."""
    wanted = set()
    for node in graph.node:
        if (node.name or node.output[0]) in names:
            wanted.update(t for t in list(node.input) + list(node.output) if t)
    return wanted


def measured_shapes(model, spec_path, tensors, ort_dir):
    """Shapes of `tensors`, measured by ONNX Runtime with them added as graph outputs."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {i.name for i in m.graph.initializer}
    present = {o.name for o in m.graph.output} | {i.name for i in m.graph.input}
    for t in sorted(tensors - inits - present):
        m.graph.output.append(helper.make_empty_tensor_value_info(t))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory() as tmp:
        path, out = os.path.join(tmp, 'model.onnx'), os.path.join(tmp, 'shapes.json')
        onnx.save(m, path)
        subprocess.run(['node', os.path.join(root, 'benchmarks', 'ort_eval.js'), '--ort', ort_dir, '--model', path,
                        '--inputs', spec_path, '--optimization', 'disabled', '--shapes', out], check=True)
        return json.load(open(out))


def model_macs(model_path, spec_path, ort_dir=None):
    """(MACs of one run, names of nodes left uncounted because their shapes are unknown)."""
    spec = json.load(open(spec_path))
    original = onnx.load(model_path)
    model = concrete_model(original, spec)
    macs, unknown = graph_macs(model.graph, {})
    if unknown and ort_dir:
        shapes = measured_shapes(original, spec_path, counted_inputs(model.graph, set(unknown)), ort_dir)
        macs, unknown = graph_macs(model.graph, {k: list(v) for k, v in shapes.items()})
    return macs, unknown


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('inputs')
    ap.add_argument('--ort', default='')
    a = ap.parse_args()
    macs, unknown = model_macs(a.model, a.inputs, a.ort or None)
    print(json.dumps({'macs': macs, 'gflops': 2 * macs / 1e9, 'unknown': unknown}))
