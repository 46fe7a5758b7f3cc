#!/usr/bin/env python3
"""Edge sweep: a systematic complement to fuzz_model. It writes one small model per (operator, attribute
or constant input, edge value) and replays them all through a fuzz_model build, reporting every input
that crashes it or trips a sanitizer.

- Attributes: every INT and INTS attribute of every ONNX operator (the newest schema up to opset 17),
  with float and with integer inputs of rank 1, 3 and 4 (and empty ones, with a dimension of 0), set
  to 0, negatives, 2^40, -2^62, empty and odd-length lists.
- Constant inputs: the operators whose shape inference or kernel reads an input's value (Reshape,
  Tile, Range, Slice, Resize, STFT, ...), each such input an initializer holding 0, -1, 2^40, the
  int64 extremes, NaN, infinities or 1e30.

It found, in seconds, what fuzz_model had not in a million executions: a DepthToSpace blocksize whose
square overflows in onnx's inference (SIGFPE), onnx's STFT inference reading a rank-1 signal's third
dimension (SEGV), ConvInteger sizing its im2col buffer before its output, Tile's output size overflow.

  /usr/bin/python3 tests/fuzz/edge_sweep.py FOLDER [FUZZ_MODEL_BINARY]

writes the models into FOLDER (about 15,100, 60 MB on disk in all) and, given a binary (build-fuzz/tests/fuzz/
fuzz_model, or the replay build of an ordinary build), runs them 60 at a time, then one by one where a
batch failed, and prints each failing model with the sanitizer's summary line. Exit status 1 when any
failed. Keep a failing model as a regression input in tests/fuzz/regressions/fuzz_model/ once fixed.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, defs, helper, numpy_helper

OPSET = 17
TYPES = {'tensor(float)': TensorProto.FLOAT, 'tensor(int64)': TensorProto.INT64, 'tensor(int32)': TensorProto.INT32,
         'tensor(uint8)': TensorProto.UINT8, 'tensor(int8)': TensorProto.INT8, 'tensor(bool)': TensorProto.BOOL,
         'tensor(double)': TensorProto.DOUBLE, 'tensor(string)': TensorProto.STRING}
INT_VALUES = [0, -1, -7, 7, 1 << 40, -(1 << 62)]
INTS_VALUES = [[], [0], [0, 0], [-1, -1], [0, 0, 0, 0], [-5, 9], [1 << 40, 1], [3] * 9]
I64_VALUES = [0, -1, 1 << 40, -(1 << 62), np.iinfo(np.int64).max, np.iinfo(np.int64).min, 3]
F32_VALUES = [0.0, -1.0, float('nan'), float('inf'), 1e30, 1e-30]


def save(folder, name, nodes, inputs, outputs, opset, initializers=()):
    g = helper.make_graph(nodes, 'sweep', inputs, outputs, initializer=list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)], ir_version=8)
    with open(os.path.join(folder, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


def untyped_outputs(n):
    return [helper.make_tensor_value_info('out%d' % i, TensorProto.UNDEFINED, None) for i in range(n)]


# Each operator is swept twice: with float inputs where it takes them, and with integer inputs where it
# takes them (integer kernels overflow where float ones do not).
PREFERENCES = {
    'float': ('tensor(float)', 'tensor(int64)', 'tensor(int32)', 'tensor(uint8)', 'tensor(bool)'),
    'integer': ('tensor(int64)', 'tensor(int8)', 'tensor(uint8)', 'tensor(double)', 'tensor(float)'),
}


def element_type(schema, formal, preference):
    allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}.get(formal.typeStr, [formal.typeStr])
    for preferred in PREFERENCES[preference]:
        if preferred in allowed:
            return TYPES[preferred]
    return next((TYPES[a] for a in allowed if a in TYPES), None)


def placeholder(attribute, rank):
    t = attribute.type
    A = onnx.AttributeProto
    return {A.INT: 1, A.INTS: [1] * max(1, rank - 2), A.FLOAT: 1.0, A.STRING: 'x', A.FLOATS: [1.0],
            A.STRINGS: ['x']}.get(t)


# Input shapes of the attribute sweep. The empty ones make a kernel's output empty while its working
# buffers may not be: ConvInteger with 0 output channels and pads of 2^40 sized a 33 TB im2col buffer
# for an output of no elements (found by fuzz_model). [65536, 0, 65536] is the largest empty input
# fuzz_model makes (65,536 per dimension).
SHAPES = ([1, 2, 4, 4], [3], [2, 3, 5], [0, 3, 5], [2, 0, 4, 4], [65536, 0, 65536])


def attribute_sweep(folder):
    count = 0
    for schema in defs.get_all_schemas_with_history():
        if schema.domain != '' or schema.since_version > OPSET or schema.deprecated:
            continue
        if defs.get_schema(schema.name, OPSET, '').since_version != schema.since_version:
            continue  # the newest version up to OPSET only
        swept = [a for a in schema.attributes.values() if a.type in (onnx.AttributeProto.INT, onnx.AttributeProto.INTS)]
        for preference, shape in [(p, s) for p in PREFERENCES for s in SHAPES]:
            inputs = []
            for i, formal in enumerate(schema.inputs):
                if formal.option == defs.OpSchema.FormalParameterOption.Optional and i >= 2:
                    break
                elem = element_type(schema, formal, preference)
                if elem is None:
                    inputs = None
                    break
                inputs.append(helper.make_tensor_value_info('in%d' % i, elem, shape))
            required = {a.name: placeholder(a, len(shape)) for a in schema.attributes.values() if a.required}
            if inputs is None or None in required.values():
                continue
            outputs = untyped_outputs(max(1, len(schema.outputs)))
            cases = [(None, None)] + [(a, v) for a in swept
                                      for v in (INT_VALUES if a.type == onnx.AttributeProto.INT else INTS_VALUES)]
            for attribute, value in cases:
                attrs = dict(required)
                if attribute is not None:
                    attrs[attribute.name] = value
                node = helper.make_node(schema.name, [i.name for i in inputs], [o.name for o in outputs], name='n', **attrs)
                tag = 'none' if attribute is None else '%s_%s' % (attribute.name, str(value).translate(str.maketrans(' ,-', '__m', '[]')))
                save(folder, 'attr_%s_%s_rank%d%s_%s' % (schema.name, preference, len(shape), ''.join('_%d' % d for d in shape) if 0 in shape else '', tag), [node], inputs, outputs,
                     OPSET)
                count += 1
    return count


X = ('x', TensorProto.FLOAT, [1, 2, 4, 4])
SIGNAL = ('x', TensorProto.FLOAT, [1, 8, 1])
# name: (operator, opset, inputs); an input whose type is 'i64' or 'f32' is a swept constant.
CONSTANT_INPUT_OPS = {
    'Reshape': ('Reshape', 14, [X, ('shape', 'i64', [4])]),
    'Expand': ('Expand', 13, [X, ('shape', 'i64', [4])]),
    'ConstantOfShape': ('ConstantOfShape', 9, [('shape', 'i64', [2])]),
    'Tile': ('Tile', 13, [X, ('repeats', 'i64', [4])]),
    'Range': ('Range', 11, [('start', 'i64', []), ('limit', 'i64', []), ('delta', 'i64', [])]),
    'RangeFloat': ('Range', 11, [('start', 'f32', []), ('limit', 'f32', []), ('delta', 'f32', [])]),
    'OneHot': ('OneHot', 11, [('indices', TensorProto.INT64, [3]), ('depth', 'i64', []), ('values', TensorProto.FLOAT, [2])]),
    'TopK': ('TopK', 11, [X, ('k', 'i64', [1])]),
    'Slice': ('Slice', 13, [X, ('starts', 'i64', [1]), ('ends', 'i64', [1]), ('axes', 'i64', [1]), ('steps', 'i64', [1])]),
    'Pad': ('Pad', 13, [X, ('pads', 'i64', [8])]),
    'Split': ('Split', 13, [X, ('split', 'i64', [2])]),
    'Squeeze': ('Squeeze', 13, [X, ('axes', 'i64', [1])]),
    'Unsqueeze': ('Unsqueeze', 13, [X, ('axes', 'i64', [1])]),
    'ReduceSum': ('ReduceSum', 13, [X, ('axes', 'i64', [1])]),
    'ResizeScales': ('Resize', 13, [X, ('roi', 'f32', [0]), ('scales', 'f32', [4])]),
    'ResizeSizes': ('Resize', 13, [X, ('roi', 'f32', [0]), ('scales', 'f32', [0]), ('sizes', 'i64', [4])]),
    'Upsample': ('Upsample', 9, [X, ('scales', 'f32', [4])]),
    'STFTWindow': ('STFT', 17, [SIGNAL, ('frame_step', 'i64', []), ('window', TensorProto.FLOAT, [4])]),
    'STFTLength': ('STFT', 17, [SIGNAL, ('frame_step', 'i64', []), ('', None, None), ('frame_length', 'i64', [])]),
    'DFT': ('DFT', 17, [SIGNAL, ('dft_length', 'i64', [])]),
    'HannWindow': ('HannWindow', 17, [('size', 'i64', [])]),
    'MelWeightMatrix': ('MelWeightMatrix', 17, [('num_mel_bins', 'i64', []), ('dft_length', 'i64', []),
                                                ('sample_rate', 'i64', []), ('lower', 'f32', []), ('upper', 'f32', [])]),
    'Gather': ('Gather', 13, [X, ('indices', 'i64', [1])]),
    'NonMaxSuppression': ('NonMaxSuppression', 11, [('boxes', TensorProto.FLOAT, [1, 3, 4]), ('scores', TensorProto.FLOAT, [1, 1, 3]),
                                                    ('max', 'i64', [1]), ('iou', 'f32', [1])]),
    'CumSum': ('CumSum', 14, [X, ('axis', 'i64', [])]),
    'Trilu': ('Trilu', 14, [X, ('k', 'i64', [])]),
    'ReverseSequence': ('ReverseSequence', 10, [('x', TensorProto.FLOAT, [4, 2]), ('lens', 'i64', [2])]),
}


def constant_input_sweep(folder):
    count = 0
    for name, (op, opset, spec) in CONSTANT_INPUT_OPS.items():
        for target, (_, kind, _) in enumerate(spec):
            if kind not in ('i64', 'f32'):
                continue
            for value in I64_VALUES if kind == 'i64' else F32_VALUES:
                inputs, initializers, names = [], [], []
                for i, (input_name, elem, shape) in enumerate(spec):
                    names.append(input_name)
                    if not input_name:
                        continue
                    if elem in ('i64', 'f32'):
                        dtype = np.int64 if elem == 'i64' else np.float32
                        filler = value if i == target else (2 if elem == 'i64' else 1.5)
                        initializers.append(numpy_helper.from_array(np.full(shape, filler, dtype=dtype), input_name))
                    else:
                        inputs.append(helper.make_tensor_value_info(input_name, elem, shape))
                outputs = untyped_outputs(2 if op == 'TopK' else 1)
                node = helper.make_node(op, names, [o.name for o in outputs], name='n')
                save(folder, 'input_%s_%s_%s' % (name, spec[target][0], str(value).replace('-', 'm')), [node], inputs,
                     outputs, opset, initializers)
                count += 1
    return count


def replay(binary, folder):
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith('.onnx'))
    env = dict(os.environ, ASAN_OPTIONS='allocator_may_return_null=1:detect_leaks=0:handle_abort=1',
               UBSAN_OPTIONS='print_stacktrace=1:halt_on_error=1', EPHOST_TENSOR_BYTES_LIMIT='4194304')
    env.setdefault('TMPDIR', '/dev/shm' if os.access('/dev/shm', os.W_OK) else '/tmp')

    def run(batch):
        r = subprocess.run([binary, '-timeout=20'] + batch, env=env, capture_output=True, text=True, errors='replace')
        return r.returncode, r.stderr

    failed = 0
    for start in range(0, len(files), 60):
        batch = files[start:start + 60]
        if run(batch)[0] == 0:
            continue
        for f in batch:
            rc, err = run([f])
            if rc != 0:
                failed += 1
                lines = [l for l in err.splitlines() if 'SUMMARY' in l or 'runtime error' in l]
                print('%s: %s' % (os.path.basename(f), (lines[0] if lines else 'exit %d' % rc)[:300]), flush=True)
    print('%d models, %d failed' % (len(files), failed))
    return failed


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)
    print('%d attribute models, %d constant-input models' % (attribute_sweep(folder), constant_input_sweep(folder)))
    if len(sys.argv) > 2:
        sys.exit(1 if replay(sys.argv[2], folder) else 0)


if __name__ == '__main__':
    main()
