#!/usr/bin/python3
"""A static QDQ quantizer for the benchmark models (what ONNX Runtime's quantize_static(QuantFormat.QDQ)
makes, written with onnx and numpy only, so that the benchmark needs no onnxruntime Python package).

    /usr/bin/python3 benchmarks/models/qdq_quantize.py MODEL.onnx OUT.onnx --scheme u8s7|s8s8
        --calib A/inputs.json [--calib B/inputs.json ...] [--ort DIR] [--ops Conv,MatMul,...]

Schemes:
  u8s7  uint8 activations, asymmetric (zero point from the range); int8 weights, symmetric, per
        channel, 7-bit range [-64, 64] (ONNX Runtime's reduce_range, which it advises for AVX2 and
        AVX-512 without VNNI: u8*s8 pairs summed by vpmaddubsw cannot saturate int16)
  s8s8  int8 activations, symmetric [-127, 127], zero point 0; int8 weights, symmetric, per channel,
        full range [-127, 127]
Weights are per channel along the output channel: axis 0 of Conv's weight, axis 1 of ConvTranspose's
(group 1), the last axis of MatMul's B, axis 0 of Gemm's B with transB=1 (1 without). Conv, ConvTranspose
and Gemm biases become int32 with scale input_scale * weight_scale (zero point 0), as ONNX Runtime does.

Calibration: min/max over the given input sets (ONNX Runtime's CalibrationMethod.MinMax), measured
by running the float model with every calibrated tensor added as a graph output, through ONNX Runtime
from npm (benchmarks/ort_eval.js, graph optimisation disabled).

Which nodes are quantized (the ops of ONNX Runtime's QDQ quantizer that the benchmark families use):
  Conv, ConvTranspose, MatMul, Gemm   activation inputs (both inputs of an activation x activation
                                      MatMul) and output; weights per channel; bias int32
  Add, Mul, Sigmoid, Concat,          every float input (a constant input as a per-tensor activation
  GlobalAveragePool                   constant) and the output, each with its own range
  Reshape, Transpose, Squeeze,        pass-through: when the input is quantized, the output is
  Unsqueeze, MaxPool, AveragePool,    quantized with the input's scale and zero point
  Slice
  Relu, Clip(min 0)                   u8s7: removed, the producer's output taking the Relu's name and
                                      range (exact: quantizing with zero point 0 clamps at 0, as ONNX
                                      Runtime's QDQRemovableActivation does); s8s8: output quantized
A quantized tensor T gets QuantizeLinear -> DequantizeLinear once, and every consumer reads the
dequantized value. Softmax, Gather, HardSwish, LayerNorm's parts and the rest stay float.
One exception, so that a model stays meaningful: an Add or Mul whose non-constant input's range is
under 1/256 of the other input's (and not 0) stays float (a BERT attention mask adds -10000 to scores of order 1:
one quantization step of the sum would be 40, and the scores would be lost).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCHEMES = {
    # activation type, activation symmetric, weight (qmin, qmax)
    'u8s7': {'act': TensorProto.UINT8, 'act_symmetric': False, 'w_range': (-64, 64)},
    's8s8': {'act': TensorProto.INT8, 'act_symmetric': True, 'w_range': (-127, 127)},
}
COMPUTE_OPS = {'Conv', 'ConvTranspose', 'MatMul', 'Gemm'}
GENERAL_OPS = {'Add', 'Mul', 'Sigmoid', 'Concat', 'GlobalAveragePool'}
PASS_THROUGH_OPS = {'Reshape', 'Transpose', 'Squeeze', 'Unsqueeze', 'MaxPool', 'AveragePool', 'Slice'}
REMOVABLE_OPS = {'Relu', 'Clip'}
DEFAULT_OPS = COMPUTE_OPS | GENERAL_OPS | PASS_THROUGH_OPS | REMOVABLE_OPS
RANGE_RATIO_LIMIT = 256.0


def log(msg):
    print(f'qdq_quantize: {msg}', file=sys.stderr, flush=True)


# ---- quantization parameters ------------------------------------------------------------------------------

def activation_params(lo, hi, scheme):
    """(scale, zero point) of an activation range, as ONNX Runtime's compute_scale_zp computes them."""
    if scheme['act_symmetric']:
        a = max(abs(lo), abs(hi))
        scale = np.float32(a / 127.0) if a > 0 else np.float32(1.0)
        return scale, 0
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi - lo <= 0:
        return np.float32(1.0), 0
    scale = np.float32((hi - lo) / 255.0)
    zp = int(np.clip(np.rint(-lo / np.float64(scale)), 0, 255))
    return scale, zp


def quantize_values(x, scale, zp, qmin, qmax, dtype):
    return np.clip(np.rint(x / scale) + zp, qmin, qmax).astype(dtype)


def activation_qrange(scheme):
    if scheme['act'] == TensorProto.UINT8:
        return 0, 255, np.uint8
    return -128, 127, np.int8


def per_channel_weight(w, axis, scheme):
    """Symmetric per-channel int8 weights: (quantized, scales)."""
    qmin, qmax = scheme['w_range']
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    amax = np.abs(moved).max(axis=1) if moved.size else np.zeros(w.shape[axis])
    scales = np.where(amax > 0, amax / qmax, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = w.shape[axis]
    q = np.clip(np.rint(w / scales.reshape(shape)), qmin, qmax).astype(np.int8)
    return q, scales


# ---- graph reading ----------------------------------------------------------------------------------------

def constants_to_initializers(graph):
    """Constant nodes of the main graph become initializers, and consumers of an Identity of an
    initializer read the initializer (torch exports share equal weights that way, e.g. LayerNorm
    biases), so that weights and constants look alike."""
    keep, alias = [], {}
    inits = {i.name for i in graph.initializer}
    outputs = {o.name for o in graph.output}
    for node in graph.node:
        if node.op_type == 'Constant' and len(node.attribute) == 1 and node.attribute[0].name == 'value':
            t = onnx.TensorProto()
            t.CopyFrom(node.attribute[0].t)
            t.name = node.output[0]
            graph.initializer.append(t)
            inits.add(t.name)
        elif node.op_type == 'Identity' and node.input[0] in inits and node.output[0] not in outputs:
            alias[node.output[0]] = node.input[0]
        else:
            keep.append(node)
    for node in keep:
        for k, i in enumerate(node.input):
            if i in alias:
                node.input[k] = alias[i]
    del graph.node[:]
    graph.node.extend(keep)
    # Subgraphs may read an Identity's output from the outer scope: keep those Identities.
    used_inside = subgraph_references(graph)
    for out, src in alias.items():
        if out in used_inside:
            graph.node.insert(0, helper.make_node('Identity', [src], [out]))


def float_tensors(model):
    """Names of the main graph's float tensors (from shape inference, inputs, outputs, initializers)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    names = set()
    g = inferred.graph
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            names.add(vi.name)
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT:
            names.add(init.name)
    return names


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def clip_min_is_zero(node, inits):
    if node.op_type == 'Relu':
        return True
    lo = attr(node, 'min')
    if lo is None and len(node.input) > 1 and node.input[1]:
        if node.input[1] not in inits:
            return False
        lo = float(numpy_helper.to_array(inits[node.input[1]]))
    return lo == 0.0


class Plan:
    """What to quantize: activation tensors with their ranges' sources, weights, biases, removals."""

    def __init__(self, model, ops, scheme, floats):
        self.model, self.graph = model, model.graph
        self.scheme = scheme
        self.ops = ops
        self.inits = {i.name: i for i in self.graph.initializer}
        self.floats = floats
        self.producer = {o: n for n in self.graph.node for o in n.output}
        self.consumers = collections.defaultdict(list)
        for n in self.graph.node:
            for i in n.input:
                self.consumers[i].append(n)
        self.graph_outputs = {o.name for o in self.graph.output}
        self.graph_inputs = {i.name for i in self.graph.input if i.name not in self.inits}
        self.quantized_nodes = []   # nodes whose inputs/outputs are quantized
        self.activations = set()    # tensors that get their own calibrated Q/DQ
        self.aliases = {}           # pass-through output -> the tensor whose parameters it shares
        self.constants = set()      # float initializers quantized as activation-type constants
        self.weights = {}           # initializer -> per-channel axis
        self.biases = {}            # node name -> (bias initializer, activation, weight)
        self.removed = []           # (Relu/Clip node, its input tensor) merged into the producer

    def is_activation(self, name):
        return name and name in self.floats and name not in self.inits

    def wants(self, op):
        return op in self.ops

    def choose(self, ranges):
        """Decides every node; ranges (tensor -> (min, max)) are needed for the Add/Mul exception."""
        for n in self.graph.node:
            if not self.wants(n.op_type):
                continue
            if n.op_type in COMPUTE_OPS:
                self.choose_compute(n)
            elif n.op_type in GENERAL_OPS:
                self.choose_general(n, ranges)
        # Pass-through and removable activations, in graph order: they follow what is quantized.
        for n in self.graph.node:
            if n.op_type in PASS_THROUGH_OPS and self.wants(n.op_type):
                src = n.input[0]
                if self.is_quantized(src) and self.is_activation(n.output[0]):
                    self.quantized_nodes.append(n)
                    self.aliases[n.output[0]] = src
            elif n.op_type in REMOVABLE_OPS and self.wants(n.op_type) and clip_min_is_zero(n, self.inits):
                self.choose_removable(n)

    def is_quantized(self, name):
        return name in self.activations or name in self.aliases

    def choose_compute(self, n):
        op = n.op_type
        if op == 'Conv':
            axis = 0
        elif op == 'ConvTranspose':
            axis = 1 if attr(n, 'group', 1) == 1 else None
        elif op == 'Gemm':
            if attr(n, 'transA', 0) != 0:
                return
            axis = 0 if attr(n, 'transB', 0) else 1
        else:
            axis = None  # MatMul: the last axis of B, decided on its shape
        a, b = n.input[0], n.input[1]
        if not self.is_activation(a):
            return
        if b in self.inits:
            w = self.inits[b]
            if w.data_type != TensorProto.FLOAT:
                return
            if op == 'MatMul':
                if len(w.dims) < 2:
                    return
                axis = len(w.dims) - 1
            if axis is None:
                axis = -1  # per tensor
            self.weights[b] = axis
        elif self.is_activation(b):
            self.activations.add(b)
        else:
            return
        self.activations.add(a)
        if self.is_activation(n.output[0]):
            self.activations.add(n.output[0])
        if len(n.input) > 2 and n.input[2] in self.inits and b in self.inits and self.weights[b] >= 0:
            ok = op != 'Gemm' or (attr(n, 'beta', 1.0) == 1.0 and len(self.inits[n.input[2]].dims) == 1)
            if ok:
                self.biases[n.name or n.output[0]] = (n.input[2], a, b)
        self.quantized_nodes.append(n)

    def choose_general(self, n, ranges):
        ins = [i for i in n.input if i and i in self.floats]
        if not ins or not self.is_activation(n.output[0]):
            return
        if n.op_type in ('Add', 'Mul') and len(ins) == 2 and not self.ranges_compatible(ins, ranges):
            return
        for i in ins:
            (self.constants if i in self.inits else self.activations).add(i)
        self.activations.add(n.output[0])
        self.quantized_nodes.append(n)

    def ranges_compatible(self, ins, ranges):
        amax = []
        for i in ins:
            lo, hi = constant_range(self.inits[i]) if i in self.inits else ranges.get(i, (0.0, 0.0))
            amax.append(max(abs(lo), abs(hi)))
        for k, i in enumerate(ins):
            other = amax[1 - k]
            if i not in self.inits and amax[k] > 0 and amax[k] * RANGE_RATIO_LIMIT < other:
                return False
        return True

    def choose_removable(self, n):
        src = n.input[0]
        if not self.is_quantized(src) or not self.is_activation(n.output[0]):
            return
        prod = self.producer.get(src)
        merge = (not self.scheme['act_symmetric'] and prod is not None
                 and any(prod is q for q in self.quantized_nodes)
                 and prod.op_type not in PASS_THROUGH_OPS and len(self.consumers[src]) == 1
                 and src not in self.graph_outputs and src in self.activations)
        if merge:
            self.removed.append((n, src))
            self.activations.discard(src)
        self.activations.add(n.output[0])
        if not merge:
            self.quantized_nodes.append(n)


def constant_range(init):
    v = numpy_helper.to_array(init)
    return (float(v.min()), float(v.max())) if v.size else (0.0, 0.0)


# ---- calibration ------------------------------------------------------------------------------------------

def calibrate(model, tensors, calib_specs, ort_dir):
    """min/max of every tensor over the input sets: graph inputs from their files, the rest by running
    the float model with the tensors as extra outputs through ONNX Runtime (ort_eval.js)."""
    ranges = {}
    for spec in calib_specs:
        for e in json.load(open(spec)):
            if e['dtype'] != 'float32':
                continue
            v = np.fromfile(os.path.join(os.path.dirname(spec), e['file']), dtype=np.float32)
            lo, hi = float(v.min()), float(v.max())
            r = ranges.get(e['name'])
            ranges[e['name']] = (min(r[0], lo), max(r[1], hi)) if r else (lo, hi)
    wanted = [t for t in tensors if t not in ranges]
    if not wanted:
        return ranges
    aug = onnx.ModelProto()
    aug.CopyFrom(model)
    present = {o.name for o in aug.graph.output}
    for t in wanted:
        if t not in present:
            aug.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'augmented.onnx')
        onnx.save(aug, path)
        out = os.path.join(tmp, 'ranges.json')
        cmd = ['node', os.path.join(ROOT, 'benchmarks', 'ort_eval.js'), '--ort', ort_dir, '--model', path,
               '--optimization', 'disabled', '--ranges', out]
        for spec in calib_specs:
            cmd += ['--inputs', spec]
        subprocess.run(cmd, check=True)
        measured = json.load(open(out))
    for t in wanted:
        if t not in measured:
            raise RuntimeError(f'calibration returned no range for {t}')
        ranges[t] = tuple(measured[t])
    return ranges


# ---- rewriting --------------------------------------------------------------------------------------------

class Rewriter:
    def __init__(self, plan, ranges):
        self.plan, self.g, self.scheme = plan, plan.graph, plan.scheme
        self.ranges = ranges
        self.params = {}           # tensor -> (scale initializer name, zero-point initializer name)
        self.scale_values = {}     # tensor -> its scale
        self.new_inits = []
        self.new_nodes = collections.defaultdict(list)  # tensor -> Q/DQ nodes placed after its producer
        self.input_nodes = []      # Q/DQ nodes of graph inputs (placed first)
        self.renamed_inputs = {}   # graph input -> its dequantized name
        self.counter = 0

    def fresh(self, base):
        self.counter += 1
        return f'{base}__qdq{self.counter}'

    def add_init(self, name, array):
        self.new_inits.append(numpy_helper.from_array(array, name))
        return name

    def activation_zp_array(self, zp):
        return np.array(zp, dtype=np.uint8 if self.scheme['act'] == TensorProto.UINT8 else np.int8)

    def params_of(self, tensor):
        """Scale and zero-point initializers of an activation tensor (shared along pass-through chains)."""
        if tensor in self.params:
            return self.params[tensor]
        if tensor in self.plan.aliases:
            p = self.params_of(self.plan.aliases[tensor])
            scale = self.scale_values[self.plan.aliases[tensor]]
        else:
            lo, hi = self.ranges[tensor]
            scale, zp = activation_params(lo, hi, self.scheme)
            p = (self.add_init(self.fresh(tensor + '_scale'), np.array(scale, dtype=np.float32)),
                 self.add_init(self.fresh(tensor + '_zero_point'), self.activation_zp_array(zp)))
        self.params[tensor] = p
        self.scale_values[tensor] = scale
        return p

    def quantize_activation(self, tensor):
        scale, zp = self.params_of(tensor)
        q = self.fresh(tensor + '_quantized')
        if tensor in self.plan.graph_inputs:
            dq = self.fresh(tensor + '_dequantized')
            self.input_nodes += [helper.make_node('QuantizeLinear', [tensor, scale, zp], [q], name=self.fresh('Q')),
                                 helper.make_node('DequantizeLinear', [q, scale, zp], [dq], name=self.fresh('DQ'))]
            self.renamed_inputs[tensor] = dq
            return
        # The producer writes T_float; Q and DQ restore T, so every consumer reads the dequantized value.
        flt = self.fresh(tensor + '_float')
        producer = self.plan.producer[tensor]
        for k, o in enumerate(producer.output):
            if o == tensor:
                producer.output[k] = flt
        self.plan.producer[flt] = producer
        self.new_nodes[flt] += [helper.make_node('QuantizeLinear', [flt, scale, zp], [q], name=self.fresh('Q')),
                                helper.make_node('DequantizeLinear', [q, scale, zp], [tensor], name=self.fresh('DQ'))]

    def quantize_constant(self, name):
        """A float initializer read as an activation: per-tensor, in the activation type."""
        v = numpy_helper.to_array(self.plan.inits[name]).astype(np.float32)
        lo, hi = constant_range(self.plan.inits[name])
        scale, zp = activation_params(lo, hi, self.scheme)
        qmin, qmax, dt = activation_qrange(self.scheme)
        if self.scheme['act_symmetric']:
            qmin = -127
        qv = self.add_init(self.fresh(name + '_quantized'), quantize_values(v, scale, zp, qmin, qmax, dt))
        s = self.add_init(self.fresh(name + '_scale'), np.array(scale, dtype=np.float32))
        z = self.add_init(self.fresh(name + '_zero_point'), self.activation_zp_array(zp))
        out = self.fresh(name + '_dequantized')
        self.input_nodes.append(helper.make_node('DequantizeLinear', [qv, s, z], [out], name=self.fresh('DQ')))
        return out

    def quantize_weight(self, name, axis):
        w = numpy_helper.to_array(self.plan.inits[name]).astype(np.float32)
        if axis < 0:
            qmin, qmax = self.scheme['w_range']
            a = float(np.abs(w).max()) if w.size else 0.0
            scales = np.array(a / qmax if a > 0 else 1.0, dtype=np.float32)
            q = np.clip(np.rint(w / scales), qmin, qmax).astype(np.int8)
            zp = np.array(0, dtype=np.int8)
            attrs = {}
        else:
            q, scales = per_channel_weight(w, axis, self.scheme)
            zp = np.zeros(scales.shape, dtype=np.int8)
            attrs = {'axis': axis}
        qv = self.add_init(self.fresh(name + '_quantized'), q)
        s = self.add_init(self.fresh(name + '_scale'), scales)
        z = self.add_init(self.fresh(name + '_zero_point'), zp)
        out = self.fresh(name + '_dequantized')
        self.input_nodes.append(helper.make_node('DequantizeLinear', [qv, s, z], [out], name=self.fresh('DQ'), **attrs))
        return out, scales

    def quantize_bias(self, name, act_tensor, w_scales):
        """int32 bias with scale input_scale * weight_scale (per channel), zero point 0."""
        b = numpy_helper.to_array(self.plan.inits[name]).astype(np.float64)
        self.params_of(act_tensor)
        act_scale = self.scale_values[act_tensor]
        bs = (np.float64(act_scale) * w_scales.astype(np.float64)).astype(np.float32)
        bs = np.where(bs > 0, bs, np.float32(1.0)).astype(np.float32)
        if bs.shape != b.shape:
            bs = np.broadcast_to(bs, b.shape).astype(np.float32)
        q = np.clip(np.rint(b / bs.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
        qv = self.add_init(self.fresh(name + '_quantized'), q)
        s = self.add_init(self.fresh(name + '_scale'), bs)
        z = self.add_init(self.fresh(name + '_zero_point'), np.zeros(bs.shape, dtype=np.int32))
        out = self.fresh(name + '_dequantized')
        self.input_nodes.append(helper.make_node('DequantizeLinear', [qv, s, z], [out], name=self.fresh('DQ'), axis=0))
        return out

    def run(self):
        plan = self.plan
        # Removed Relu/Clip: the producer writes the activation's output name directly.
        removed_ids = set()
        for n, src in plan.removed:
            prod = plan.producer[src]
            for k, o in enumerate(prod.output):
                if o == src:
                    prod.output[k] = n.output[0]
            plan.producer[n.output[0]] = prod
            removed_ids.add(id(n))
        quantized_ids = {id(n) for n in plan.quantized_nodes} | {id(plan.producer[n.output[0]]) for n, _ in plan.removed}
        # Weights, biases and constants, per consuming node (a shared initializer is quantized once per role).
        done_weights, done_constants = {}, {}
        for n in self.g.node:
            if id(n) not in quantized_ids or id(n) in removed_ids:
                continue
            key = n.name or n.output[0]
            for k, i in enumerate(n.input):
                if i in plan.weights and k == 1 and n.op_type in COMPUTE_OPS:
                    if i not in done_weights:
                        done_weights[i] = self.quantize_weight(i, plan.weights[i])
                    n.input[k] = done_weights[i][0]
                elif i in plan.constants and n.op_type in GENERAL_OPS:
                    if i not in done_constants:
                        done_constants[i] = self.quantize_constant(i)
                    n.input[k] = done_constants[i]
            if key in plan.biases:
                bias, act, w = plan.biases[key]
                if w in done_weights:
                    n.input[2] = self.quantize_bias(bias, act, done_weights[w][1])
        for t in sorted(plan.activations | set(plan.aliases)):
            self.quantize_activation(t)
        # Graph inputs: consumers read the dequantized copy.
        for n in self.g.node:
            for k, i in enumerate(n.input):
                if i in self.renamed_inputs:
                    n.input[k] = self.renamed_inputs[i]
        nodes = list(self.input_nodes)
        for n in self.g.node:
            if id(n) in removed_ids:
                continue
            nodes.append(n)
            for o in n.output:
                nodes += self.new_nodes.get(o, [])
        del self.g.node[:]
        self.g.node.extend(nodes)
        used = {i for n in self.g.node for i in n.input}
        used |= subgraph_references(self.g)
        keep = [i for i in self.g.initializer if i.name in used]
        del self.g.initializer[:]
        self.g.initializer.extend(keep + [i for i in self.new_inits if i.name in used])


def subgraph_references(graph):
    names = set()
    for n in graph.node:
        for a in n.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                for sn in sub.node:
                    names.update(sn.input)
                names |= subgraph_references(sub)
    return names


def quantize(model_path, out_path, scheme_name, calib_specs, ort_dir, ops=DEFAULT_OPS):
    scheme = SCHEMES[scheme_name]
    model = onnx.load(model_path)
    if any(o.domain in ('', 'ai.onnx') and o.version < 13 for o in model.opset_import):
        raise RuntimeError(f'{model_path}: per-channel DequantizeLinear needs opset 13 or later: convert the model '
                           'first (onnx.version_converter.convert_version(model, 13))')
    constants_to_initializers(model.graph)
    for vi in list(model.graph.value_info):  # stale after renaming; shape inference redoes them
        model.graph.value_info.remove(vi)
    floats = float_tensors(model)
    probe = Plan(model, ops, scheme, floats)
    # Ranges first (the Add/Mul exception needs them): every float activation a quantized node touches.
    candidates = set()
    for n in model.graph.node:
        if n.op_type in ops:
            candidates.update(i for i in n.input if probe.is_activation(i))
            candidates.update(o for o in n.output if probe.is_activation(o))
    ranges = calibrate(model, sorted(candidates - probe.graph_inputs), calib_specs, ort_dir)
    plan = Plan(model, ops, scheme, floats)
    plan.choose(ranges)
    missing = [t for t in plan.activations if t not in ranges]
    if missing:
        raise RuntimeError(f'no calibrated range for {missing[:5]}')
    Rewriter(plan, ranges).run()
    onnx.checker.check_model(model)
    onnx.save(model, out_path)
    counts = collections.Counter(n.op_type for n in plan.quantized_nodes)
    log(f'{os.path.basename(out_path)}: {len(plan.quantized_nodes)} nodes quantized '
        f'({", ".join(f"{k} {v}" for k, v in sorted(counts.items()))}), {len(plan.removed)} Relu/Clip merged, '
        f'{len(plan.activations) + len(plan.aliases)} activations with Q/DQ')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('out')
    ap.add_argument('--scheme', choices=sorted(SCHEMES), required=True)
    ap.add_argument('--calib', action='append', required=True, help='an inputs.json to calibrate on (repeatable)')
    ap.add_argument('--ort', default=os.path.expanduser('~/.cache/ephost/ort'))
    ap.add_argument('--ops', default=','.join(sorted(DEFAULT_OPS)))
    a = ap.parse_args()
    ops = {o for o in a.ops.split(',') if o}
    unknown = ops - DEFAULT_OPS
    if unknown:
        sys.exit(f'qdq_quantize: cannot quantize {sorted(unknown)} (known: {", ".join(sorted(DEFAULT_OPS))})')
    quantize(a.model, a.out, a.scheme, a.calib, a.ort, ops)


if __name__ == '__main__':
    main()
