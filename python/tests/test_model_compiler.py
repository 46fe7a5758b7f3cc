"""compile_model and ModelCompiler: EPContext models written with the example compiling plugin, then
loaded (not compiled again) and giving the source model's outputs."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ephost
from conftest import make_model


def conv_relu_model():
    w = numpy_helper.from_array(np.random.default_rng(3).standard_normal((4, 2, 3, 3)).astype(np.float32), "w")
    return make_model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
                      [("x", TensorProto.FLOAT, [1, 2, 8, 8])], [("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                      initializers=[w])


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "convrelu.onnx"
    path.write_bytes(conv_relu_model())
    return path


def run(model, providers, x):
    session = ephost.InferenceSession(model, providers=providers)
    return session, session.run(None, {"x": x})[0]


def test_compile_model_writes_a_ctx_model_that_loads(source, example_plugin):
    x = np.random.default_rng(4).standard_normal((1, 2, 8, 8)).astype(np.float32)
    _, expected = run(str(source), ["example"], x)
    ctx = ephost.compile_model(str(source), providers=["example"])
    assert ctx == str(source.with_name("convrelu_ctx.onnx")) and os.path.exists(ctx)
    assert os.path.exists(source.with_name("convrelu_example.bin"))
    session, got = run(ctx, ["example"], x)
    [context] = session.get_ep_context_report()
    assert context["loaded"] and context["verdict"] == "optimal", context
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(ephost.EphostError, match="exist"):
        ephost.compile_model(str(source), providers=["example"])  # refuses to overwrite


def test_model_compiler_to_file_and_to_bytes(source, example_plugin, tmp_path):
    x = np.random.default_rng(5).standard_normal((1, 2, 8, 8)).astype(np.float32)
    _, expected = run(str(source), ["example"], x)
    compiler = ephost.ModelCompiler(ephost.SessionOptions(), source.read_bytes(), embed_compiled_data_into_model=True,
                                    providers=["example"])
    out = tmp_path / "out" / "compiled.onnx"
    out.parent.mkdir()
    assert compiler.compile_to_file(str(out)) == str(out)
    assert sorted(os.listdir(out.parent)) == ["compiled.onnx"], "embedded: no .bin beside it"
    data = compiler.compile_to_bytes()
    for model in (str(out), data):
        session, got = run(model, ["example"], x)
        assert session.get_ep_context_report()[0]["loaded"]
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(ephost.InvalidArgument, match="needs output_model_path"):
        compiler.compile_to_file()
