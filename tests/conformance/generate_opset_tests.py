#!/usr/bin/python3
"""Generates ONNX-backend-style cases (model.onnx + test_data_set_0/input_N.pb, output_N.pb) for the
operator versions of opsets above onnx 1.12's 17, and prints the folder holding them.

    /usr/bin/python3 tests/conformance/generate_opset_tests.py [--cache-dir DIR] [--force]

onnx 1.12 has no test data for these versions, but its helper writes any opset number into a model:
each case here is one node at the opset under test, with inputs drawn from a seeded numpy generator and
expected outputs computed by numpy (reference functions below, written from the ONNX operator
specification; onnx 1.12's resize helpers for interpolation). Case names say the opset:
test_<op>_opset<N>_<variant>.

ONNX Runtime is then the oracle where it runs a case (ort_oracle.py): onnxruntime-node, fetched from npm
into the cache folder by fetch_ort.sh, runs every case it can, and its outputs become the expected ones
where they agree with the numpy reference; oracle.tsv in the suite folder says which oracle each case
has and why. Without npm (or with --no-ort) every case keeps its numpy reference.

The cases go to DIR/opset-tests-<GENERATION>-<ort|numpy>/ (DIR: --cache-dir, else $EPHOST_TEST_CACHE,
else the folder named by --default-cache-dir). A stamp written last marks a complete generation; it is
regenerated when the stamp is missing or with --force.
"""
import argparse
import fcntl
import hashlib
import itertools
import os
import shutil
import sys
import tempfile

# The cases' folder is named by a digest of this script and its case modules, so a changed generator never
# meets stale cases.
_digest = hashlib.sha256()
for _part in [__file__] + [os.path.join(os.path.dirname(os.path.abspath(__file__)), _name)
                           for _name in ("narrow_type_cases.py", "ort_oracle.py", "ort_oracle.js", "fetch_ort.sh")]:
    with open(_part, "rb") as _source:
        _digest.update(_source.read())
GENERATION = _digest.hexdigest()[:12]
STAMP = ".complete"


def log(message):
    print(f"generate_opset_tests: {message}", file=sys.stderr, flush=True)


def restore_numpy_aliases():
    # The same repair as the node-case generator's (numpy 1.24 removed the aliases onnx 1.12 uses).
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from generate_node_tests import restore_numpy_aliases as restore

    restore()


restore_numpy_aliases()
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper, numpy_helper, TensorProto  # noqa: E402
import narrow_type_cases  # noqa: E402  (the float8, float4, int4 and int2 cases)
import ort_oracle  # noqa: E402
from narrow_type_cases import NarrowTensor  # noqa: E402

IR_FOR_OPSET = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11, 24: 11, 25: 11, 26: 12, 27: 12}
RNG = np.random.default_rng(20240518)


class Case:
    def __init__(self, name, opset, node, inputs, outputs, initializers=(), input_types=None):
        self.name, self.opset, self.node = name, opset, node
        self.inputs, self.outputs, self.initializers = inputs, outputs, list(initializers)


CASES = []


def case(op, opset, variant, node, inputs, outputs, initializers=()):
    """inputs / outputs: lists of (name, array); initializers: list of (name, array)."""
    CASES.append(Case(f"test_{op.lower()}_opset{opset}_{variant}", opset, node, inputs, outputs, initializers))


def value_info(name, array):
    if isinstance(array, NarrowTensor):
        return array.value_info(name)
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype)
                                         if hasattr(helper, "np_dtype_to_tensor_dtype")
                                         else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[array.dtype], array.shape)


def tensor_proto(array, name):
    if isinstance(array, NarrowTensor):
        return array.to_proto(name)
    return numpy_helper.from_array(np.asarray(array), name)


def write_case(root, c):
    folder = os.path.join(root, c.name)
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    graph = helper.make_graph(
        [c.node], c.name,
        [value_info(n, a) for n, a in c.inputs],
        [value_info(n, a) for n, a in c.outputs],
        [tensor_proto(a, n) for n, a in c.initializers])
    model = helper.make_model(graph, producer_name="ephost-opset-tests",
                              opset_imports=[helper.make_opsetid("", c.opset)])
    model.ir_version = IR_FOR_OPSET.get(c.opset, 8)
    with open(os.path.join(folder, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    write_values(root, c, "input", c.inputs)
    write_values(root, c, "output", c.outputs)


def write_values(root, c, kind, values):
    for i, (n, a) in enumerate(values):
        with open(os.path.join(root, c.name, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
            f.write(tensor_proto(a, n).SerializeToString())


def rand(shape, dtype=np.float32, low=-3.0, high=3.0):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)
    return RNG.uniform(low, high, size=shape).astype(dtype)


# ---- references ------------------------------------------------------------------------------------

def ref_reduce(op, x, axes, keepdims, noop):
    if axes is None or len(axes) == 0:
        if noop:
            return x.copy()
        axes = tuple(range(x.ndim))
    axes = tuple(int(a) for a in axes)
    kd = bool(keepdims)
    if op == "ReduceL1":
        r = np.sum(np.abs(x), axis=axes, keepdims=kd)
    elif op == "ReduceL2":
        r = np.sqrt(np.sum(np.square(x), axis=axes, keepdims=kd))
    elif op == "ReduceLogSum":
        r = np.log(np.sum(x, axis=axes, keepdims=kd))
    elif op == "ReduceLogSumExp":
        r = np.log(np.sum(np.exp(x.astype(np.float64)), axis=axes, keepdims=kd))
    elif op == "ReduceMax":
        r = np.max(x, axis=axes, keepdims=kd)
    elif op == "ReduceMean":
        r = np.mean(x, axis=axes, keepdims=kd)
    elif op == "ReduceMin":
        r = np.min(x, axis=axes, keepdims=kd)
    elif op == "ReduceProd":
        r = np.prod(x, axis=axes, keepdims=kd)
    elif op == "ReduceSumSquare":
        r = np.sum(np.square(x), axis=axes, keepdims=kd)
    return np.asarray(r).astype(x.dtype)


def ref_pool_lp(x, kernel, strides, pads, dilations, p, ceil_mode, auto_pad="NOTSET"):
    n = x.ndim - 2
    strides = strides or [1] * n
    dilations = dilations or [1] * n
    pads = list(pads or [0] * (2 * n))
    out = []
    window = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    for i in range(n):
        size = x.shape[i + 2]
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-size // strides[i])
            total = max(0, (o - 1) * strides[i] + window[i] - size)
            pads[i] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pads[i + n] = total - pads[i]
        else:
            span = size + pads[i] + pads[i + n] - window[i]
            o = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
            if ceil_mode and (o - 1) * strides[i] >= size + pads[i]:
                o -= 1
        out.append(o)
    y = np.zeros(x.shape[:2] + tuple(out), dtype=np.float64)
    for idx in np.ndindex(*out):
        acc = np.zeros(x.shape[:2])
        for k in np.ndindex(*kernel):
            pos = [idx[i] * strides[i] - pads[i] + k[i] * dilations[i] for i in range(n)]
            if all(0 <= pos[i] < x.shape[i + 2] for i in range(n)):
                acc += np.abs(x[(slice(None), slice(None)) + tuple(pos)].astype(np.float64)) ** p
        y[(slice(None), slice(None)) + idx] = acc ** (1.0 / p)
    return y.astype(x.dtype)


def ref_col2im(x, image, block, dilations=None, pads=None, strides=None):
    n = len(image)
    dilations = dilations or [1] * n
    strides = strides or [1] * n
    pads = pads or [0] * (2 * n)
    positions = [(image[i] + pads[i] + pads[i + n] - (dilations[i] * (block[i] - 1) + 1)) // strides[i] + 1
                 for i in range(n)]
    N, CB, L = x.shape
    bsize = int(np.prod(block))
    C = CB // bsize
    y = np.zeros((N, C) + tuple(image), dtype=x.dtype)
    for c in range(C):
        for kk, k in enumerate(np.ndindex(*block)):
            for ll, l in enumerate(np.ndindex(*positions)):
                pos = [l[i] * strides[i] - pads[i] + k[i] * dilations[i] for i in range(n)]
                if all(0 <= pos[i] < image[i] for i in range(n)):
                    y[(slice(None), c) + tuple(pos)] += x[:, c * bsize + kk, ll]
    return y


def ref_center_crop_pad(x, shape, axes=None):
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    y = x
    for a, s in zip(axes, shape):
        size = y.shape[a]
        if s < size:
            start = (size - s) // 2
            y = np.take(y, range(start, start + s), axis=a)
        elif s > size:
            before = (s - size) // 2
            widths = [(0, 0)] * y.ndim
            widths[a] = (before, s - size - before)
            y = np.pad(y, widths)
    return y


def ref_group_norm(x, scale, bias, groups, eps):
    N, C = x.shape[:2]
    g = x.reshape(N, groups, -1).astype(np.float64)
    mean = g.mean(axis=2, keepdims=True)
    var = g.var(axis=2, keepdims=True)
    norm = (g - mean) / np.sqrt(var + eps)
    y = norm * scale.reshape(1, groups, 1) + bias.reshape(1, groups, 1)
    return y.reshape(x.shape).astype(x.dtype)


def ref_pad(x, pads, mode, value, axes):
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    n = len(axes)
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for i, a in enumerate(axes):
        widths[a] = (max(0, pads[i]), max(0, pads[i + n]))
        crop[a] = slice(-min(0, pads[i]), x.shape[a] + widths[a][0] + widths[a][1] + min(0, pads[i + n]))
    if mode == "constant":
        y = np.pad(x, widths, mode="constant", constant_values=value)
    else:
        y = np.pad(x, widths, mode=mode)
    return y[tuple(crop)]


def ref_scatter_elements(data, indices, updates, axis, reduction):
    y = data.copy()
    for idx in np.ndindex(*indices.shape):
        target = list(idx)
        target[axis] = indices[idx] % data.shape[axis]
        target = tuple(target)
        u = updates[idx]
        if reduction == "max":
            y[target] = max(y[target], u)
        elif reduction == "min":
            y[target] = min(y[target], u)
        elif reduction == "add":
            y[target] += u
        elif reduction == "mul":
            y[target] *= u
        else:
            y[target] = u
    return y


def ref_scatter_nd(data, indices, updates, reduction):
    y = data.copy()
    for idx in np.ndindex(*indices.shape[:-1]):
        target = tuple(indices[idx])
        if reduction == "max":
            y[target] = np.maximum(y[target], updates[idx])
        elif reduction == "min":
            y[target] = np.minimum(y[target], updates[idx])
        else:
            y[target] = updates[idx]
    return y


def ref_resize(x, scales, output_size, mode, roi=None, **kwargs):
    from onnx.backend.test.case.node import resize as R
    coeffs = {"nearest": R.nearest_coeffs, "linear": R.linear_coeffs, "cubic": R.cubic_coeffs}[mode]
    if mode == "nearest" and "nearest_mode" in kwargs:
        nm = kwargs.pop("nearest_mode")
        get = lambda ratio, scale=None: R.nearest_coeffs(ratio, mode=nm)  # noqa: E731
    else:
        get = coeffs
    y = np.zeros(output_size, dtype=np.float64)
    for pos in np.ndindex(*output_size):
        y[pos] = R.interpolate_nd_with_x(x, x.ndim, np.array(scales), np.array(pos), get, roi=roi, **kwargs)
    return y.astype(x.dtype)



def antialias_linear_coeffs(ratio, scale):
    """ONNX reference's linear filter for antialias: the triangle stretched by 1 / scale when downscaling,
    over 2 - 2 * start taps from start = floor(-1 / scale) + 1, normalised to sum to 1."""
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    footprint = 2 - 2 * start
    args = (np.arange(start, start + footprint) - ratio) * scale
    coeffs = np.clip(1 - np.abs(args), 0, 1)
    return coeffs / coeffs.sum()


def antialias_cubic_coeffs(ratio, scale, A=-0.75):
    """ONNX reference's cubic filter for antialias: Keys' cubic stretched by 1 / scale when downscaling,
    over the taps from floor(-2 / scale) + 1 to 1 - that, normalised to sum to 1."""
    scale = min(scale, 1.0)

    def coeff(x):
        x = abs(x)
        if x <= 1:
            return (A + 2) * x ** 3 - (A + 3) * x ** 2 + 1
        if x < 2:
            return A * x ** 3 - 5 * A * x ** 2 + 8 * A * x - 4 * A
        return 0.0

    i_start = int(np.floor(-2 / scale) + 1)
    coeffs = np.array([coeff(scale * (i - ratio)) for i in range(i_start, 2 - i_start)])
    return coeffs / coeffs.sum()


def ref_resize_antialias(x, scales, mode, sizes=None, roi=None, cubic_coeff_a=-0.75, **kwargs):
    """Resize-18 with antialias=1 (linear or cubic), axis by axis as ONNX's reference does: onnx 1.12's
    1-D interpolation (coordinate modes, edge padding, exclude_outside) with the antialias filter of
    that axis's scale. `scales` is per axis; with `sizes` the scale of an axis is sizes / input size."""
    from onnx.backend.test.case.node import resize as R
    y = x.astype(np.float64)
    r = x.ndim
    for axis in range(r):
        size = y.shape[axis]
        if sizes is not None:
            out = int(sizes[axis])
            scale = float(np.float32(out / size))
        else:
            scale = float(np.float32(scales[axis]))
            out = int(np.floor(size * scale))
        if scale == 1.0 and out == size:
            continue
        if mode == "linear":
            get = lambda ratio, s=scale: antialias_linear_coeffs(ratio, s)  # noqa: E731
        else:
            get = lambda ratio, s=scale: antialias_cubic_coeffs(ratio, s, cubic_coeff_a)  # noqa: E731
        axis_roi = None if roi is None else [roi[axis], roi[r + axis]]
        moved = np.moveaxis(y, axis, -1)
        res = np.empty(moved.shape[:-1] + (out,))
        for idx in np.ndindex(*moved.shape[:-1]):
            row = moved[idx]
            for o in range(out):
                res[idx + (o,)] = R.interpolate_1d_with_x(row, scale, o, get, roi=axis_roi, **kwargs)
        y = np.moveaxis(res, -1, axis)
    return y.astype(x.dtype)

# ---- opset 18 -----------------------------------------------------------------------------------------

def opset18():
    O = 18
    # Bitwise
    for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or), ("BitwiseXor", np.bitwise_xor)):
        for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
            a, b = rand((3, 4), dtype), rand((4,), dtype)
            case(op, O, f"{np.dtype(dtype).name}_broadcast", helper.make_node(op, ["a", "b"], ["c"]),
                 [("a", a), ("b", b)], [("c", fn(a, b))])
    for dtype in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        x = rand((2, 3, 4), dtype)
        case("BitwiseNot", O, np.dtype(dtype).name, helper.make_node("BitwiseNot", ["x"], ["y"]),
             [("x", x)], [("y", np.bitwise_not(x))])

    # CenterCropPad
    x = rand((5, 7, 3))
    for variant, shape, axes in (("crop_and_pad", [4, 10, 3], None), ("odd", [2, 8, 3], None),
                                 ("axes", [6, 4], [0, 1]), ("negative_axes", [9, 2], [-3, -2]),
                                 ("axis_last", [1], [2])):
        attrs = {"axes": axes} if axes is not None else {}
        s = np.array(shape, dtype=np.int64)
        case("CenterCropPad", O, variant, helper.make_node("CenterCropPad", ["x", "shape"], ["y"], **attrs),
             [("x", x), ("shape", s)], [("y", ref_center_crop_pad(x, shape, axes))])
    xi = rand((4, 6), np.int32)
    case("CenterCropPad", O, "int32", helper.make_node("CenterCropPad", ["x", "shape"], ["y"]),
         [("x", xi), ("shape", np.array([7, 3], np.int64))], [("y", ref_center_crop_pad(xi, [7, 3]))])

    # Col2Im
    for variant, image, block, attrs in (("basic", [5, 5], [1, 5], {}),
                                         ("2x2", [4, 5], [2, 2], {}),
                                         ("pads_strides", [5, 6], [2, 3], {"pads": [1, 0, 1, 2], "strides": [2, 1]}),
                                         ("dilations", [6, 6], [2, 2], {"dilations": [2, 3]}),
                                         ("3d", [3, 4, 3], [2, 2, 1], {"strides": [1, 2, 1]})):
        n = len(image)
        d = attrs.get("dilations", [1] * n)
        s = attrs.get("strides", [1] * n)
        p = attrs.get("pads", [0] * (2 * n))
        L = int(np.prod([(image[i] + p[i] + p[i + n] - (d[i] * (block[i] - 1) + 1)) // s[i] + 1 for i in range(n)]))
        x = rand((2, 2 * int(np.prod(block)), L))
        case("Col2Im", O, variant,
             helper.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["y"], **attrs),
             [("x", x), ("image_shape", np.array(image, np.int64)), ("block_shape", np.array(block, np.int64))],
             [("y", ref_col2im(x, image, block, d, p, s))])

    # GroupNormalization
    for variant, shape, groups, eps in (("basic", (2, 4, 3, 3), 2, 1e-5), ("epsilon", (3, 6, 5), 3, 1e-2),
                                        ("one_group", (2, 3, 4), 1, 1e-5), ("per_channel", (2, 4, 2, 2), 4, 1e-5)):
        x, scale, bias = rand(shape), rand((groups,)), rand((groups,))
        attrs = {"num_groups": groups}
        if eps != 1e-5:
            attrs["epsilon"] = eps
        case("GroupNormalization", O, variant,
             helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], **attrs),
             [("x", x), ("scale", scale), ("bias", bias)], [("y", ref_group_norm(x, scale, bias, groups, eps))])

    # LpPool
    for variant, shape, attrs in (
            ("2d_default", (1, 3, 6, 6), {"kernel_shape": [3, 3]}),
            ("1d_p1", (2, 2, 9), {"kernel_shape": [3], "p": 1}),
            ("2d_p3_pads_strides", (1, 2, 7, 6), {"kernel_shape": [3, 2], "p": 3, "pads": [1, 0, 1, 1], "strides": [2, 2]}),
            ("2d_dilations", (1, 2, 8, 8), {"kernel_shape": [2, 2], "dilations": [2, 3]}),
            ("2d_ceil_mode", (1, 1, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
            ("2d_same_upper", (1, 2, 5, 5), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
            ("2d_same_lower", (1, 2, 6, 5), {"kernel_shape": [2, 3], "auto_pad": "SAME_LOWER"}),
            ("3d", (1, 2, 4, 4, 4), {"kernel_shape": [2, 2, 2], "strides": [2, 1, 2]})):
        x = rand(shape)
        y = ref_pool_lp(x, attrs["kernel_shape"], attrs.get("strides"), attrs.get("pads"), attrs.get("dilations"),
                        attrs.get("p", 2), attrs.get("ceil_mode", 0), attrs.get("auto_pad", "NOTSET"))
        case("LpPool", O, variant, helper.make_node("LpPool", ["x"], ["y"], **attrs), [("x", x)], [("y", y)])

    # Mish
    x = rand((3, 4, 5), low=-10, high=10)
    case("Mish", O, "float", helper.make_node("Mish", ["x"], ["y"]), [("x", x)],
         [("y", (x * np.tanh(np.log1p(np.exp(x.astype(np.float64))))).astype(np.float32))])
    xd = rand((7,), np.float64, -20, 20)
    case("Mish", O, "double", helper.make_node("Mish", ["x"], ["y"]), [("x", xd)],
         [("y", xd * np.tanh(np.log1p(np.exp(xd))))])

    # Optional*: opset 18 takes tensors too, and an omitted input
    x = rand((2, 3))
    case("OptionalHasElement", O, "tensor_input", helper.make_node("OptionalHasElement", ["x"], ["y"]),
         [("x", x)], [("y", np.array(True))])
    case("OptionalHasElement", O, "omitted_input", helper.make_node("OptionalHasElement", [""], ["y"]),
         [], [("y", np.array(False))])
    case("OptionalGetElement", O, "tensor_input", helper.make_node("OptionalGetElement", ["x"], ["y"]),
         [("x", x)], [("y", x)])

    # Pad
    x = rand((3, 4, 5))
    for variant, pads, mode, axes in (("constant_axes", [1, 2, 0, 1], "constant", [0, 2]),
                                      ("reflect_axes", [2, 1], "reflect", [1]),
                                      ("edge_negative_axes", [1, 0, 2, 3], "edge", [-1, -3]),
                                      ("constant_all", [0, 1, 1, 1, 0, 2], "constant", None),
                                      ("crop_axes", [-1, -2], "constant", [2])):
        inputs = [("x", x), ("pads", np.array(pads, np.int64))]
        names = ["x", "pads"]
        value = 0.0
        if mode == "constant":
            value = 1.5
            inputs.append(("value", np.array(value, np.float32)))
            names.append("value")
        if axes is not None:
            if mode != "constant":
                names.append("")
            inputs.append(("axes", np.array(axes, np.int64)))
            names.append("axes")
        case("Pad", O, variant, helper.make_node("Pad", names, ["y"], mode=mode), inputs,
             [("y", ref_pad(x, pads, mode, value, axes))])
    xi = rand((2, 3), np.int32)
    case("Pad", O, "int32_axes_int32", helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"]),
         [("x", xi), ("pads", np.array([1, 2], np.int64)), ("axes", np.array([1], np.int32))],
         [("y", ref_pad(xi, [1, 2], "constant", 0, [1]))])

    # Reduce*
    for op in ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
               "ReduceProd", "ReduceSumSquare"):
        positive = op == "ReduceLogSum"
        x = rand((3, 2, 4), low=0.1 if positive else -2, high=2)
        for variant, axes, keepdims, noop, as_initializer in (
                ("axes_keepdims", [1], 1, 0, False), ("axes_initializer", [0, 2], 0, 0, True),
                ("negative_axes", [-1], 1, 0, False), ("omitted_axes", None, 0, 0, False),
                ("omitted_axes_keepdims", None, 1, 0, False), ("empty_axes_noop", [], 1, 1, False),
                ("empty_axes_reduce_all", [], 0, 0, False)):
            inputs, inits, names = [("x", x)], [], ["x"]
            if axes is not None:
                a = np.array(axes, np.int64)
                (inits if as_initializer else inputs).append(("axes", a))
                names.append("axes")
            attrs = {"keepdims": keepdims}
            if noop:
                attrs["noop_with_empty_axes"] = 1
            y = ref_reduce(op, x, axes, keepdims, noop)
            case(op, O, variant, helper.make_node(op, names, ["y"], **attrs), inputs, [("y", y)], inits)
        if op in ("ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceSumSquare", "ReduceMean"):
            xi = rand((2, 5), np.int32 if op not in ("ReduceMax", "ReduceMin") else np.int8)
            if op == "ReduceProd":
                xi = RNG.integers(-3, 4, size=(2, 5)).astype(np.int32)
            case(op, O, f"{xi.dtype.name}", helper.make_node(op, ["x", "axes"], ["y"], keepdims=0),
                 [("x", xi), ("axes", np.array([1], np.int64))],
                 [("y", ref_reduce(op, xi, [1], 0, 0))])

    # Resize: axes, keep_aspect_ratio_policy, antialias
    x = rand((1, 2, 4, 6))
    case("Resize", O, "axes_scales_linear",
         helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear", axes=[2, 3]),
         [("x", x), ("scales", np.array([1.5, 0.5], np.float32))],
         [("y", ref_resize(x, [1, 1, 1.5, 0.5], [1, 2, 6, 3], "linear"))])
    case("Resize", O, "axes_sizes_nearest",
         helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], axes=[-1]),
         [("x", x), ("sizes", np.array([9], np.int64))],
         [("y", ref_resize(x, [1, 1, 1, 9 / 6], [1, 2, 4, 9], "nearest"))])
    for policy, sizes in (("not_larger", [6, 6]), ("not_smaller", [6, 6]), ("not_larger", [2, 5])):
        scale = (min if policy == "not_larger" else max)(sizes[0] / 4, sizes[1] / 6)
        out = [1, 2, int(np.floor(4 * scale + 0.5)), int(np.floor(6 * scale + 0.5))]
        case("Resize", O, f"{policy}_{sizes[0]}x{sizes[1]}",
             helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], axes=[2, 3], keep_aspect_ratio_policy=policy,
                              mode="linear"),
             [("x", x), ("sizes", np.array(sizes, np.int64))],
             [("y", ref_resize(x, [1, 1, scale, scale], out, "linear"))])
    # antialias: linear and cubic widen their filter on the axes that shrink; nearest ignores it.
    x2 = rand((1, 2, 7, 9))
    for variant, mode, scales, attrs in (
            ("linear_downscale", "linear", [1, 1, 0.5, 0.5], {}),
            ("cubic_downscale", "cubic", [1, 1, 0.6, 0.45], {}),
            ("linear_align_corners", "linear", [1, 1, 0.5, 0.7], {"coordinate_transformation_mode": "align_corners"}),
            ("linear_asymmetric", "linear", [1, 1, 0.6, 0.3], {"coordinate_transformation_mode": "asymmetric"}),
            ("linear_pytorch_half_pixel", "linear", [1, 1, 0.45, 0.6],
             {"coordinate_transformation_mode": "pytorch_half_pixel"}),
            ("linear_mixed_up_down", "linear", [1, 1, 1.6, 0.45], {}),
            ("cubic_mixed_up_down", "cubic", [1, 1, 0.5, 2.0], {}),
            ("cubic_a_n0p5_exclude_outside", "cubic", [1, 1, 0.4, 0.7], {"cubic_coeff_a": -0.5, "exclude_outside": 1})):
        xin = x if variant == "linear_downscale" else x2
        case("Resize", O, f"antialias_{variant}",
             helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, antialias=1, **attrs),
             [("x", xin), ("scales", np.array(scales, np.float32))],
             [("y", ref_resize_antialias(xin, scales, mode, **attrs))])
    case("Resize", O, "antialias_cubic_sizes",
         helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="cubic", antialias=1),
         [("x", x2), ("sizes", np.array([1, 2, 3, 4], np.int64))],
         [("y", ref_resize_antialias(x2, None, "cubic", sizes=[1, 2, 3, 4]))])
    # Whole output sizes: where input size * scale has a fraction, ONNX's reference spreads the crop over
    # that fractional length and ONNX Runtime (and ephost) over the output size.
    roi = np.array([0, 0, 0.1, -0.2, 1, 1, 0.9, 1.1], np.float32)
    x4 = rand((1, 2, 8, 8))
    case("Resize", O, "antialias_linear_tf_crop_and_resize",
         helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="linear", antialias=1,
                          coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0),
         [("x", x4), ("roi", roi), ("scales", np.array([1, 1, 0.5, 0.75], np.float32))],
         [("y", ref_resize_antialias(x4, [1, 1, 0.5, 0.75], "linear", roi=roi,
                                     coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=10.0))])
    x3 = rand((5, 3, 8))
    case("Resize", O, "antialias_linear_axes_3d",
         helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear", antialias=1, axes=[0, 2]),
         [("x", x3), ("scales", np.array([0.6, 0.5], np.float32))],
         [("y", ref_resize_antialias(x3, [0.6, 1, 0.5], "linear"))])
    case("Resize", O, "antialias_nearest_ignored",
         helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest", antialias=1),
         [("x", x2), ("scales", np.array([1, 1, 0.6, 0.45], np.float32))],
         [("y", ref_resize(x2, [1, 1, 0.6, 0.45], [1, 2, 4, 4], "nearest"))])

    # ScatterElements / ScatterND with max and min
    data = rand((3, 4))
    indices = np.array([[0, 1, 2, 0], [2, 2, 0, 1]], np.int64)
    updates = rand((2, 4))
    for red in ("max", "min"):
        case("ScatterElements", O, red,
             helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=0, reduction=red),
             [("data", data), ("indices", indices), ("updates", updates)],
             [("y", ref_scatter_elements(data, indices, updates, 0, red))])
        di = rand((2, 5), np.int32)
        ii = np.array([[1, 4], [0, -1]], np.int64)
        ui = rand((2, 2), np.int32)
        case("ScatterElements", O, f"{red}_int32_axis1",
             helper.make_node("ScatterElements", ["data", "indices", "updates"], ["y"], axis=1, reduction=red),
             [("data", di), ("indices", ii), ("updates", ui)],
             [("y", ref_scatter_elements(di, ii, ui, 1, red))])
        dn = rand((4, 3))
        idx = np.array([[1], [3], [1]], np.int64)
        un = rand((3, 3))
        case("ScatterND", O, red,
             helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], reduction=red),
             [("data", dn), ("indices", idx), ("updates", un)], [("y", ref_scatter_nd(dn, idx, un, red))])

    # Split
    x = rand((7, 4))
    for variant, attrs, lengths, split in (("num_outputs_uneven", {"num_outputs": 3}, [3, 3, 1], None),
                                           ("num_outputs_even", {"num_outputs": 2, "axis": 1}, [2, 2], None),
                                           ("num_outputs_negative_axis", {"num_outputs": 4, "axis": -2}, [2, 2, 2, 1], None),
                                           ("split_input", {}, [2, 5], [2, 5])):
        axis = attrs.get("axis", 0) % 2
        outs = np.split(x, np.cumsum(lengths)[:-1], axis=axis)
        names = [f"y{i}" for i in range(len(lengths))]
        inputs = [("x", x)]
        node_inputs = ["x"]
        if split is not None:
            inputs.append(("split", np.array(split, np.int64)))
            node_inputs.append("split")
        case("Split", O, variant, helper.make_node("Split", node_inputs, names, **attrs), inputs,
             list(zip(names, outs)))


# ---- opset 19 -----------------------------------------------------------------------------------------

def ref_pool_avg(x, kernel, strides=None, pads=None, dilations=None, ceil_mode=0, count_include_pad=0):
    n = x.ndim - 2
    strides = strides or [1] * n
    dilations = dilations or [1] * n
    pads = list(pads or [0] * (2 * n))
    window = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    out = []
    for i in range(n):
        size = x.shape[i + 2]
        span = size + pads[i] + pads[i + n] - window[i]
        o = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
        if ceil_mode and (o - 1) * strides[i] >= size + pads[i]:
            o -= 1
        out.append(o)
    y = np.zeros(x.shape[:2] + tuple(out), dtype=np.float64)
    for idx in np.ndindex(*out):
        acc = np.zeros(x.shape[:2])
        count = 0
        for k in np.ndindex(*kernel):
            pos = [idx[i] * strides[i] - pads[i] + k[i] * dilations[i] for i in range(n)]
            inside = all(0 <= pos[i] < x.shape[i + 2] for i in range(n))
            in_padded = all(-pads[i] <= pos[i] < x.shape[i + 2] + pads[i + n] for i in range(n))
            if inside:
                acc += x[(slice(None), slice(None)) + tuple(pos)]
                count += 1
            elif count_include_pad and in_padded:
                count += 1
        y[(slice(None), slice(None)) + idx] = acc / max(count, 1)
    return y.astype(x.dtype)


def ref_resize_symmetric(x, scales, mode):
    """Resize with coordinate_transformation_mode=half_pixel_symmetric, separable per axis (linear or nearest
    round_prefer_floor), as the ONNX operator specification of opset 19 defines it."""
    y = x.astype(np.float64)
    for axis, scale in enumerate(scales):
        size = y.shape[axis]
        out = int(np.floor(size * scale))
        adjustment = out / (size * scale)
        offset = size / 2 * (1 - adjustment)
        rows = []
        for o in range(out):
            c = offset + (o + 0.5) / scale - 0.5
            if mode == "nearest":
                i = int(np.ceil(c - 0.5)) if c != int(c) + 0.5 else int(np.floor(c))
                i = min(max(i, 0), size - 1)
                rows.append(np.take(y, i, axis=axis))
            else:
                c = min(max(c, 0), size - 1)
                lo = int(np.floor(c))
                hi = min(lo + 1, size - 1)
                f = c - lo
                rows.append(np.take(y, lo, axis=axis) * (1 - f) + np.take(y, hi, axis=axis) * f)
        y = np.stack(rows, axis=axis)
    return y.astype(x.dtype)


def ref_deform_conv(x, w, offset, b=None, mask=None, strides=None, pads=None, dilations=None, group=1,
                    offset_group=1):
    """2-D deformable convolution from the ONNX specification: each tap is sampled bilinearly at its offset
    position (zero outside X) and weighted by the mask."""
    N, C, H, W = x.shape
    OC, Cg, KH, KW = w.shape
    sh, sw = strides or [1, 1]
    dh, dw = dilations or [1, 1]
    pt, pl, pb, pr = pads or [0, 0, 0, 0]
    OH = (H + pt + pb - ((KH - 1) * dh + 1)) // sh + 1
    OW = (W + pl + pr - ((KW - 1) * dw + 1)) // sw + 1
    K = KH * KW
    off = offset.reshape(N, offset_group, K, 2, OH, OW)
    m = mask.reshape(N, offset_group, K, OH, OW) if mask is not None else np.ones((N, offset_group, K, OH, OW))
    xd = x.astype(np.float64)

    def sample(plane, py, px):
        y0, x0 = int(np.floor(py)), int(np.floor(px))
        acc = 0.0
        for yy, wy in ((y0, 1 - (py - y0)), (y0 + 1, py - y0)):
            for xx, wx in ((x0, 1 - (px - x0)), (x0 + 1, px - x0)):
                if 0 <= yy < H and 0 <= xx < W:
                    acc += wy * wx * plane[yy, xx]
        return acc

    cols = np.zeros((N, C, K, OH, OW))
    per_off = C // offset_group
    for n in range(N):
        for c in range(C):
            g = c // per_off
            for k in range(K):
                ki, kj = divmod(k, KW)
                for oh in range(OH):
                    for ow in range(OW):
                        py = oh * sh - pt + ki * dh + off[n, g, k, 0, oh, ow]
                        px = ow * sw - pl + kj * dw + off[n, g, k, 1, oh, ow]
                        cols[n, c, k, oh, ow] = sample(xd[n, c], py, px) * m[n, g, k, oh, ow]
    y = np.zeros((N, OC, OH, OW))
    OCg = OC // group
    for o in range(OC):
        g = o // OCg
        wo = w[o].reshape(Cg * K).astype(np.float64)
        cg = cols[:, g * Cg:(g + 1) * Cg].reshape(N, Cg * K, OH, OW)
        y[:, o] = np.einsum("k,nkhw->nhw", wo, cg)
        if b is not None:
            y[:, o] += b[o]
    return y.astype(x.dtype)


def opset19():
    O = 19
    # AveragePool: dilations
    for variant, shape, attrs in (
            ("2d_dilations", (1, 2, 7, 7), {"kernel_shape": [2, 2], "dilations": [2, 2]}),
            ("2d_dilations_strides_pads", (1, 2, 8, 7), {"kernel_shape": [3, 2], "dilations": [2, 3], "strides": [2, 1],
                                                          "pads": [1, 1, 2, 1]}),
            ("2d_dilations_count_include_pad", (1, 1, 6, 6), {"kernel_shape": [2, 2], "dilations": [2, 2], "pads": [1, 1, 1, 1],
                                                               "count_include_pad": 1}),
            ("1d_dilations", (2, 3, 10), {"kernel_shape": [3], "dilations": [3]}),
            ("3d_dilations", (1, 1, 5, 5, 5), {"kernel_shape": [2, 2, 2], "dilations": [2, 1, 2]}),
            ("2d_no_dilations", (1, 2, 5, 5), {"kernel_shape": [3, 3], "strides": [2, 2]})):
        x = rand(shape)
        y = ref_pool_avg(x, attrs["kernel_shape"], attrs.get("strides"), attrs.get("pads"), attrs.get("dilations"),
                         attrs.get("ceil_mode", 0), attrs.get("count_include_pad", 0))
        case("AveragePool", O, variant, helper.make_node("AveragePool", ["x"], ["y"], **attrs), [("x", x)], [("y", y)])

    # Cast, CastLike: saturate is accepted (it only matters for float8 targets)
    x = rand((3, 4), low=-100, high=100)
    for variant, to, np_to, attrs in (("float_to_int32_saturate", TensorProto.INT32, np.int32, {"saturate": 1}),
                                      ("float_to_double_no_saturate", TensorProto.DOUBLE, np.float64, {"saturate": 0}),
                                      ("float_to_uint8_default", TensorProto.UINT8, np.uint8, {})):
        xv = np.abs(x) if np_to == np.uint8 else x
        case("Cast", O, variant, helper.make_node("Cast", ["x"], ["y"], to=to, **attrs), [("x", xv)],
             [("y", xv.astype(np_to))])
    xi = rand((5,), np.int64)
    case("Cast", O, "int64_to_float", helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT), [("x", xi)],
         [("y", xi.astype(np.float32))])
    case("CastLike", O, "float_to_int64_saturate", helper.make_node("CastLike", ["x", "like"], ["y"], saturate=1),
         [("x", x), ("like", np.zeros((1,), np.int64))], [("y", x.astype(np.int64))])
    case("CastLike", O, "int32_to_double", helper.make_node("CastLike", ["x", "like"], ["y"]),
         [("x", xi.astype(np.int32)), ("like", np.zeros((0,), np.float64))], [("y", xi.astype(np.float64))])

    # Constant
    v = rand((2, 3))
    case("Constant", O, "tensor", helper.make_node("Constant", [], ["y"], value=numpy_helper.from_array(v)), [],
         [("y", v)])
    case("Constant", O, "value_ints", helper.make_node("Constant", [], ["y"], value_ints=[3, -1, 7]), [],
         [("y", np.array([3, -1, 7], np.int64))])

    # DeformConv
    x = rand((1, 2, 4, 5), low=-1, high=1)
    for variant, wshape, attrs, with_bias, with_mask in (
            ("basic", (2, 2, 2, 2), {}, False, False),
            ("bias_mask", (3, 2, 2, 2), {}, True, True),
            ("pads_strides_dilations", (2, 2, 2, 3), {"pads": [1, 1, 1, 0], "strides": [2, 1], "dilations": [1, 2]}, True, False),
            ("groups", (4, 1, 2, 2), {"group": 2, "offset_group": 2}, False, True)):
        w = rand(wshape, low=-1, high=1)
        kh, kw = wshape[2:]
        sh, sw = attrs.get("strides", [1, 1])
        dh, dw = attrs.get("dilations", [1, 1])
        pt, pl, pb, pr = attrs.get("pads", [0, 0, 0, 0])
        oh = (4 + pt + pb - ((kh - 1) * dh + 1)) // sh + 1
        ow = (5 + pl + pr - ((kw - 1) * dw + 1)) // sw + 1
        og = attrs.get("offset_group", 1)
        offset = rand((1, og * kh * kw * 2, oh, ow), low=-1.5, high=1.5)
        inputs = [("x", x), ("w", w), ("offset", offset)]
        names = ["x", "w", "offset"]
        b = m = None
        if with_bias:
            b = rand((wshape[0],))
            inputs.append(("b", b))
            names.append("b")
        if with_mask:
            m = rand((1, og * kh * kw, oh, ow), low=0, high=1)
            if not with_bias:
                names.append("")
            inputs.append(("mask", m))
            names.append("mask")
        y = ref_deform_conv(x, w, offset, b, m, attrs.get("strides"), attrs.get("pads"), attrs.get("dilations"),
                            attrs.get("group", 1), og)
        case("DeformConv", O, variant, helper.make_node("DeformConv", names, ["y"], **attrs), inputs, [("y", y)])

    # QuantizeLinear, DequantizeLinear
    x = rand((2, 3, 4))
    scale, zp = np.array(0.05, np.float32), np.array(128, np.uint8)
    q = np.clip(np.rint(x / scale) + 128, 0, 255).astype(np.uint8)
    case("QuantizeLinear", O, "uint8_saturate", helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], saturate=1),
         [("x", x), ("s", scale), ("z", zp)], [("y", q)])
    scales = np.array([0.02, 0.05, 0.1], np.float32)
    zps = np.array([-3, 0, 5], np.int8)
    qa = np.clip(np.rint(x / scales.reshape(1, 3, 1)) + zps.reshape(1, 3, 1), -128, 127).astype(np.int8)
    case("QuantizeLinear", O, "int8_axis", helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1),
         [("x", x), ("s", scales), ("z", zps)], [("y", qa)])
    case("DequantizeLinear", O, "uint8", helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"]),
         [("x", q), ("s", scale), ("z", zp)], [("y", ((q.astype(np.float32) - 128) * scale).astype(np.float32))])
    case("DequantizeLinear", O, "int8_axis", helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=1),
         [("x", qa), ("s", scales), ("z", zps)],
         [("y", ((qa.astype(np.float32) - zps.reshape(1, 3, 1)) * scales.reshape(1, 3, 1)).astype(np.float32))])

    # Equal: strings
    a = np.array([["ab", "c", ""], ["x", "yz", "c"]], dtype=object)
    b = np.array(["ab", "yz", ""], dtype=object)
    case("Equal", O, "string_broadcast", helper.make_node("Equal", ["a", "b"], ["c"]), [("a", a), ("b", b)],
         [("c", a == b)])
    fa, fb = rand((3, 4), np.int32), rand((3, 4), np.int32)
    fb[0] = fa[0]
    case("Equal", O, "int32", helper.make_node("Equal", ["a", "b"], ["c"]), [("a", fa), ("b", fb)], [("c", fa == fb)])

    # Identity, Reshape, Shape, Size
    x = rand((2, 3, 4))
    case("Identity", O, "float", helper.make_node("Identity", ["x"], ["y"]), [("x", x)], [("y", x)])
    case("Reshape", O, "infer_dim", helper.make_node("Reshape", ["x", "s"], ["y"]),
         [("x", x), ("s", np.array([4, -1], np.int64))], [("y", x.reshape(4, -1))])
    case("Reshape", O, "allowzero", helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1),
         [("x", np.zeros((0, 3), np.float32)), ("s", np.array([3, 0], np.int64))], [("y", np.zeros((3, 0), np.float32))])
    case("Shape", O, "start_end", helper.make_node("Shape", ["x"], ["y"], start=1, end=-1), [("x", x)],
         [("y", np.array([3], np.int64))])
    case("Shape", O, "full", helper.make_node("Shape", ["x"], ["y"]), [("x", x)], [("y", np.array(x.shape, np.int64))])
    case("Size", O, "float", helper.make_node("Size", ["x"], ["y"]), [("x", x)], [("y", np.array(24, np.int64))])

    # If, Loop, Scan
    x = rand((3,))
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3])])
    for flag in (True, False):
        case("If", O, "then" if flag else "else",
             helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
             [("cond", np.array(flag)), ("x", x)], [("y", -x if flag else np.abs(x))])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["acc_in", "x"], ["acc_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [3])])
    acc = np.zeros((3,), np.float32)
    case("Loop", O, "trip_count", helper.make_node("Loop", ["m", "", "acc"], ["y"], body=body),
         [("m", np.array(4, np.int64)), ("acc", acc), ("x", x)], [("y", (acc + 4 * x).astype(np.float32))])
    scan_body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "v"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["scan_out"])],
        "scan_body",
        [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2])])
    seq = rand((4, 2))
    init = np.zeros((2,), np.float32)
    cums = np.cumsum(seq, axis=0).astype(np.float32)
    case("Scan", O, "cumulative_sum", helper.make_node("Scan", ["init", "seq"], ["final", "all"], body=scan_body,
                                                       num_scan_inputs=1),
         [("init", init), ("seq", seq)], [("final", cums[-1]), ("all", cums)])

    # Pad: wrap
    x = rand((3, 4, 5))
    for variant, pads, axes in (("wrap_all", [1, 2, 0, 2, 1, 3], None), ("wrap_axes", [2, 3], [2]),
                                ("wrap_negative_axis", [1, 1], [-2]), ("wrap_larger_than_axis", [0, 5, 0, 0, 6, 0], None)):
        inputs = [("x", x), ("pads", np.array(pads, np.int64))]
        names = ["x", "pads"]
        if axes is not None:
            names += ["", "axes"]
            inputs.append(("axes", np.array(axes, np.int64)))
        case("Pad", O, variant, helper.make_node("Pad", names, ["y"], mode="wrap"), inputs,
             [("y", ref_pad(x, pads, "wrap", 0, axes))])
    case("Pad", O, "reflect_still", helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect"),
         [("x", x), ("pads", np.array([0, 1, 1, 0, 2, 1], np.int64))],
         [("y", ref_pad(x, [0, 1, 1, 0, 2, 1], "reflect", 0, None))])

    # Resize: half_pixel_symmetric
    x = rand((1, 1, 4, 5))
    for variant, scales, mode in (("symmetric_linear_up", [1, 1, 1.7, 2.3], "linear"),
                                  ("symmetric_linear_down", [1, 1, 0.6, 0.5], "linear"),
                                  ("symmetric_nearest_up", [1, 1, 2.5, 1.5], "nearest")):
        case("Resize", O, variant,
             helper.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode,
                              coordinate_transformation_mode="half_pixel_symmetric"),
             [("x", x), ("scales", np.array(scales, np.float32))], [("y", ref_resize_symmetric(x, scales, mode))])
    case("Resize", O, "half_pixel_still", helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear"),
         [("x", x), ("scales", np.array([1, 1, 2, 2], np.float32))],
         [("y", ref_resize(x, [1, 1, 2, 2], [1, 1, 8, 10], "linear"))])


# ---- opset 20 -----------------------------------------------------------------------------------------

def ref_affine_grid(theta, size, align_corners):
    n = len(size) - 2
    axes = []
    for s in size[2:]:
        if align_corners:
            axes.append(np.linspace(-1, 1, s))
        else:
            axes.append((np.arange(s) * 2 + 1) / s - 1)
    mesh = np.meshgrid(*axes, indexing="ij")  # (D,) H, W
    coords = [m.reshape(-1) for m in reversed(mesh)]  # x, y(, z)
    base = np.stack(coords + [np.ones_like(coords[0])], axis=0)  # [n + 1, points]
    out = np.einsum("bij,jp->bpi", theta.astype(np.float64), base)
    return out.reshape((size[0],) + tuple(size[2:]) + (n,)).astype(theta.dtype)


def ref_dft(x, length, axis, inverse, onesided):
    c = x[..., 0] + 1j * x[..., 1] if x.shape[-1] == 2 else x[..., 0].astype(np.complex128)
    axis = axis % x.ndim
    if length is None:
        length = c.shape[axis]
    if inverse:
        r = np.fft.ifft(c, n=length, axis=axis)
    else:
        r = np.fft.fft(c, n=length, axis=axis)
    if onesided:
        r = np.take(r, range(length // 2 + 1), axis=axis)
    return np.stack([r.real, r.imag], axis=-1).astype(x.dtype)


def ref_grid_sample_cubic(x, grid, align_corners):
    """2-D bicubic GridSample with zeros padding (cubic coefficient a = -0.75), as PyTorch computes it."""
    N, C, H, W = x.shape
    _, HO, WO, _ = grid.shape

    def coeffs(t, a=-0.75):
        def near(d):
            return ((a + 2) * d - (a + 3)) * d * d + 1

        def far(d):
            return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        return [far(t + 1), near(t), near(1 - t), far(2 - t)]

    def unnorm(g, size):
        return (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2

    y = np.zeros((N, C, HO, WO))
    for n in range(N):
        for i in range(HO):
            for j in range(WO):
                px, py = unnorm(float(grid[n, i, j, 0]), W), unnorm(float(grid[n, i, j, 1]), H)
                x0, y0 = int(np.floor(px)), int(np.floor(py))
                cx, cy = coeffs(px - x0), coeffs(py - y0)
                for a in range(4):
                    for b in range(4):
                        yy, xx = y0 - 1 + a, x0 - 1 + b
                        if 0 <= yy < H and 0 <= xx < W:
                            y[n, :, i, j] += cy[a] * cx[b] * x[n, :, yy, xx]
    return y.astype(x.dtype)


def ref_grid_sample(x, grid, mode, padding_mode, align_corners):
    """N-d GridSample as PyTorch computes it (which the ONNX operator follows): linear and nearest pad the
    sample point (border: clamp; reflection: mirror), cubic pads each of its 4 taps per axis; zeros padding
    leaves taps outside X out."""
    N, C = x.shape[:2]
    dims = x.shape[2:]
    r = len(dims)
    out_dims = grid.shape[1:-1]

    def unnorm(g, size):
        return (g + 1) / 2 * (size - 1) if align_corners else ((g + 1) * size - 1) / 2

    def reflect(v, twice_low, twice_high):
        if twice_low == twice_high:
            return 0.0
        lo, span = twice_low / 2, (twice_high - twice_low) / 2
        v = abs(v - lo)
        extra = np.fmod(v, span)
        flips = np.floor(v / span)
        return extra + lo if flips % 2 == 0 else span - extra + lo

    def pad(v, size):
        if padding_mode == "border":
            return min(max(v, 0), size - 1)
        if padding_mode == "reflection":
            v = reflect(v, 0, 2 * (size - 1)) if align_corners else reflect(v, -1, 2 * size - 1)
            return min(max(v, 0), size - 1)
        return v

    def cubic(t, a=-0.75):
        def near(d):
            return ((a + 2) * d - (a + 3)) * d * d + 1

        def far(d):
            return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
        return [far(t + 1), near(t), near(1 - t), far(2 - t)]

    y = np.zeros((N, C) + tuple(out_dims))
    for n in range(N):
        for o in np.ndindex(*out_dims):
            per_axis = []
            for a in range(r):
                v = unnorm(float(grid[(n,) + o + (r - 1 - a,)]), dims[a])
                if mode == "cubic":
                    v0 = np.floor(v)
                    per_axis.append([(int(pad(v0 - 1 + i, dims[a])), w) for i, w in enumerate(cubic(v - v0))])
                else:
                    v = pad(v, dims[a])
                    if mode == "nearest":
                        per_axis.append([(int(np.rint(v)), 1.0)])
                    else:
                        v0 = np.floor(v)
                        per_axis.append([(int(v0), 1 - (v - v0)), (int(v0) + 1, v - v0)])
            for combo in itertools.product(*per_axis):
                if all(0 <= i < dims[a] for a, (i, _) in enumerate(combo)):
                    w = np.prod([w for _, w in combo])
                    y[(n, slice(None)) + o] += w * x[(n, slice(None)) + tuple(i for i, _ in combo)]
    return y.astype(x.dtype)


def png_bytes(image, color_type=2, bit_depth=8, palette=None):
    """A minimal PNG (no filter) of image: [H, W, channels] samples of color_type (0 grey, 2 RGB, 3 palette
    indices with palette [N, 3], 4 grey+alpha, 6 RGBA) at bit_depth 8 or 16 (big-endian samples)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    h, w = image.shape[:2]
    samples = image.astype(">u2" if bit_depth == 16 else np.uint8)
    raw = b"".join(b"\x00" + samples[r].tobytes() for r in range(h))
    plte = chunk(b"PLTE", palette.astype(np.uint8).tobytes()) if palette is not None else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 0)) +
            plte + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def jpeg_bytes(levels, height, width):
    """A baseline JPEG (no subsampling) of height x width pixels whose 8x8 blocks are flat: levels is
    [rows of blocks, columns of blocks, components] of sample levels (1 component: grey, 3: YCbCr). Every
    block holds only its DC coefficient (quantiser 1, DC = 8 * (level - 128)), so any conforming decoder's
    IDCT gives the level exactly; the Huffman tables are minimal (DC: 12 categories of 4-bit codes, AC:
    EOB only)."""
    import struct
    by, bx, nc = levels.shape
    assert by == (height + 7) // 8 and bx == (width + 7) // 8

    def segment(marker, payload):
        return b"\xff" + bytes([marker]) + struct.pack(">H", len(payload) + 2) + payload
    bits = []

    def put(value, n):
        bits.extend((value >> (n - 1 - i)) & 1 for i in range(n))
    predictions = [0] * nc
    for r in range(by):
        for c in range(bx):
            for k in range(nc):
                dc = 8 * (int(levels[r, c, k]) - 128)
                diff, predictions[k] = dc - predictions[k], dc
                size = abs(diff).bit_length()
                put(size, 4)  # the DC category's 4-bit code
                if size:
                    put(diff if diff > 0 else diff + (1 << size) - 1, size)
                put(0, 1)  # EOB, the AC table's only code
    bits.extend([1] * (-len(bits) % 8))
    data = bytearray()
    for i in range(0, len(bits), 8):
        byte = int("".join(map(str, bits[i:i + 8])), 2)
        data.append(byte)
        if byte == 0xFF:
            data.append(0)  # byte stuffing
    components = b"".join(bytes([k + 1, 0x11, 0]) for k in range(nc))
    dc_table = bytes([0x00]) + bytes([0, 0, 0, 12] + [0] * 12) + bytes(range(12))
    ac_table = bytes([0x10]) + bytes([1] + [0] * 15) + bytes([0])
    return (b"\xff\xd8" + segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00") +
            segment(0xDB, bytes([0]) + bytes([1] * 64)) +
            segment(0xC0, struct.pack(">BHHB", 8, height, width, nc) + components) +
            segment(0xC4, dc_table) + segment(0xC4, ac_table) +
            segment(0xDA, bytes([nc]) + b"".join(bytes([k + 1, 0]) for k in range(nc)) + bytes([0, 63, 0])) +
            bytes(data) + b"\xff\xd9")


def ref_jpeg_rgb(levels, height, width):
    """libjpeg's YCbCr -> RGB (jdcolor.c: 16-bit fixed point tables, FIX(x) = int(x * 65536 + 0.5),
    arithmetic right shifts) of flat-block levels, cropped to the image; grey levels are replicated."""
    px = np.repeat(np.repeat(levels.astype(np.int64), 8, axis=0), 8, axis=1)[:height, :width]
    if px.shape[2] == 1:
        return np.repeat(px, 3, axis=2).astype(np.uint8)
    y, cb, cr = px[..., 0], px[..., 1] - 128, px[..., 2] - 128
    fix = lambda x: int(x * 65536 + 0.5)  # noqa: E731
    half = 1 << 15
    r = y + ((fix(1.40200) * cr + half) >> 16)
    g = y + ((-fix(0.34414) * cb + -fix(0.71414) * cr + half) >> 16)
    b = y + ((fix(1.77200) * cb + half) >> 16)
    return np.clip(np.stack([r, g, b], axis=2), 0, 255).astype(np.uint8)


def ref_luma(rgb):
    """Pillow's convert('L') (libImaging/Convert.c L24: ITU-R 601-2 weights in 16-bit fixed point, rounded)."""
    v = rgb.astype(np.int64)
    return ((v[..., 0] * 19595 + v[..., 1] * 38470 + v[..., 2] * 7471 + 0x8000) >> 16).astype(np.uint8)[..., None]


def image_decoder_cases(O):
    rng = np.random.default_rng(20)  # its own generator: the other cases' data stays as it was

    def decoder(**attrs):
        return helper.make_node("ImageDecoder", ["s"], ["y"], **attrs)

    def stream(data):
        return [("s", np.frombuffer(data, np.uint8).copy())]
    image = rng.integers(0, 256, size=(2, 3, 3)).astype(np.uint8)
    png = png_bytes(image)
    case("ImageDecoder", O, "png_rgb", decoder(), stream(png), [("y", image)])
    case("ImageDecoder", O, "png_bgr", decoder(pixel_format="BGR"), stream(png), [("y", image[..., ::-1])])
    case("ImageDecoder", O, "png_grayscale", decoder(pixel_format="Grayscale"), stream(png), [("y", ref_luma(image))])
    rgba = rng.integers(0, 256, size=(3, 4, 4)).astype(np.uint8)  # alpha dropped, not composited (Pillow)
    case("ImageDecoder", O, "png_rgba", decoder(), stream(png_bytes(rgba, color_type=6)), [("y", rgba[..., :3])])
    case("ImageDecoder", O, "png_rgba_grayscale", decoder(pixel_format="Grayscale"),
         stream(png_bytes(rgba, color_type=6)), [("y", ref_luma(rgba[..., :3]))])
    grey = rng.integers(0, 256, size=(3, 2, 1)).astype(np.uint8)
    case("ImageDecoder", O, "png_grey_source_rgb", decoder(), stream(png_bytes(grey, color_type=0)),
         [("y", np.repeat(grey, 3, axis=2))])
    case("ImageDecoder", O, "png_grey_source_grayscale", decoder(pixel_format="Grayscale"),
         stream(png_bytes(grey, color_type=0)), [("y", grey)])
    palette = rng.integers(0, 256, size=(5, 3)).astype(np.uint8)
    indices = rng.integers(0, 5, size=(2, 4, 1)).astype(np.uint8)
    case("ImageDecoder", O, "png_palette", decoder(), stream(png_bytes(indices, color_type=3, palette=palette)),
         [("y", palette[indices[..., 0]])])
    # 16-bit samples v * 257: every 16-to-8-bit reduction (high byte, rounded scaling) gives v
    case("ImageDecoder", O, "png_16bit", decoder(), stream(png_bytes(image.astype(np.uint16) * 257, bit_depth=16)),
         [("y", image)])
    # JPEG: flat 8x8 blocks (see jpeg_bytes), a size that is not a multiple of 8
    h, w = 13, 21
    ycc = rng.integers(16, 240, size=(2, 3, 3)).astype(np.uint8)
    jpeg, rgb = jpeg_bytes(ycc, h, w), ref_jpeg_rgb(ycc, h, w)
    case("ImageDecoder", O, "jpeg_rgb", decoder(pixel_format="RGB"), stream(jpeg), [("y", rgb)])
    case("ImageDecoder", O, "jpeg_bgr", decoder(pixel_format="BGR"), stream(jpeg), [("y", rgb[..., ::-1])])
    case("ImageDecoder", O, "jpeg_grayscale", decoder(pixel_format="Grayscale"), stream(jpeg), [("y", ref_luma(rgb))])
    grey_levels = rng.integers(0, 256, size=(2, 3, 1)).astype(np.uint8)
    case("ImageDecoder", O, "jpeg_grey_source_rgb", decoder(), stream(jpeg_bytes(grey_levels, h, w)),
         [("y", ref_jpeg_rgb(grey_levels, h, w))])


def opset20():
    O = 20
    # AffineGrid
    for variant, size, align in (("2d", [2, 3, 4, 5], 0), ("2d_align_corners", [1, 1, 3, 4], 1),
                                 ("3d", [1, 2, 3, 2, 4], 0), ("3d_align_corners", [2, 1, 2, 3, 2], 1)):
        n = len(size) - 2
        theta = rand((size[0], n, n + 1), low=-1, high=1)
        case("AffineGrid", O, variant, helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align),
             [("theta", theta), ("size", np.array(size, np.int64))], [("grid", ref_affine_grid(theta, size, align))])

    # ConstantOfShape
    case("ConstantOfShape", O, "int32", helper.make_node("ConstantOfShape", ["s"], ["y"],
                                                         value=numpy_helper.from_array(np.array([7], np.int32))),
         [("s", np.array([2, 3], np.int64))], [("y", np.full((2, 3), 7, np.int32))])
    case("ConstantOfShape", O, "default_float", helper.make_node("ConstantOfShape", ["s"], ["y"]),
         [("s", np.array([4], np.int64))], [("y", np.zeros((4,), np.float32))])

    # DFT: dft_length and axis as inputs
    xr = rand((2, 6, 5, 1))
    xc = rand((3, 8, 2))
    for variant, x, length, axis, inverse, onesided in (
            ("default_axis", xc, None, None, 0, 0), ("axis_input_1", xr, None, 1, 0, 0),
            ("axis_input_2_length", xr, 7, 2, 0, 0), ("negative_axis_onesided", xr, None, -3, 0, 1),
            ("inverse_length", xc, 5, -2, 1, 0), ("axis_0", xc, None, 0, 0, 0)):
        names, inputs = ["x"], [("x", x)]
        if length is not None:
            names.append("len")
            inputs.append(("len", np.array(length, np.int64)))
        if axis is not None:
            if length is None:
                names.append("")
            names.append("axis")
            inputs.append(("axis", np.array(axis, np.int64)))
        attrs = {}
        if inverse:
            attrs["inverse"] = 1
        if onesided:
            attrs["onesided"] = 1
        case("DFT", O, variant, helper.make_node("DFT", names, ["y"], **attrs), inputs,
             [("y", ref_dft(x, length, -2 if axis is None else axis, inverse, onesided))])

    # Gelu
    from math import erf
    x = rand((4, 257), low=-6, high=6)
    xd = x.astype(np.float64)
    exact = 0.5 * xd * (1 + np.vectorize(erf)(xd / np.sqrt(2)))
    approx = 0.5 * xd * (1 + np.tanh(np.sqrt(2 / np.pi) * (xd + 0.044715 * xd ** 3)))
    case("Gelu", O, "default", helper.make_node("Gelu", ["x"], ["y"]), [("x", x)], [("y", exact.astype(np.float32))])
    case("Gelu", O, "none", helper.make_node("Gelu", ["x"], ["y"], approximate="none"), [("x", x)],
         [("y", exact.astype(np.float32))])
    case("Gelu", O, "tanh", helper.make_node("Gelu", ["x"], ["y"], approximate="tanh"), [("x", x)],
         [("y", approx.astype(np.float32))])
    case("Gelu", O, "tanh_double", helper.make_node("Gelu", ["x"], ["y"], approximate="tanh"), [("x", xd)],
         [("y", approx)])
    case("Gelu", O, "none_double", helper.make_node("Gelu", ["x"], ["y"]), [("x", xd)], [("y", exact)])

    # GridSample: onnx 1.12's 2-D cases (PyTorch's values) with opset 20's mode names
    from onnx.backend.test.case.node import gridsample as G
    captured = []
    original = G.expect
    G.expect = lambda node, inputs, outputs, name, **kw: captured.append((node, inputs, outputs, name))
    try:
        G.GridSample.export_gridsample_paddingmode()
        G.GridSample.export_gridsample_mode_aligncorners()
    finally:
        G.expect = original
    renamed = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}
    for node, inputs, outputs, name in captured:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        mode = attrs.get("mode", b"bilinear")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        attrs["mode"] = renamed[mode]
        for k in ("padding_mode",):
            if isinstance(attrs.get(k), bytes):
                attrs[k] = attrs[k].decode()
        variant = name.replace("test_gridsample_", "").replace("bilinear", "linear").replace("bicubic", "cubic")
        case("GridSample", O, variant, helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs),
             [("x", inputs[0]), ("grid", inputs[1])], [("y", outputs[0])])
    xg = rand((1, 2, 4, 5))
    gg = rand((1, 3, 2, 2), low=-1.1, high=1.1)
    for align in (0, 1):
        case("GridSample", O, f"cubic_zeros_align{align}",
             helper.make_node("GridSample", ["x", "grid"], ["y"], mode="cubic", align_corners=align),
             [("x", xg), ("grid", gg)], [("y", ref_grid_sample_cubic(xg, gg, align))])
    # N-d: 3-D volumes and 1-D signals
    x3 = rand((2, 2, 3, 4, 5))
    g3 = rand((2, 2, 3, 2, 3), low=-1.2, high=1.2)
    for mode, padding, align in (("linear", "zeros", 0), ("linear", "border", 1), ("nearest", "zeros", 0),
                                 ("nearest", "reflection", 1), ("linear", "reflection", 0), ("cubic", "zeros", 0),
                                 ("cubic", "border", 1)):
        case("GridSample", O, f"3d_{mode}_{padding}_align{align}",
             helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode=padding,
                              align_corners=align),
             [("x", x3), ("grid", g3)], [("y", ref_grid_sample(x3, g3, mode, padding, align))])
    x1 = rand((1, 3, 6))
    g1 = rand((1, 4, 1), low=-1.3, high=1.3)
    for mode in ("linear", "nearest", "cubic"):
        case("GridSample", O, f"1d_{mode}", helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode),
             [("x", x1), ("grid", g1)], [("y", ref_grid_sample(x1, g1, mode, "zeros", 0))])
    # The N-d reference agrees with onnx 1.12's PyTorch values on the 2-D cases.
    for node, inputs, outputs, name in captured:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        mode = renamed[(attrs.get("mode", b"bilinear")).decode()]
        padding = attrs.get("padding_mode", b"zeros").decode()
        got = ref_grid_sample(inputs[0], inputs[1], mode, padding, attrs.get("align_corners", 0))
        if not np.allclose(got, outputs[0], atol=1e-4):
            raise SystemExit(f"ref_grid_sample disagrees with onnx 1.12's {name}")

    image_decoder_cases(O)

    # IsInf, IsNaN
    x = np.array([[1.0, np.inf, -np.inf], [np.nan, -0.0, 3e38]], np.float32)
    case("IsInf", O, "float", helper.make_node("IsInf", ["x"], ["y"]), [("x", x)], [("y", np.isinf(x))])
    case("IsInf", O, "negative_only", helper.make_node("IsInf", ["x"], ["y"], detect_positive=0), [("x", x)],
         [("y", np.isneginf(x))])
    case("IsInf", O, "double_positive_only", helper.make_node("IsInf", ["x"], ["y"], detect_negative=0),
         [("x", x.astype(np.float64))], [("y", np.isposinf(x))])
    case("IsNaN", O, "float", helper.make_node("IsNaN", ["x"], ["y"]), [("x", x)], [("y", np.isnan(x))])
    case("IsNaN", O, "double", helper.make_node("IsNaN", ["x"], ["y"]), [("x", x.astype(np.float64))],
         [("y", np.isnan(x))])

    # ReduceMax, ReduceMin: bool
    xb = RNG.integers(0, 2, size=(3, 4)).astype(bool)
    xb[0] = True
    xb[1] = False
    for op, fn in (("ReduceMax", np.any), ("ReduceMin", np.all)):
        for variant, axes, keepdims in (("bool_axis1", [1], 0), ("bool_axis0_keepdims", [0], 1), ("bool_all", None, 0)):
            names, inputs = ["x"], [("x", xb)]
            if axes is not None:
                names.append("axes")
                inputs.append(("axes", np.array(axes, np.int64)))
            y = fn(xb, axis=tuple(axes) if axes else None, keepdims=bool(keepdims))
            case(op, O, variant, helper.make_node(op, names, ["y"], keepdims=keepdims), inputs, [("y", np.asarray(y))])
        xf = rand((3, 4))
        case(op, O, "float_resolves_to_20", helper.make_node(op, ["x", "axes"], ["y"], keepdims=0),
             [("x", xf), ("axes", np.array([1], np.int64))], [("y", ref_reduce(op, xf, [1], 0, 0))])

    # RegexFullMatch
    import re
    s = np.array([["www.google.com", "www.facebook.com"], ["www.bbc.co.uk", "google"]], dtype=object)
    for variant, pattern in (("domain", r"www\.[\w.-]+\.\bcom\b"), ("digits", r"[0-9]+"),
                             ("alternation", r"(google|bbc)(\..*)?")):
        data = s if variant != "digits" else np.array(["123", "12a", "", "0"], dtype=object)
        y = np.vectorize(lambda v: re.fullmatch(pattern, v) is not None, otypes=[bool])(data)
        case("RegexFullMatch", O, variant, helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern),
             [("x", data)], [("y", y)])

    # StringConcat
    a = np.array([["a", "bc"], ["", "d"]], dtype=object)
    b = np.array(["x", "yz"], dtype=object)
    case("StringConcat", O, "broadcast", helper.make_node("StringConcat", ["a", "b"], ["c"]), [("a", a), ("b", b)],
         [("c", np.array([[u + v for u, v in zip(r, b)] for r in a], dtype=object))])
    u = np.array(["héllo", "wörld"], dtype=object)
    case("StringConcat", O, "utf8_same_shape", helper.make_node("StringConcat", ["a", "b"], ["c"]), [("a", u), ("b", u)],
         [("c", np.array([v + v for v in u], dtype=object))])

    # StringSplit
    def ref_split(x, delimiter, maxsplit):
        parts = [v.split(delimiter if delimiter else None, -1 if maxsplit is None else maxsplit) for v in x.reshape(-1)]
        width = max([len(p) for p in parts] + [0])
        y = np.array([p + [""] * (width - len(p)) for p in parts], dtype=object).reshape(x.shape + (width,))
        z = np.array([len(p) for p in parts], np.int64).reshape(x.shape)
        return y, z
    for variant, data, attrs in (
            ("delimiter", np.array(["a,b,c", "d", "e,,f"], dtype=object), {"delimiter": ","}),
            ("whitespace", np.array([["  one two  ", "three"], ["", "four\tfive six"]], dtype=object), {}),
            ("maxsplit", np.array(["a-b-c-d", "x-y"], dtype=object), {"delimiter": "-", "maxsplit": 2}),
            ("multichar_delimiter", np.array(["1<>2<>3", "<>"], dtype=object), {"delimiter": "<>"}),
            ("whitespace_maxsplit", np.array(["a b  c d ", " e"], dtype=object), {"maxsplit": 1})):
        y, z = ref_split(data, attrs.get("delimiter"), attrs.get("maxsplit"))
        case("StringSplit", O, variant, helper.make_node("StringSplit", ["x"], ["y", "z"], **attrs), [("x", data)],
             [("y", y), ("z", z)])


# ---- older semantics the CPU plugin got wrong ------------------------------------------------------------

def legacy():
    # PRelu-6 and earlier: a slope [C] per channel of X [N, C, ...] (before numpy broadcasting)
    x = rand((2, 3, 4, 5))
    slope = rand((3,), low=0, high=1)
    for opset in (1, 6):
        attrs = {"consumed_inputs": [0, 0]} if opset == 1 else {}
        case("PRelu", opset, "slope_per_channel", helper.make_node("PRelu", ["x", "slope"], ["y"], **attrs),
             [("x", x), ("slope", slope)], [("y", np.where(x < 0, x * slope.reshape(3, 1, 1), x))])
    last = rand((5,), low=0, high=1)  # from opset 7 on, [5] broadcasts along the last axis
    case("PRelu", 7, "slope_broadcast_last_axis", helper.make_node("PRelu", ["x", "slope"], ["y"]),
         [("x", x), ("slope", last)], [("y", np.where(x < 0, x * last, x))])
    # Pow with a float base and an integer exponent tensor (opset 12 on: the types may differ)
    base = rand((3, 4), low=0.5, high=2)
    for opset, etype in ((12, np.int64), (15, np.int32), (15, np.int64)):
        e = RNG.integers(-3, 4, size=(4,)).astype(etype)
        case("Pow", opset, f"float_base_{np.dtype(etype).name}_exponent", helper.make_node("Pow", ["x", "e"], ["y"]),
             [("x", base), ("e", e)], [("y", np.power(base, e.astype(np.float32)).astype(np.float32))])
    bd = base.astype(np.float64)
    e = np.array([2, -1, 0, 3], np.int64)
    case("Pow", 15, "double_base_int64_exponent", helper.make_node("Pow", ["x", "e"], ["y"]), [("x", bd), ("e", e)],
         [("y", np.power(bd, e.astype(np.float64)))])


# ---- opsets 21 to 26 -------------------------------------------------------------------------------------

def ref_group_norm_21(x, scale, bias, groups, eps):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1).astype(np.float64)
    mean = g.mean(axis=2, keepdims=True)
    var = ((g - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((g - mean) / np.sqrt(var + eps)).reshape(n, c, -1)
    y = y * scale.reshape(1, c, 1) + bias.reshape(1, c, 1)
    return y.reshape(x.shape).astype(x.dtype)


def scale_index_array(x_shape, scale, axis, block_size):
    """The scale broadcast to x's shape: per tensor, per axis or blocked."""
    if scale.size == 1 and block_size == 0:
        return np.broadcast_to(scale.reshape(()), x_shape)
    axis = axis % len(x_shape)
    if block_size == 0:
        shape = [1] * len(x_shape)
        shape[axis] = x_shape[axis]
        return np.broadcast_to(scale.reshape(shape), x_shape)
    return np.repeat(scale, block_size, axis=axis).take(range(x_shape[axis]), axis=axis)


def ref_dequantize(x, scale, zp, axis=1, block_size=0):
    s = scale_index_array(x.shape, scale, axis, block_size).astype(np.float32)
    z = 0 if zp is None else scale_index_array(x.shape, zp, axis, block_size).astype(np.int64)
    return ((x.astype(np.int64) - z) * s).astype(np.float32)


def ref_quantize(x, scale, zp, out_dtype, axis=1, block_size=0):
    s = scale_index_array(x.shape, scale, axis, block_size).astype(np.float32)
    z = 0 if zp is None else scale_index_array(x.shape, zp, axis, block_size).astype(np.float32)
    info = np.iinfo(out_dtype)
    v = np.rint(x / s) + z  # numpy's rint rounds half to even
    return np.clip(v, info.min, info.max).astype(out_dtype)


def opset21():
    O = 21
    # GroupNormalization: scale and bias per channel
    for variant, shape, groups, eps, dtype in (("4d", (2, 6, 3, 4), 3, None, np.float32),
                                               ("groups_equal_channels", (1, 4, 5), 4, None, np.float32),
                                               ("one_group_epsilon", (2, 3, 2, 2, 2), 1, 1e-2, np.float32),
                                               ("double", (2, 4, 6), 2, None, np.float64)):
        x = rand(shape, dtype)
        scale, bias = rand((shape[1],), dtype), rand((shape[1],), dtype)
        attrs = {"num_groups": groups}
        if eps is not None:
            attrs["epsilon"] = eps
        if variant == "4d":
            attrs["stash_type"] = 1
        case("GroupNormalization", O, variant,
             helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], **attrs),
             [("x", x), ("scale", scale), ("bias", bias)],
             [("y", ref_group_norm_21(x, scale, bias, groups, 1e-5 if eps is None else eps))])

    # DequantizeLinear: per tensor, per axis, blocked (block_size)
    for variant, xdtype, shape, scale_shape, axis, block, with_zp in (
            ("per_tensor_uint8", np.uint8, (3, 4), (), 1, 0, True),
            ("per_axis_int8", np.int8, (2, 3, 4), (3,), 1, 0, True),
            ("blocked_int8_axis1", np.int8, (3, 8), (3, 4), 1, 2, True),
            ("blocked_uint16_axis0_ragged", np.uint16, (7, 3), (3, 3), 0, 3, True),
            ("blocked_int16_no_zero_point", np.int16, (2, 6, 2), (2, 2, 2), -2, 4, False),
            ("int32_per_tensor", np.int32, (5,), (), 0, 0, False)):
        x = rand(shape, xdtype)
        scale = rand(scale_shape, np.float32, 0.01, 0.5)
        zp = rand(scale_shape, xdtype) if with_zp else None
        names = ["x", "scale"] + (["zp"] if with_zp else [])
        inputs = [("x", x), ("scale", scale)] + ([("zp", zp)] if with_zp else [])
        attrs = {"axis": axis}
        if block:
            attrs["block_size"] = block
        case("DequantizeLinear", O, variant, helper.make_node("DequantizeLinear", names, ["y"], **attrs), inputs,
             [("y", ref_dequantize(x, scale, zp, axis, block))])

    # QuantizeLinear: blocked, output_dtype, 16-bit
    for variant, odtype, shape, scale_shape, axis, block, with_zp, output_dtype in (
            ("per_tensor_int8", np.int8, (3, 4), (), 1, 0, True, 0),
            ("blocked_uint8_axis1", np.uint8, (2, 6), (2, 3), 1, 2, True, 0),
            ("blocked_int8_axis0_ragged", np.int8, (5, 2), (2, 2), 0, 3, True, 0),
            ("output_dtype_int16", np.int16, (4, 3), (3,), 1, 0, False, TensorProto.INT16),
            ("per_axis_uint16", np.uint16, (2, 3), (3,), -1, 0, True, 0),
            ("no_zero_point_uint8", np.uint8, (6,), (), 0, 0, False, 0)):
        x = rand(shape, np.float32, -40, 40)
        scale = rand(scale_shape, np.float32, 0.05, 0.5)
        zp = rand(scale_shape, odtype) if with_zp else None
        if zp is not None:
            zp = (zp % 16).astype(odtype)
        names = ["x", "scale"] + (["zp"] if with_zp else [])
        inputs = [("x", x), ("scale", scale)] + ([("zp", zp)] if with_zp else [])
        attrs = {"axis": axis}
        if block:
            attrs["block_size"] = block
        if output_dtype:
            attrs["output_dtype"] = output_dtype
        case("QuantizeLinear", O, variant, helper.make_node("QuantizeLinear", names, ["y"], **attrs), inputs,
             [("y", ref_quantize(x, scale, zp, odtype, axis, block))])

    # QLinearMatMul-21 (more types only): uint8
    a = rand((2, 3), np.uint8) % 50
    b = rand((3, 4), np.uint8) % 50
    sa, sb, sy = np.array(0.1, np.float32), np.array(0.2, np.float32), np.array(0.5, np.float32)
    za, zb, zy = np.array(3, np.uint8), np.array(5, np.uint8), np.array(10, np.uint8)
    acc = (a.astype(np.int64) - 3) @ (b.astype(np.int64) - 5)
    y = np.clip(np.rint(acc * (0.1 * 0.2 / 0.5)) + 10, 0, 255).astype(np.uint8)
    case("QLinearMatMul", O, "uint8", helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"],
                                                       ["y"]),
         [("a", a), ("sa", sa), ("za", za), ("b", b), ("sb", sb), ("zb", zb), ("sy", sy), ("zy", zy)], [("y", y)])


def shape_and_cast_cases(opset):
    """The shape and cast operators whose version at `opset` only adds element types."""
    x = rand((2, 3, 4))
    case("Cast", opset, "float_to_int32", helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32),
         [("x", x)], [("y", x.astype(np.int32))])
    case("CastLike", opset, "float_to_double", helper.make_node("CastLike", ["x", "t"], ["y"]),
         [("x", x), ("t", np.zeros((1,), np.float64))], [("y", x.astype(np.float64))])
    case("Reshape", opset, "basic", helper.make_node("Reshape", ["x", "s"], ["y"]),
         [("x", x), ("s", np.array([4, -1], np.int64))], [("y", x.reshape(4, -1))])
    case("Transpose", opset, "perm", helper.make_node("Transpose", ["x"], ["y"], perm=[2, 0, 1]),
         [("x", x)], [("y", x.transpose(2, 0, 1))])
    case("Flatten", opset, "axis2", helper.make_node("Flatten", ["x"], ["y"], axis=2), [("x", x)],
         [("y", x.reshape(6, 4))])
    case("Unsqueeze", opset, "axes", helper.make_node("Unsqueeze", ["x", "a"], ["y"]),
         [("x", x), ("a", np.array([0, -1], np.int64))], [("y", x.reshape(1, 2, 3, 4, 1))])
    xs = rand((2, 1, 3))
    case("Squeeze", opset, "axes", helper.make_node("Squeeze", ["x", "a"], ["y"]),
         [("x", xs), ("a", np.array([1], np.int64))], [("y", xs.reshape(2, 3))])
    case("Identity", opset, "basic", helper.make_node("Identity", ["x"], ["y"]), [("x", x)], [("y", x)])
    case("Shape", opset, "start_end", helper.make_node("Shape", ["x"], ["y"], start=1, end=-1), [("x", x)],
         [("y", np.array([3], np.int64))])
    case("Size", opset, "basic", helper.make_node("Size", ["x"], ["y"]), [("x", x)], [("y", np.array(24, np.int64))])
    case("ConstantOfShape", opset, "int64", helper.make_node(
        "ConstantOfShape", ["s"], ["y"], value=numpy_helper.from_array(np.array([5], np.int64))),
        [("s", np.array([2, 2], np.int64))], [("y", np.full((2, 2), 5, np.int64))])
    case("Pad", opset, "edge_axes", helper.make_node("Pad", ["x", "p", "", "axes"], ["y"], mode="edge"),
         [("x", x), ("p", np.array([1, 2], np.int64)), ("axes", np.array([2], np.int64))],
         [("y", np.pad(x, [(0, 0), (0, 0), (1, 2)], mode="edge"))])
    case("Constant", opset, "tensor", helper.make_node("Constant", [], ["y"], value=numpy_helper.from_array(x[0])),
         [], [("y", x[0])])


def opset22():
    O = 22
    x = rand((2, 3, 5, 5))
    w = rand((4, 3, 3, 3))
    y = np.zeros((2, 4, 3, 3), np.float32)
    for i in range(3):
        for j in range(3):
            y[:, :, i, j] = np.einsum("nchw,ochw->no", x[:, :, i:i + 3, j:j + 3], w)
    case("Conv", O, "valid", helper.make_node("Conv", ["x", "w"], ["y"]), [("x", x), ("w", w)], [("y", y)])
    case("MaxPool", O, "2x2", helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
         [("x", x)], [("y", x[:, :, :4, :4].reshape(2, 3, 2, 2, 2, 2).max(axis=(3, 5)))])
    v = rand((3, 4), low=-1, high=1)
    for op, f in (("Sin", np.sin), ("Cos", np.cos), ("Softplus", lambda a: np.log1p(np.exp(a))),
                  ("Softsign", lambda a: a / (1 + np.abs(a))), ("Round", np.round),
                  ("HardSwish", lambda a: a * np.clip(a / 6 + 0.5, 0, 1))):
        case(op, O, "float", helper.make_node(op, ["x"], ["y"]), [("x", v)], [("y", f(v).astype(np.float32))])


def ref_rms_norm(x, scale, axis=-1, eps=1e-5):
    axis = axis % x.ndim
    ms = np.mean(np.square(x.astype(np.float64)), axis=tuple(range(axis, x.ndim)), keepdims=True)
    return (x / np.sqrt(ms + eps) * scale).astype(x.dtype)


def ref_rotary(x, cos, sin, position_ids=None, interleaved=0, rotary_dim=0, num_heads=0):
    shape = x.shape
    if x.ndim == 4:
        x = x.transpose(0, 2, 1, 3)  # [batch, seq, heads, head]
    else:
        x = x.reshape(shape[0], shape[1], num_heads, -1)
    head = x.shape[3]
    rd = rotary_dim or head
    if position_ids is not None:
        cos, sin = cos[position_ids], sin[position_ids]
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]
    rot, rest = x[..., :rd], x[..., rd:]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., :rd // 2], rot[..., rd // 2:]
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    if interleaved:
        rot = np.stack([real, imag], axis=-1).reshape(rot.shape)
    else:
        rot = np.concatenate([real, imag], axis=-1)
    y = np.concatenate([rot, rest], axis=-1)
    y = y.transpose(0, 2, 1, 3) if len(shape) == 4 else y.reshape(shape)
    return y.astype(np.float32)


def ref_attention(q, k, v, mask=None, past_k=None, past_v=None, nonpad=None, scale=None, is_causal=0,
                  q_heads=None, kv_heads=None, softcap=0.0, mode=None):
    """Attention-23/24 from the specification: Y, present_key, present_value, qk_matmul_output."""
    three_d = q.ndim == 3
    if three_d:
        def split(t, h):
            return t.reshape(t.shape[0], t.shape[1], h, -1).transpose(0, 2, 1, 3)
        q, k, v = split(q, q_heads), split(k, kv_heads), split(v, kv_heads)
    q, k, v = q.astype(np.float64), k.astype(np.float64), v.astype(np.float64)
    past = 0 if past_k is None else past_k.shape[2]
    if past_k is not None:
        k = np.concatenate([past_k, k], axis=2)
        v = np.concatenate([past_v, v], axis=2)
    b, hq, sq, hd = q.shape
    total = k.shape[2]
    group = hq // k.shape[1]
    kk, vv = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    if scale is None:
        scale = 1 / np.sqrt(hd)
    qk = q @ kk.transpose(0, 1, 3, 2) * scale
    scores = softcap * np.tanh(qk / softcap) if softcap > 0 else qk.copy()
    bias = np.zeros((b, hq, sq, total))
    if mask is not None:
        full = np.zeros(mask.shape[:-1] + (total,), np.float64) if mask.dtype != np.bool_ else \
            np.zeros(mask.shape[:-1] + (total,), np.bool_)
        full[..., :mask.shape[-1]] = mask
        if mask.dtype == np.bool_:
            bias = bias + np.where(full, 0, -np.inf)
        else:
            full[..., mask.shape[-1]:] = -np.inf
            bias = bias + full
    i = np.arange(sq).reshape(1, 1, sq, 1)
    j = np.arange(total).reshape(1, 1, 1, total)
    if is_causal:
        if past_k is None and nonpad is not None:
            offset = (nonpad - sq).reshape(b, 1, 1, 1)
        else:
            offset = past
        bias = bias + np.where(j <= i + offset, 0, -np.inf)
    if nonpad is not None:
        bias = bias + np.where(j < nonpad.reshape(b, 1, 1, 1), 0, -np.inf)
    masked = scores + bias
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    y = p @ vv
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    qk_out = {0: qk, 1: qk + bias, 2: masked, 3: p}.get(mode)
    f = np.float32
    return y.astype(f), k.astype(f), v.astype(f), None if qk_out is None else qk_out.astype(f)


def attention_cases(O):
    def add(variant, q, k, v, mask=None, past_k=None, past_v=None, nonpad=None, present=False, mode=None, **attrs):
        names, inputs = ["q", "k", "v"], [("q", q), ("k", k), ("v", v)]
        optional = [("mask", mask), ("past_k", past_k), ("past_v", past_v), ("nonpad", nonpad)]
        last = max([i for i, (_, a) in enumerate(optional) if a is not None], default=-1)
        for i in range(last + 1):
            n, a = optional[i]
            names.append(n if a is not None else "")
            if a is not None:
                inputs.append((n, a))
        y, pk, pv, qk = ref_attention(q, k, v, mask, past_k, past_v, nonpad, attrs.get("scale"),
                                      attrs.get("is_causal", 0), attrs.get("q_num_heads"), attrs.get("kv_num_heads"),
                                      attrs.get("softcap", 0.0), mode)
        outs, outputs = ["y"], [("y", y)]
        if present or mode is not None:
            outs += ["present_k", "present_v"]
            outputs += [("present_k", pk), ("present_v", pv)]
        if mode is not None:
            outs.append("qk")
            outputs.append(("qk", qk))
            attrs["qk_matmul_output_mode"] = mode
        case("Attention", O, variant, helper.make_node("Attention", names, outs, **attrs), inputs, outputs)

    r = lambda *s: rand(s, np.float32, -1, 1)  # noqa: E731
    add("4d", r(2, 3, 4, 8), r(2, 3, 6, 8), r(2, 3, 6, 8))
    add("4d_gqa", r(2, 6, 4, 8), r(2, 2, 6, 8), r(2, 2, 6, 8))
    add("4d_v_head_size", r(1, 2, 3, 4), r(1, 2, 5, 4), r(1, 2, 5, 6))
    add("3d_heads", r(2, 4, 16), r(2, 5, 16), r(2, 5, 8), q_num_heads=4, kv_num_heads=4)
    add("3d_gqa", r(2, 3, 24), r(2, 5, 8), r(2, 5, 8), q_num_heads=6, kv_num_heads=2)
    add("scale", r(1, 2, 3, 8), r(1, 2, 4, 8), r(1, 2, 4, 8), scale=0.3)
    add("causal", r(2, 2, 5, 4), r(2, 2, 5, 4), r(2, 2, 5, 4), is_causal=1)
    add("causal_with_past", r(1, 2, 2, 4), r(1, 2, 2, 4), r(1, 2, 2, 4), past_k=r(1, 2, 3, 4), past_v=r(1, 2, 3, 4),
        present=True, is_causal=1)
    add("past_present_gqa", r(2, 4, 1, 8), r(2, 2, 1, 8), r(2, 2, 1, 8), past_k=r(2, 2, 5, 8), past_v=r(2, 2, 5, 8),
        present=True)
    # Decoding reads the past where it lies (direct products); a larger query block concatenates it.
    add("decode_past_no_present", r(1, 4, 1, 8), r(1, 2, 1, 8), r(1, 2, 1, 8), past_k=r(1, 2, 6, 8),
        past_v=r(1, 2, 6, 8))
    add("prefill_past_no_present_gqa", r(1, 4, 5, 4), r(1, 2, 5, 4), r(1, 2, 5, 4), past_k=r(1, 2, 3, 4),
        past_v=r(1, 2, 3, 4), is_causal=1)
    add("bool_mask_2d", r(2, 2, 3, 4), r(2, 2, 5, 4), r(2, 2, 5, 4),
        mask=np.array([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1], [0, 1, 1, 1, 1]], np.bool_))
    add("float_mask_4d_broadcast", r(2, 3, 2, 4), r(2, 3, 4, 4), r(2, 3, 4, 4), mask=r(2, 1, 2, 4))
    add("softcap", r(1, 2, 3, 8), r(1, 2, 4, 8), r(1, 2, 4, 8), softcap=2.0, scale=2.0)
    add("softcap_causal_mask", r(1, 1, 4, 4), r(1, 1, 4, 4), r(1, 1, 4, 4), mask=r(4, 4), softcap=1.5, is_causal=1)
    add("qk_output_mode_0", r(1, 2, 3, 4), r(1, 2, 4, 4), r(1, 2, 4, 4), mode=0)
    add("qk_output_mode_3_mask", r(1, 2, 3, 4), r(1, 2, 4, 4), r(1, 2, 4, 4), mask=r(3, 4), mode=3)
    add("qk_output_mode_1_softcap", r(1, 2, 3, 4), r(1, 2, 4, 4), r(1, 2, 4, 4), mask=r(3, 4), softcap=1.0, mode=1)
    add("qk_output_mode_2_softcap_causal", r(1, 2, 3, 4), r(1, 2, 3, 4), r(1, 2, 3, 4), softcap=1.0, is_causal=1,
        mode=2)
    # An integer attn_mask (added to the scores) is not taken by the CPU plugin's kernel: these run the
    # function body the host registers for Attention, expanded into primitive operators.
    int_mask = lambda *s: (RNG.integers(0, 2, s) * -3).astype(np.int64)  # noqa: E731
    add("int_mask_function_body", r(2, 2, 3, 4), r(2, 2, 5, 4), r(2, 2, 5, 4), mask=int_mask(3, 5))
    add("int_mask_function_body_3d_gqa_causal_past", r(1, 2, 12), r(1, 2, 4), r(1, 2, 6), mask=int_mask(2, 5),
        past_k=r(1, 2, 3, 2), past_v=r(1, 2, 3, 3), is_causal=1, q_num_heads=6, kv_num_heads=2, mode=3)
    add("int_mask_function_body_softcap_scale_mode_1", r(1, 2, 3, 4), r(1, 2, 4, 4), r(1, 2, 4, 4),
        mask=int_mask(1, 2, 3, 4), softcap=1.5, scale=0.7, mode=1)
    if O >= 24:
        add("int_mask_function_body_nonpad_causal_short_mask", r(2, 2, 2, 4), r(2, 2, 6, 4), r(2, 2, 6, 4),
            mask=int_mask(2, 5), nonpad=np.array([4, 6], np.int64), is_causal=1, mode=2)
        add("nonpad_kv_seqlen", r(2, 2, 3, 4), r(2, 2, 6, 4), r(2, 2, 6, 4), nonpad=np.array([4, 6], np.int64))
        add("nonpad_causal", r(2, 2, 2, 4), r(2, 2, 6, 4), r(2, 2, 6, 4), nonpad=np.array([4, 6], np.int64),
            is_causal=1)
        add("short_bool_mask", r(1, 2, 3, 4), r(1, 2, 4, 4), r(1, 2, 4, 4), past_k=r(1, 2, 2, 4),
            past_v=r(1, 2, 2, 4), mask=np.array([[1, 0, 1, 1], [1, 1, 1, 0], [0, 1, 1, 1]], np.bool_))
        add("short_float_mask", r(1, 1, 2, 4), r(1, 1, 5, 4), r(1, 1, 5, 4), mask=r(2, 3))


def opset23():
    O = 23
    attention_cases(O)
    # RMSNormalization
    for variant, shape, axis, scale_shape, eps in (("last_axis", (2, 3, 8), -1, (8,), None),
                                                   ("axis_1_4d", (2, 3, 4, 5), 1, (3, 4, 5), None),
                                                   ("scale_broadcast", (3, 4, 6), 1, (1, 6), 1e-3),
                                                   ("2d_epsilon", (5, 16), -1, (16,), 1e-2)):
        x, scale = rand(shape), rand(scale_shape)
        attrs = {"axis": axis}
        if eps is not None:
            attrs["epsilon"] = eps
        case("RMSNormalization", O, variant, helper.make_node("RMSNormalization", ["x", "scale"], ["y"], **attrs),
             [("x", x), ("scale", scale)], [("y", ref_rms_norm(x, scale, axis, 1e-5 if eps is None else eps))])
    xd, sd = rand((2, 5), np.float64), rand((5,), np.float64)
    case("RMSNormalization", O, "double", helper.make_node("RMSNormalization", ["x", "scale"], ["y"]),
         [("x", xd), ("scale", sd)], [("y", ref_rms_norm(xd, sd))])
    # RotaryEmbedding
    angles = rand((10, 4), low=0, high=3)
    cos_t, sin_t = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    pos = RNG.integers(0, 10, size=(2, 3)).astype(np.int64)
    for variant, x, interleaved, rotary, heads, with_pos in (
            ("4d_position_ids", rand((2, 2, 3, 8)), 0, 0, 0, True),
            ("4d_interleaved", rand((2, 2, 3, 8)), 1, 0, 0, True),
            ("3d_num_heads", rand((2, 3, 16)), 0, 0, 2, True),
            ("partial_rotary_dim", rand((2, 3, 3, 12)), 0, 8, 0, True),
            ("partial_interleaved_3d", rand((2, 3, 24)), 1, 8, 2, True),
            ("caches_per_token", rand((2, 3, 2, 8)).transpose(0, 2, 1, 3).copy(), 0, 0, 0, False)):
        attrs = {}
        if interleaved:
            attrs["interleaved"] = 1
        if rotary:
            attrs["rotary_embedding_dim"] = rotary
        if heads:
            attrs["num_heads"] = heads
        if with_pos:
            c, s_ = cos_t, sin_t
            names, inputs = ["x", "cos", "sin", "pos"], [("x", x), ("cos", c), ("sin", s_), ("pos", pos)]
            y = ref_rotary(x, c, s_, pos, interleaved, rotary, heads)
        else:
            c, s_ = cos_t[pos], sin_t[pos]
            names, inputs = ["x", "cos", "sin"], [("x", x), ("cos", c), ("sin", s_)]
            y = ref_rotary(x, c, s_, None, interleaved, rotary, heads)
        case("RotaryEmbedding", O, variant, helper.make_node("RotaryEmbedding", names, ["y"], **attrs), inputs,
             [("y", y)])
    # QuantizeLinear-23 (precision), DequantizeLinear-23 (more types only)
    x = rand((3, 4), np.float32, -20, 20)
    scale = rand((3, 2), np.float32, 0.1, 0.5)
    zp = (rand((3, 2), np.int8) % 8).astype(np.int8)
    case("QuantizeLinear", O, "blocked_precision_float",
         helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["y"], axis=1, block_size=2,
                          precision=TensorProto.FLOAT),
         [("x", x), ("scale", scale), ("zp", zp)], [("y", ref_quantize(x, scale, zp, np.int8, 1, 2))])
    q = rand((3, 4), np.int8)
    case("DequantizeLinear", O, "blocked_int8", helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["y"],
                                                                  axis=1, block_size=2),
         [("x", q), ("scale", scale), ("zp", zp)], [("y", ref_dequantize(q, scale, zp, 1, 2))])
    shape_and_cast_cases(O)


def ref_tensor_scatter(cache, update, indices, axis, mode):
    out = cache.copy()
    axis = axis % cache.ndim
    if indices is None:
        indices = np.zeros(cache.shape[0], np.int64)
    for prefix in np.ndindex(*cache.shape[:axis]):
        for s in range(update.shape[axis]):
            at = indices[prefix[0]] + s
            if mode == "circular":
                at %= cache.shape[axis]
            out[prefix + (at,)] = update[prefix + (s,)]
    return out


def opset24():
    O = 24
    attention_cases(O)
    x = rand((3, 5))
    for variant, alpha in (("default", None), ("alpha", 1.7)):
        attrs = {} if alpha is None else {"alpha": alpha}
        a = 1.0 if alpha is None else alpha
        case("Swish", O, variant, helper.make_node("Swish", ["x"], ["y"], **attrs), [("x", x)],
             [("y", (x / (1 + np.exp(-a * x))).astype(np.float32))])
    # TensorScatter
    for variant, cache_shape, upd_seq, indices, axis, mode, dtype in (
            ("linear_4d", (2, 2, 6, 3), 2, [1, 4], -2, "linear", np.float32),
            ("circular_4d", (2, 2, 5, 3), 3, [3, 1], -2, "circular", np.float32),
            ("no_indices_3d_axis1", (2, 4, 3), 2, None, 1, "linear", np.float32),
            ("int64_axis_last", (3, 2, 5), 2, [0, 3, 2], -1, "linear", np.int64)):
        cache = rand(cache_shape, dtype)
        upd_shape = list(cache_shape)
        upd_shape[axis % len(cache_shape)] = upd_seq
        update = rand(tuple(upd_shape), dtype)
        names, inputs = ["cache", "update"], [("cache", cache), ("update", update)]
        idx = None
        if indices is not None:
            idx = np.array(indices, np.int64)
            names.append("idx")
            inputs.append(("idx", idx))
        case("TensorScatter", O, variant, helper.make_node("TensorScatter", names, ["y"], axis=axis, mode=mode),
             inputs, [("y", ref_tensor_scatter(cache, update, idx, axis, mode))])
    # TopK-24 (bfloat16 added): float
    t = rand((3, 6))
    order = np.argsort(-t, axis=1, kind="stable")[:, :3]
    case("TopK", O, "largest", helper.make_node("TopK", ["x", "k"], ["v", "i"]), [("x", t), ("k", np.array([3], np.int64))],
         [("v", np.take_along_axis(t, order, axis=1)), ("i", order.astype(np.int64))])
    # DequantizeLinear-24: output_dtype
    q = rand((2, 6), np.uint8)
    scale = rand((2, 3), np.float32, 0.1, 0.5)
    zp = rand((2, 3), np.uint8)
    case("DequantizeLinear", O, "blocked_output_dtype_float",
         helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["y"], axis=1, block_size=2,
                          output_dtype=TensorProto.FLOAT),
         [("x", q), ("scale", scale), ("zp", zp)], [("y", ref_dequantize(q, scale, zp, 1, 2))])
    x = rand((4,), np.float32, -10, 10)
    case("QuantizeLinear", O, "per_tensor_int8", helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"]),
         [("x", x), ("s", np.array(0.2, np.float32)), ("z", np.array(-3, np.int8))],
         [("y", ref_quantize(x, np.array(0.2, np.float32), np.array(-3, np.int8), np.int8))])
    shape_and_cast_cases(O)


def opset25():
    O = 25
    shape_and_cast_cases(O)
    q = rand((4, 3), np.int8)
    scale = rand((3,), np.float32, 0.1, 0.5)
    case("DequantizeLinear", O, "per_axis_int8", helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=1),
         [("x", q), ("s", scale)], [("y", ref_dequantize(q, scale, None, 1, 0))])
    x = rand((4, 3), np.float32, -10, 10)
    case("QuantizeLinear", O, "per_axis_uint8", helper.make_node("QuantizeLinear", ["x", "s"], ["y"], axis=1),
         [("x", x), ("s", scale)], [("y", ref_quantize(x, scale, None, np.uint8, 1, 0))])


def ref_cumprod(x, axis, exclusive, reverse):
    y = np.flip(x, axis) if reverse else x
    if exclusive:
        ones = np.ones_like(np.take(y, [0], axis=axis))
        y = np.concatenate([ones, np.take(y, range(y.shape[axis] - 1), axis=axis)], axis=axis)
    y = np.cumprod(y, axis=axis, dtype=x.dtype)
    return np.flip(y, axis) if reverse else y


def opset26():
    O = 26
    for variant, x, axis, exclusive, reverse in (("axis0", rand((4, 3), low=0.5, high=1.5), 0, 0, 0),
                                                 ("exclusive", rand((2, 5), low=0.5, high=1.5), 1, 1, 0),
                                                 ("reverse_negative_axis", rand((2, 3, 4), low=0.5, high=1.5), -1, 0, 1),
                                                 ("exclusive_reverse_int64", RNG.integers(-3, 4, (3, 4)).astype(np.int64),
                                                  1, 1, 1),
                                                 ("int32_axis_int32", RNG.integers(-3, 4, (5,)).astype(np.int32), 0, 0, 0)):
        attrs = {}
        if exclusive:
            attrs["exclusive"] = 1
        if reverse:
            attrs["reverse"] = 1
        adtype = np.int32 if variant == "int32_axis_int32" else np.int64
        case("CumProd", O, variant, helper.make_node("CumProd", ["x", "axis"], ["y"], **attrs),
             [("x", x), ("axis", np.array(axis, adtype))], [("y", ref_cumprod(x, axis % x.ndim, exclusive, reverse))])
    for variant, x, to, dtype in (("float_to_int32", rand((2, 3)), TensorProto.INT32, np.int32),
                                  ("int32_to_float", RNG.integers(0, 1 << 30, (4,)).astype(np.int32), TensorProto.FLOAT,
                                   np.float32),
                                  ("uint16_to_int16", RNG.integers(0, 65535, (5,)).astype(np.uint16), TensorProto.INT16,
                                   np.int16),
                                  ("double_to_int64", rand((3,), np.float64), TensorProto.INT64, np.int64),
                                  ("uint8_to_int8", RNG.integers(0, 255, (6,)).astype(np.uint8), TensorProto.INT8,
                                   np.int8)):
        case("BitCast", O, variant, helper.make_node("BitCast", ["x"], ["y"], to=to), [("x", x)],
             [("y", x.view(dtype))])


# ---- opset 27: CausalConvWithState, LinearAttention ------------------------------------------------------
# References written from ONNX 1.22's operator documentation (onnx.ai/onnx/operators) and its reference
# implementation (onnx/reference/ops/op_causal_conv_with_state.py, op_linear_attention.py).

def ref_causal_conv(x, w, bias=None, past=None, activation="none"):
    b, c, length = x.shape
    k = w.shape[2]
    pad = np.zeros((b, c, k - 1), np.float32) if past is None else past
    padded = np.concatenate([pad, x], axis=2).astype(np.float64)
    y = np.zeros((b, c, length))
    for t in range(length):
        y[:, :, t] = (padded[:, :, t:t + k] * w[None, :, 0, :]).sum(axis=2)
    if bias is not None:
        y += bias[None, :, None]
    if activation in ("silu", "swish"):
        y = y / (1.0 + np.exp(-y))
    return y.astype(np.float32), padded[:, :, length:].astype(np.float32)


def ref_linear_attention(q, k, v, q_heads, kv_heads, rule, past=None, decay=None, beta=None, scale=0.0):
    b, t, _ = q.shape
    d_k, d_v = q.shape[2] // q_heads, v.shape[2] // kv_heads
    group = q_heads // kv_heads
    q4 = q.reshape(b, t, q_heads, d_k).astype(np.float64)
    k4 = k.reshape(b, t, kv_heads, d_k).astype(np.float64)
    v4 = v.reshape(b, t, kv_heads, d_v).astype(np.float64)
    state = np.zeros((b, kv_heads, d_k, d_v)) if past is None else past.astype(np.float64).copy()
    scale = 1.0 / np.sqrt(d_k) if scale == 0.0 else scale
    out = np.zeros((b, t, q_heads, d_v))
    for i in range(t):
        for bi in range(b):
            for h in range(kv_heads):
                s = state[bi, h]
                if decay is not None:
                    g = decay[bi, i].reshape(kv_heads, -1)[h]  # one value per head, or d_k of them
                    s = s * np.exp(g.astype(np.float64))[:, None]
                vt = v4[bi, i, h]
                if beta is not None:
                    bt = beta[bi, i, 0 if beta.shape[2] == 1 else h]
                    vt = bt * (vt - s.T @ k4[bi, i, h])
                s = s + np.outer(k4[bi, i, h], vt)
                state[bi, h] = s
                for qh in range(h * group, (h + 1) * group):
                    out[bi, i, qh] = scale * (q4[bi, i, qh] @ s)
    return out.reshape(b, t, q_heads * d_v).astype(np.float32), state.astype(np.float32)


def unit_keys(shape, heads):
    k = rand(shape).reshape(shape[0], shape[1], heads, -1)
    return (k / np.linalg.norm(k, axis=-1, keepdims=True)).reshape(shape).astype(np.float32)


def opset27():
    O = 27
    # variant, (batch, channels, length, k), bias, past, activation (None: attribute left out)
    for variant, (b, c, length, k), with_bias, with_past, activation in (
            ("default_no_state", (2, 3, 5, 4), False, False, None),
            ("none_bias", (1, 4, 6, 3), True, False, "none"),
            ("silu_bias_past", (2, 3, 5, 4), True, True, "silu"),
            ("swish_past", (2, 2, 7, 3), False, True, "swish"),
            ("silu_decode_step", (3, 5, 1, 4), True, True, "silu"),
            ("length_below_carry", (1, 3, 2, 4), True, True, "none"),
            ("kernel_2", (2, 3, 4, 2), True, True, "silu")):
        x, w = rand((b, c, length)), rand((c, 1, k), low=-1.0, high=1.0)
        bias = rand((c,)) if with_bias else None
        past = rand((b, c, k - 1)) if with_past else None
        y, present = ref_causal_conv(x, w, bias, past, activation or "none")
        names = ["input", "weight", "bias" if with_bias else "", "past_state" if with_past else ""]
        while names[-1] == "":
            names.pop()
        attrs = {} if activation is None else {"activation": activation}
        outputs = [("output", y), ("present_state", present)]
        feeds = [(n, a) for n, a in (("input", x), ("weight", w), ("bias", bias), ("past_state", past)) if a is not None]
        case("CausalConvWithState", O, variant,
             helper.make_node("CausalConvWithState", names, [n for n, _ in outputs], **attrs), feeds, outputs)

    # variant, rule (None: attribute left out, gated_delta), (batch, seq, q_heads, kv_heads, d_k, d_v), past,
    # decay width per KV head (0: none, 1: per head, d_k: per key dimension), beta heads (0, 1 or kv_heads),
    # scale attribute
    for variant, rule, (b, t, hq, hkv, d_k, d_v), with_past, decay_w, beta_h, scale in (
            ("linear", "linear", (2, 3, 2, 2, 4, 3), False, 0, 0, None),
            ("linear_gqa_past", "linear", (1, 4, 4, 2, 3, 5), True, 0, 0, None),
            ("gated_per_head", "gated", (2, 3, 2, 2, 4, 4), False, 1, 0, None),
            ("gated_per_key_past", "gated", (1, 5, 2, 1, 4, 3), True, 4, 0, 0.5),
            ("delta_beta_per_head", "delta", (2, 4, 2, 2, 4, 3), False, 0, 2, None),
            ("delta_shared_beta_scale", "delta", (1, 3, 3, 3, 2, 4), True, 0, 1, 0.25),
            ("gated_delta_default_gqa_past", None, (2, 3, 4, 2, 4, 4), True, 1, 2, None),
            ("gated_delta_decode_step", "gated_delta", (2, 1, 2, 2, 8, 4), True, 1, 2, None),
            ("gated_delta_per_key_mqa", "gated_delta", (1, 4, 3, 1, 4, 2), True, 4, 1, None)):
        q = rand((b, t, hq * d_k), low=-1.0, high=1.0)
        kk = unit_keys((b, t, hkv * d_k), hkv)
        v = rand((b, t, hkv * d_v), low=-1.0, high=1.0)
        past = rand((b, hkv, d_k, d_v), low=-0.5, high=0.5) if with_past else None
        decay = rand((b, t, hkv * decay_w), low=-1.0, high=0.0) if decay_w else None
        beta = rand((b, t, beta_h), low=0.1, high=0.9) if beta_h else None
        y, present = ref_linear_attention(q, kk, v, hq, hkv, rule or "gated_delta", past, decay, beta,
                                          scale or 0.0)
        attrs = {"q_num_heads": hq, "kv_num_heads": hkv}
        if rule is not None:
            attrs["update_rule"] = rule
        if scale is not None:
            attrs["scale"] = scale
        names = ["query", "key", "value", "past_state" if with_past else "", "decay" if decay_w else "",
                 "beta" if beta_h else ""]
        while names[-1] == "":
            names.pop()
        feeds = [(n, a) for n, a in (("query", q), ("key", kk), ("value", v), ("past_state", past), ("decay", decay),
                                     ("beta", beta)) if a is not None]
        outputs = [("output", y), ("present_state", present)]
        case("LinearAttention", O, variant,
             helper.make_node("LinearAttention", names, [n for n, _ in outputs], **attrs), feeds, outputs)


# ---- unchanged operators at newer opsets: resolved to their newest version -----------------------------

def resolution():
    for opset in (18, 19, 20, 21, 22, 23, 24, 25, 26, 27):
        a, b = rand((2, 3)), rand((3,))
        case("Add", opset, "resolves_to_14", helper.make_node("Add", ["a", "b"], ["c"]), [("a", a), ("b", b)],
             [("c", a + b)])
    for opset in (19, 21, 25, 27):
        x = rand((2, 6))
        case("ReduceMean", opset, "resolves_to_18", helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0),
             [("x", x), ("axes", np.array([1], np.int64))], [("y", x.mean(axis=1).astype(np.float32))])
        case("Split", opset, "resolves_to_18", helper.make_node("Split", ["x"], ["y0", "y1"], num_outputs=2, axis=1),
             [("x", x)], [("y0", x[:, :3]), ("y1", x[:, 3:])])


def generate(root, ort_dir):
    opset18()
    opset19()
    opset20()
    opset21()
    opset22()
    opset23()
    opset24()
    opset25()
    opset26()
    opset27()
    legacy()
    resolution()
    narrow_type_cases.add_cases(case)
    names = set()
    for c in CASES:
        if c.name in names:
            raise SystemExit(f"two cases are named {c.name}")
        names.add(c.name)
        write_case(root, c)
    ort_oracle.serve(CASES, root, ort_dir, lambda r, c, outputs: write_values(r, c, "output", outputs), log)
    return len(CASES)


def default_cache_dir(override):
    if override:
        return override
    if os.environ.get("EPHOST_TEST_CACHE"):
        return os.environ["EPHOST_TEST_CACHE"]
    raise SystemExit("no cache folder: pass --cache-dir (CTest passes the build tree's) or set EPHOST_TEST_CACHE")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", help="where the cases go (default $EPHOST_TEST_CACHE)")
    parser.add_argument("--default-cache-dir", help="used when neither --cache-dir nor EPHOST_TEST_CACHE is set")
    parser.add_argument("--force", action="store_true", help="regenerate even when a complete generation exists")
    parser.add_argument("--no-ort", action="store_true", help="numpy references only: do not fetch ONNX Runtime")
    args = parser.parse_args()
    cache = args.cache_dir or os.environ.get("EPHOST_TEST_CACHE") or args.default_cache_dir
    cache = default_cache_dir(cache)
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".opset-tests.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ort_dir = None if args.no_ort else ort_oracle.fetch(cache, log)
        suite = os.path.join(cache, f"opset-tests-{GENERATION}-{'ort' if ort_dir else 'numpy'}")
        if args.force or not os.path.exists(os.path.join(suite, STAMP)):
            scratch = tempfile.mkdtemp(prefix=".generating-", dir=cache)
            try:
                count = generate(scratch, ort_dir)
                with open(os.path.join(scratch, STAMP), "w") as f:
                    f.write(f"{count}\n")
                shutil.rmtree(suite, ignore_errors=True)
                os.rename(scratch, suite)
                log(f"{count} cases in {suite}")
            except BaseException:
                shutil.rmtree(scratch, ignore_errors=True)
                raise
    print(suite)
    return 0


if __name__ == "__main__":
    sys.exit(main())
