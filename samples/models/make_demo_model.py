#!/usr/bin/python3
"""Writes the demo model used by scripts/demo.sh: a small conv net whose element-wise tail can be
claimed by the test plugins (alpha: Add/Mul, beta: fused Add/Mul/Relu chains) while Conv, pooling and
the rest fall back to the built-in CPU plugin. Run with Debian's /usr/bin/python3 (python3-onnx)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path: str) -> None:
    rng = np.random.default_rng(7)
    w1 = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3, "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32) * 0.1, "b1")
    scale = numpy_helper.from_array(np.linspace(0.5, 1.5, 8, dtype=np.float32).reshape(1, 8, 1, 1), "scale")
    shift = numpy_helper.from_array(np.linspace(-0.2, 0.2, 8, dtype=np.float32).reshape(1, 8, 1, 1), "shift")
    w2 = numpy_helper.from_array(rng.standard_normal((4, 8, 1, 1)).astype(np.float32) * 0.3, "w2")
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c1", "scale"], ["m1"], name="scale_mul"),
        helper.make_node("Add", ["m1", "shift"], ["a1"], name="shift_add"),
        helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2"),
        helper.make_node("Sigmoid", ["c2"], ["y"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "demo",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, "H2", "W2"])],
        [w1, b1, scale, shift, w2])
    model = helper.make_model(graph, producer_name="ephost-demo", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "demo.onnx")
