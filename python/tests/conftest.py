"""Fixtures of the ephost package tests. Run under CTest (tests/CMakeLists.txt, test python_package),
which puts the built package on PYTHONPATH, empties EPHOST_PLUGIN_PATH (the tests register the test
plugins by path) and names the test plugins' folder, the `ephost` command and the example plugin."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import ephost


def _required_env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through CTest (ctest -R python_package)")
    return value


@pytest.fixture(scope="session")
def test_plugin_dir():
    return _required_env("EPHOST_TEST_PLUGIN_DIR")


@pytest.fixture(scope="session")
def ephost_cli():
    return _required_env("EPHOST_CLI")


@pytest.fixture(scope="session")
def source_dir():
    return _required_env("EPHOST_SOURCE_DIR")


@pytest.fixture(scope="session")
def test_plugins(test_plugin_dir):
    """alpha (float Add and Mul, single nodes) and beta (fused Add/Mul/Relu chains) registered once in
    the process's env."""
    for name in ("alpha", "beta"):
        ephost.register_plugin_library(os.path.join(test_plugin_dir, f"libephost_test_{name}.so"))
    return ["alpha", "beta"]


@pytest.fixture(scope="session")
def example_plugin():
    """The example compiling plugin (samples/example_ep: Conv, Relu, Add, ...; caches EPContext)."""
    ephost.register_plugin_library(_required_env("EPHOST_EXAMPLE_PLUGIN"))
    return "example"


def make_model(nodes, inputs, outputs, initializers=(), opset=17):
    """A serialized ONNX model. inputs/outputs: (name, element type, shape) triples; shape None for an
    unknown rank, str entries for symbolic dims."""
    graph = helper.make_graph(
        nodes, "test_graph",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def binary_model(op="Add", shape=("N", 3), elem=TensorProto.FLOAT):
    """z = op(x, y) on tensors of `shape`."""
    return make_model([helper.make_node(op, ["x", "y"], ["z"], name=f"{op.lower()}_node")],
                      [("x", elem, list(shape)), ("y", elem, list(shape))], [("z", elem, list(shape))])


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
