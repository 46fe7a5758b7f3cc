"""InferenceSession: what the model declares, run with numpy values (tensors, strings, sequences,
optionals), inputs lent without copies, outputs, providers and the reports."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import ephost
from conftest import binary_model, make_model


def test_inputs_and_outputs_with_symbolic_dims():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])],
                       [("x", TensorProto.FLOAT, ["batch", 3, None])],  # None: an unnamed symbolic dim
                       [("y", TensorProto.FLOAT, None)])
    session = ephost.InferenceSession(model)
    [x] = session.get_inputs()
    assert (x.name, x.type, x.shape) == ("x", "tensor(float)", ["batch", 3, None])
    [y] = session.get_outputs()
    assert y.name == "y" and y.type == "tensor(float)"
    assert "NodeArg(name='x'" in repr(x)


def test_run_from_a_path_and_from_bytes(tmp_path, rng):
    model = binary_model("Mul")
    path = tmp_path / "mul.onnx"
    path.write_bytes(model)
    x = rng.standard_normal((4, 3), dtype=np.float32)
    y = rng.standard_normal((4, 3), dtype=np.float32)
    for source in (model, str(path), path):
        [z] = ephost.InferenceSession(source).run(None, {"x": x, "y": y})
        assert z.dtype == np.float32 and z.shape == (4, 3)
        np.testing.assert_array_equal(z, x * y)


def test_output_names_select_and_order_outputs(rng):
    model = make_model([helper.make_node("Neg", ["x"], ["a"]), helper.make_node("Abs", ["x"], ["b"])],
                       [("x", TensorProto.FLOAT, [5])], [("a", TensorProto.FLOAT, [5]), ("b", TensorProto.FLOAT, [5])])
    session = ephost.InferenceSession(model)
    x = rng.standard_normal(5, dtype=np.float32)
    b, a = session.run(["b", "a"], {"x": x})
    np.testing.assert_array_equal(a, -x)
    np.testing.assert_array_equal(b, np.abs(x))
    assert len(session.run([], {"x": x})) == 2


def test_contiguous_inputs_of_the_declared_type_are_not_copied(rng):
    x = rng.standard_normal((8, 3), dtype=np.float32)
    assert ephost._ephost.input_buffer_address(x, TensorProto.FLOAT) == x.ctypes.data
    strided = x[::2]  # not contiguous: lent as a contiguous copy
    assert ephost._ephost.input_buffer_address(strided, TensorProto.FLOAT) != strided.ctypes.data
    # and the values of a strided input arrive as they are
    session = ephost.InferenceSession(binary_model("Add"))
    [z] = session.run(None, {"x": strided, "y": np.ascontiguousarray(strided)})
    np.testing.assert_array_equal(z, strided * 2)


def test_lists_and_scalars_take_the_declared_type():
    session = ephost.InferenceSession(binary_model("Add", shape=[2]))
    [z] = session.run(None, {"x": [1, 2], "y": [0.5, 0.25]})
    assert z.dtype == np.float32
    np.testing.assert_array_equal(z, [1.5, 2.25])


def test_a_wrong_dtype_is_refused_naming_the_input():
    session = ephost.InferenceSession(binary_model("Add"))
    x = np.ones((1, 3), np.float64)
    with pytest.raises(ephost.InvalidArgument, match="input 'x'.*tensor\\(float\\).*float64"):
        session.run(None, {"x": x, "y": x})


def test_integer_bool_and_float16_tensors(rng):
    for elem, dtype in ((TensorProto.INT64, np.int64), (TensorProto.INT32, np.int32), (TensorProto.DOUBLE, np.float64)):
        session = ephost.InferenceSession(binary_model("Add", shape=[6], elem=elem))
        x = (rng.standard_normal(6) * 10).astype(dtype)
        [z] = session.run(None, {"x": x, "y": x})
        assert z.dtype == dtype
        np.testing.assert_array_equal(z, x + x)
    model = make_model([helper.make_node("Not", ["x"], ["y"])], [("x", TensorProto.BOOL, [3])], [("y", TensorProto.BOOL, [3])])
    [y] = ephost.InferenceSession(model).run(None, {"x": np.array([True, False, True])})
    np.testing.assert_array_equal(y, [False, True, False])
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)],
                       [("x", TensorProto.FLOAT16, [4])], [("y", TensorProto.FLOAT16, [4])])
    h = np.array([0.5, -2.0, 65504.0, 1e-4], np.float16)
    [y] = ephost.InferenceSession(model).run(None, {"x": h})
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, h)


def test_string_tensors():
    model = make_model([helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER")],
                       [("x", TensorProto.STRING, [4])], [("y", TensorProto.STRING, [4])])
    session = ephost.InferenceSession(model)
    [y] = session.run(None, {"x": np.array(["a", "bb", "ccc", "dé"], dtype=object)})
    assert y.dtype == object and y.shape == (4,)
    assert y.tolist() == ["A", "BB", "CCC", "DÉ"]
    [y] = session.run(None, {"x": np.array(["x", "y", "z", "w"])})  # numpy's unicode dtype
    assert y.tolist() == ["X", "Y", "Z", "W"]


def test_sequences_are_lists_of_arrays(rng):
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    graph = helper.make_graph(
        [helper.make_node("SequenceLength", ["s"], ["n"]), helper.make_node("SplitToSequence", ["x"], ["parts"], axis=0)],
        "seq", [helper.make_value_info("s", seq_type), helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("n", TensorProto.INT64, []), helper.make_value_info("parts", seq_type)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    session = ephost.InferenceSession(model)
    assert session.get_inputs()[0].type == "seq(tensor(float))"
    x = rng.standard_normal((3, 2), dtype=np.float32)
    n, parts = session.run(None, {"s": [x, x[:1], x[:2]], "x": x})
    assert int(n) == 3
    assert isinstance(parts, list) and len(parts) == 3
    for i, part in enumerate(parts):
        np.testing.assert_array_equal(part, x[i:i + 1])
    with pytest.raises(ephost.InvalidArgument, match="list of arrays"):
        session.run(None, {"s": x, "x": x})


def test_optionals_take_and_give_none():
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    graph = helper.make_graph(
        [helper.make_node("OptionalHasElement", ["o"], ["has"]), helper.make_node("Identity", ["o"], ["same"])],
        "opt", [helper.make_value_info("o", opt_type)],
        [helper.make_tensor_value_info("has", TensorProto.BOOL, []), helper.make_value_info("same", opt_type)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    session = ephost.InferenceSession(model)
    assert session.get_inputs()[0].type == "optional(tensor(float))"
    has, same = session.run(None, {"o": None})
    assert not bool(has) and same is None
    has, same = session.run(None, {"o": np.array([1.0, 2.0], np.float32)})
    assert bool(has)
    np.testing.assert_array_equal(same, [1.0, 2.0])


def test_outputs_outlive_the_session(rng):
    x = rng.standard_normal((2, 3), dtype=np.float32)
    session = ephost.InferenceSession(binary_model("Add"))
    [z] = session.run(None, {"x": x, "y": x})
    del session
    np.testing.assert_array_equal(z, x + x)


def test_providers_in_priority_order_and_the_partition_report(test_plugins):
    session = ephost.InferenceSession(binary_model("Add"), providers=["alpha", "CPUExecutionProvider"])
    # onnxruntime's names where a provider has one (alpha names AlphaExecutionProvider); the partition
    # report keeps ephost's names.
    assert session.get_providers() == ["AlphaExecutionProvider", "CPUExecutionProvider"]
    report = session.get_partition_report()
    assert report["nodes_per_provider"] == {"alpha": 1}
    assert session.get_ep_context_report() == []
    session = ephost.InferenceSession(binary_model("Sub"), providers=[("alpha", {"claim": "all"})])
    assert session.get_providers() == ["AlphaExecutionProvider", "CPUExecutionProvider"], \
        "the CPU plugin is appended for what alpha leaves"
    assert session.get_partition_report()["nodes_per_provider"] == {"cpu": 1}


def test_provider_options_reach_the_provider(test_plugins):
    x = np.ones((1, 3), np.float32)
    session = ephost.InferenceSession(binary_model("Add"), providers=["alpha"],
                                      provider_options=[{"misbehave": "fail_compute"}])
    with pytest.raises(ephost.EPFail, match="injected compute failure"):
        session.run(None, {"x": x, "y": x})
    with pytest.raises(ephost.InvalidArgument, match="provider_options has 2 entries for 1 providers"):
        ephost.InferenceSession(binary_model("Add"), providers=["alpha"], provider_options=[{}, {}])


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ephost.InvalidArgument, match="path_or_bytes"):
        ephost.InferenceSession(42)
    session = ephost.InferenceSession(binary_model("Add"))
    with pytest.raises(ephost.InvalidArgument, match="no input of the model"):
        session.run(None, {"x": np.ones((1, 3), np.float32), "nope": 1})
    with pytest.raises(ephost.InvalidArgument, match="missing input"):
        session.run(None, {"x": np.ones((1, 3), np.float32)})
    with pytest.raises(ephost.InvalidArgument, match="input_feed must be a dict"):
        session.run(None, [np.ones((1, 3), np.float32)])


def test_narrow_types_travel_one_element_per_byte():
    """int4 in and out (int8 values, packed on the way in and unpacked on the way out), float8 codes as
    uint8, and the type names of opsets 19 to 25."""
    INT4, FLOAT8E4M3FN = 22, 17  # onnx 1.12's TensorProto cannot name them
    graph = helper.make_graph(
        [helper.make_node("Identity", ["q"], ["q_out"]),
         helper.make_node("Cast", ["q"], ["as_float"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["x"], ["f8"], to=FLOAT8E4M3FN)],
        "narrow", [helper.make_tensor_value_info("q", INT4, [2, 3]), helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("q_out", INT4, [2, 3]), helper.make_tensor_value_info("as_float", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("f8", FLOAT8E4M3FN, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 8
    session = ephost.InferenceSession(model.SerializeToString())
    assert session.get_inputs()[0].type == "tensor(int4)"
    assert session.get_outputs()[2].type == "tensor(float8e4m3fn)"
    q = np.array([[-8, -1, 0], [1, 6, 7]], np.int8)
    q_out, as_float, f8 = session.run(None, {"q": q, "x": np.array([1.0, -448.0, 1000.0], np.float32)})
    assert q_out.dtype == np.int8 and q_out.shape == (2, 3)
    np.testing.assert_array_equal(q_out, q)
    np.testing.assert_array_equal(as_float, q.astype(np.float32))
    assert f8.dtype == np.uint8
    assert f8.tolist() == [0x38, 0xFE, 0x7E]  # 1.0, -448 and 1000 saturated to 448
    with pytest.raises(ephost.InvalidArgument, match="outside int4"):
        session.run(None, {"q": np.full((2, 3), 8, np.int8), "x": np.zeros(3, np.float32)})
