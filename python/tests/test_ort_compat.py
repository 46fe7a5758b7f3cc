"""A program written for onnxruntime's Python API, run on ephost by changing the import: every name
below is onnxruntime's, used as its documentation shows (issue 28's table, row by row)."""
import difflib  # noqa: F401  (the strict-attribute messages come from it)
import os
import threading
import time

import numpy as np
import pytest
from onnx import TensorProto, helper

import ephost as ort
from conftest import make_model


def add_model():
    """z = x + y on float [1, 8]."""
    return make_model([helper.make_node("Add", ["x", "y"], ["z"], name="add")],
                      [("x", TensorProto.FLOAT, [1, 8]), ("y", TensorProto.FLOAT, [1, 8])],
                      [("z", TensorProto.FLOAT, [1, 8])])


def counting_loop_model():
    """y = x + M (Loop of M iterations of x + 1): a run as long as M makes it."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="pass_cond"),
         helper.make_node("Add", ["x_in", "one"], ["x_out"], name="count")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [1])])
    return make_model(
        [helper.make_node("Loop", ["M", "cond", "x"], ["y"], name="loop", body=body)],
        [("M", TensorProto.INT64, []), ("cond", TensorProto.BOOL, []), ("x", TensorProto.FLOAT, [1])],
        [("y", TensorProto.FLOAT, [1])],
        initializers=[helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])


@pytest.fixture
def session():
    return ort.InferenceSession(add_model(), providers=["CPUExecutionProvider"])


@pytest.fixture
def xy():
    x = np.arange(8, dtype=np.float32).reshape(1, 8)
    return x, np.full((1, 8), 0.5, dtype=np.float32)


@pytest.fixture(scope="module")
def fakedev(test_plugin_dir):
    """The fake-device test plugin (two devices whose memory the host must never touch), registered
    with onnxruntime 1.22's call."""
    ort.register_execution_provider_library("fakedev", os.path.join(test_plugin_dir, "libephost_test_fakedev.so"))
    yield "fakedev"
    ort.unregister_execution_provider_library("fakedev")


# -- RunOptions -----------------------------------------------------------------------------------------

def test_run_options_have_onnxruntime_attributes_and_defaults(session, xy):
    ro = ort.RunOptions()
    assert (ro.log_severity_level, ro.log_verbosity_level, ro.logid, ro.terminate) == (-1, 0, "", False)
    assert ro.only_execute_path_to_fetches is False
    ro.log_severity_level = 3
    ro.log_verbosity_level = 1
    ro.logid = "request-42"
    ro.only_execute_path_to_fetches = True
    ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    assert ro.get_run_config_entry("memory.enable_memory_arena_shrinkage") == "cpu:0"
    x, y = xy
    [z] = session.run(None, {"x": x, "y": y}, ro)
    np.testing.assert_allclose(z, x + y)


def test_run_options_terminate_refuses_the_run_until_cleared(session, xy):
    ro = ort.RunOptions()
    ro.logid = "batch-7"
    ro.terminate = True
    with pytest.raises(ort.Fail, match="run 'batch-7' terminated by RunOptions.terminate"):
        session.run(None, {"x": xy[0], "y": xy[1]}, run_options=ro)
    ro.terminate = False
    [z] = session.run(None, {"x": xy[0], "y": xy[1]}, run_options=ro)
    np.testing.assert_allclose(z, xy[0] + xy[1])


def test_run_options_terminate_stops_a_run_in_progress():
    session = ort.InferenceSession(counting_loop_model(), providers=["CPUExecutionProvider"])
    feed = {"M": np.array(5, dtype=np.int64), "cond": np.array(True), "x": np.zeros(1, np.float32)}
    np.testing.assert_allclose(session.run(None, feed)[0], [5.0])
    ro = ort.RunOptions()
    threading.Timer(0.2, lambda: setattr(ro, "terminate", True)).start()
    start = time.monotonic()
    with pytest.raises(ort.Cancelled, match="terminated by RunOptions.terminate"):
        session.run(None, {**feed, "M": np.array(1 << 40, dtype=np.int64)}, ro)
    assert time.monotonic() - start < 30
    assert issubclass(ort.Cancelled, ort.Fail), "onnxruntime raises Fail for a terminated run"
    ro.terminate = False
    np.testing.assert_allclose(session.run(None, feed, ro)[0], [5.0])


def test_run_options_timeout_ms_gives_each_run_a_deadline():
    session = ort.InferenceSession(counting_loop_model(), providers=["CPUExecutionProvider"])
    feed = {"M": np.array(5, dtype=np.int64), "cond": np.array(True), "x": np.zeros(1, np.float32)}
    ro = ort.RunOptions()
    assert ro.timeout_ms == 0
    ro.timeout_ms = 200
    start = time.monotonic()
    with pytest.raises(ort.DeadlineExceeded, match="exceeded its deadline: stopped after"):
        session.run(None, {**feed, "M": np.array(1 << 40, dtype=np.int64)}, ro)
    assert 0.2 <= time.monotonic() - start < 5
    assert issubclass(ort.DeadlineExceeded, ort.Fail)
    np.testing.assert_allclose(session.run(None, feed, ro)[0], [5.0]), "each run has its own deadline"
    with pytest.raises(ort.InvalidArgument, match="timeout_ms takes an int >= 0"):
        ro.timeout_ms = -1


# -- OrtValue -------------------------------------------------------------------------------------------

def test_ortvalue_from_numpy_on_the_cpu(session, xy):
    x, y = xy
    value = ort.OrtValue.ortvalue_from_numpy(x)
    assert value.shape() == [1, 8]
    assert value.data_type() == "tensor(float)"
    assert value.element_type() == TensorProto.FLOAT
    assert value.device_name() == "cpu"
    assert value.is_tensor() and value.has_value()
    assert value.data_ptr() == x.ctypes.data, "a host OrtValue shares the array's buffer"
    np.testing.assert_array_equal(value.numpy(), x)
    zeros = ort.OrtValue.ortvalue_from_shape_and_type([2, 3], np.int64, "cpu", 0)
    assert zeros.data_type() == "tensor(int64)" and zeros.shape() == [2, 3]
    np.testing.assert_array_equal(zeros.numpy(), np.zeros((2, 3), np.int64))


def test_run_with_ort_values(session, xy):
    x, y = xy
    inputs = {"x": ort.OrtValue.ortvalue_from_numpy(x), "y": ort.OrtValue.ortvalue_from_numpy(y)}
    [z] = session.run_with_ort_values(["z"], inputs)
    assert isinstance(z, ort.OrtValue) and z.shape() == [1, 8]
    np.testing.assert_allclose(z.numpy(), x + y)
    ro = ort.RunOptions()
    ro.terminate = True
    with pytest.raises(ort.Fail, match="terminated"):
        session.run_with_ort_values(None, inputs, ro)


def test_ortvalue_on_a_device_is_copied_there_and_back(fakedev, xy):
    x, _ = xy
    value = ort.OrtValue.ortvalue_from_numpy(x, fakedev, 0)
    assert value.device_name() == "fakedev" and value.shape() == [1, 8]
    assert value.data_ptr() == 0, "device memory has no host address"
    np.testing.assert_array_equal(value.numpy(), x)
    gpu = ort.OrtValue.ortvalue_from_numpy(x, "cuda", 0)  # the first GPU: fakedev's device 0
    assert gpu.device_name() == "fakedev"
    gpu.update_inplace(x * 2)
    np.testing.assert_array_equal(gpu.numpy(), x * 2)
    with pytest.raises(ort.InvalidArgument, match="has no device 7"):
        ort.OrtValue.ortvalue_from_numpy(x, fakedev, 7)


# -- IOBinding ------------------------------------------------------------------------------------------

def test_io_binding_on_the_cpu(session, xy):
    x, y = xy
    binding = session.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_ortvalue_input("y", ort.OrtValue.ortvalue_from_numpy(y))
    binding.bind_output("z")
    session.run_with_iobinding(binding)
    [z] = binding.copy_outputs_to_cpu()
    np.testing.assert_allclose(z, x + y)
    [z_value] = binding.get_outputs()
    assert z_value.device_name() == "cpu"
    np.testing.assert_allclose(z_value.numpy(), x + y)

    # Preallocated output, by OrtValue and by raw pointer (host memory).
    out = ort.OrtValue.ortvalue_from_shape_and_type([1, 8], np.float32)
    binding.bind_ortvalue_output("z", out)
    session.run_with_iobinding(binding, ort.RunOptions())
    np.testing.assert_allclose(out.numpy(), x + y)
    target = np.zeros((1, 8), np.float32)
    binding.clear_binding_outputs()
    binding.bind_output("z", "cpu", 0, np.float32, [1, 8], target.ctypes.data)
    source = np.ones((1, 8), np.float32)
    binding.bind_input("x", "cpu", 0, np.float32, [1, 8], source.ctypes.data)
    session.run_with_iobinding(binding)
    np.testing.assert_allclose(target, source + y)


def test_io_binding_clears_inputs_and_outputs_separately(session, xy):
    x, y = xy
    binding = session.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_cpu_input("y", y)
    binding.bind_output("z")
    binding.clear_binding_inputs()
    with pytest.raises(ort.InvalidArgument, match="missing input"):
        session.run_with_iobinding(binding)
    binding.bind_cpu_input("x", x)
    binding.bind_cpu_input("y", y)
    session.run_with_iobinding(binding)
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], x + y)
    binding.clear_binding_outputs()
    with pytest.raises(ort.InvalidArgument, match="no output is bound"):
        session.run_with_iobinding(binding)


def test_io_binding_keeps_outputs_on_a_device(fakedev, xy):
    x, y = xy
    session = ort.InferenceSession(add_model(), providers=[fakedev, "CPUExecutionProvider"])
    binding = session.io_binding()
    binding.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(x, fakedev, 0))
    binding.bind_cpu_input("y", y)
    binding.bind_output("z", fakedev, 0)
    session.run_with_iobinding(binding)
    [z] = binding.get_outputs()
    assert z.device_name() == "fakedev" and z.shape() == [1, 8]
    np.testing.assert_allclose(binding.copy_outputs_to_cpu()[0], x + y)
    with pytest.raises(ort.NotImplemented, match="bind_ortvalue_input"):
        binding.bind_input("x", fakedev, 0, np.float32, [1, 8], 12345)


# -- model metadata, provider options, session options ------------------------------------------------------

def test_get_modelmeta():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "main_graph",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], doc_string="its graph")
    model = helper.make_model(graph, producer_name="exporter", domain="ai.example", model_version=7,
                              doc_string="a model", opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, {"labels": "cat,dog", "author": "me"})
    meta = ort.InferenceSession(model.SerializeToString()).get_modelmeta()
    assert meta.producer_name == "exporter"
    assert meta.graph_name == "main_graph"
    assert meta.domain == "ai.example"
    assert meta.description == "a model"
    assert meta.graph_description == "its graph"
    assert meta.version == 7
    assert meta.custom_metadata_map == {"labels": "cat,dog", "author": "me"}


def test_get_provider_options_and_session_options(test_plugins):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    session = ort.InferenceSession(add_model(), so, providers=[("alpha", {"claim": "all"}), "CPUExecutionProvider"])
    options = session.get_provider_options()
    assert options["AlphaExecutionProvider"] == {"claim": "all"}
    assert options["CPUExecutionProvider"] == {}
    assert session.get_session_options() is so


# -- module functions and enums ------------------------------------------------------------------------------

def test_module_functions():
    assert "CPUExecutionProvider" in ort.get_all_providers()
    assert ort.get_device() in ("CPU", "GPU")
    ort.set_default_logger_severity(3)
    with pytest.raises(ort.InvalidArgument, match="0 \\(verbose\\) to 4"):
        ort.set_default_logger_severity(7)
    ort.set_default_logger_severity(2)
    so = ort.SessionOptions()
    assert so.execution_mode == ort.ExecutionMode.ORT_SEQUENTIAL
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    x = np.ones((1, 8), np.float32)
    [z] = ort.InferenceSession(add_model(), so).run(None, {"x": x, "y": x})
    np.testing.assert_allclose(z, x + x)


def test_get_device_answers_gpu_with_a_gpu_plugin(fakedev):
    assert ort.get_device() == "GPU"


# -- SessionOptions: initializers, custom ops ---------------------------------------------------------------

def test_add_initializer_replaces_a_weight():
    model = make_model([helper.make_node("Mul", ["x", "w"], ["y"])], [("x", TensorProto.FLOAT, [3])],
                       [("y", TensorProto.FLOAT, [3])],
                       initializers=[helper.make_tensor("w", TensorProto.FLOAT, [3], [1, 1, 1])])
    so = ort.SessionOptions()
    weights = np.array([2, 3, 4], np.float32)
    so.add_initializer("w", ort.OrtValue.ortvalue_from_numpy(weights))
    [y] = ort.InferenceSession(model, so).run(None, {"x": np.ones(3, np.float32)})
    np.testing.assert_allclose(y, weights)
    wrong = ort.SessionOptions()
    wrong.add_initializer("w", ort.OrtValue.ortvalue_from_numpy(np.ones(4, np.float32)))
    with pytest.raises(ort.InvalidArgument, match="same type and shape"):
        ort.InferenceSession(model, wrong)


def test_register_custom_ops_library_names_the_alternative():
    so = ort.SessionOptions()
    with pytest.raises(NotImplementedError, match="register_plugin_library"):
        so.register_custom_ops_library("libcustom_ops.so")


def test_optimized_model_filepath_is_refused_with_the_alternative():
    so = ort.SessionOptions()
    with pytest.raises(NotImplementedError, match="ModelCompiler"):
        so.optimized_model_filepath = "optimized.onnx"


# -- onnxruntime 1.22's plugin-EP API ---------------------------------------------------------------------------

def test_plugin_ep_api(fakedev, xy):
    devices = ort.get_ep_devices()
    by_name = {}
    for d in devices:
        by_name.setdefault(d.ep_name, []).append(d)
    assert by_name["CPUExecutionProvider"][0].device.type == ort.OrtHardwareDeviceType.CPU
    fake = by_name["fakedev"]
    assert [d.device.type for d in fake] == [ort.OrtHardwareDeviceType.GPU, ort.OrtHardwareDeviceType.NPU]
    assert all(isinstance(d.ep_metadata, dict) and isinstance(d.ep_options, dict) for d in fake)
    assert fake[1].device.device_id == 1 and fake[0].ep_vendor == fake[1].ep_vendor

    so = ort.SessionOptions()
    so.add_provider_for_devices([fake[1]], {"claim": "Add"})
    session = ort.InferenceSession(add_model(), so)
    assert session.get_providers()[0] == "fakedev"
    x, y = xy
    np.testing.assert_allclose(session.run(None, {"x": x, "y": y})[0], x + y)
    assert session.get_partition_report()["nodes_per_provider"] == {"fakedev": 1}

    policy = ort.SessionOptions()
    policy.set_provider_selection_policy(ort.OrtExecutionProviderDevicePolicy.PREFER_CPU)
    assert policy.get_session_config_entry("session.ep_selection_policy") == "prefer_cpu"
    policy.set_provider_selection_policy(ort.OrtExecutionProviderDevicePolicy.PREFER_GPU)
    np.testing.assert_allclose(ort.InferenceSession(add_model(), policy).run(None, {"x": x, "y": y})[0], x + y)

    with pytest.raises(ort.InvalidArgument, match="already registered as 'fakedev'"):
        ort.register_execution_provider_library("fakedev", "/elsewhere/libfake.so")
    with pytest.raises(ort.InvalidArgument, match="no execution provider library is registered as 'nope'"):
        ort.unregister_execution_provider_library("nope")


# -- run_async -----------------------------------------------------------------------------------------------

def test_run_async_calls_back_with_the_results(session, xy):
    x, y = xy
    done = threading.Event()
    received = {}

    def callback(outputs, user_data, err):
        received.update(outputs=outputs, user_data=user_data, err=err, thread=threading.current_thread())
        done.set()

    assert session.run_async(None, {"x": x, "y": y}, callback, "my data") is None
    assert done.wait(30)
    assert received["err"] == "" and received["user_data"] == "my data"
    assert received["thread"] is not threading.main_thread()
    np.testing.assert_allclose(received["outputs"][0], x + y)

    done.clear()
    session.run_async(["z"], {"x": x}, callback, None)
    assert done.wait(30)
    assert received["outputs"] == [] and "missing input" in received["err"]


# -- silent mistakes -----------------------------------------------------------------------------------------

def test_unknown_attributes_raise_naming_the_closest():
    so = ort.SessionOptions()
    with pytest.raises(AttributeError, match="did you mean 'intra_op_num_threads'"):
        so.intra_op_num_thread = 1
    ro = ort.RunOptions()
    with pytest.raises(AttributeError, match="did you mean 'terminate'"):
        ro.terminat = True
    with pytest.raises(AttributeError, match="its attributes are"):
        ro.something_else_entirely = 1


def test_provider_names_are_onnxruntimes_both_ways(test_plugins):
    available = ort.get_available_providers()
    assert available[-1] == "CPUExecutionProvider"
    assert "AlphaExecutionProvider" in available, "alpha names onnxruntime's AlphaExecutionProvider"
    session = ort.InferenceSession(add_model(), providers=["CPUExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert ort.InferenceSession(add_model(), providers=["cpu"]).get_providers() == ["CPUExecutionProvider"]
    both = ort.InferenceSession(add_model(), providers=["AlphaExecutionProvider", "cpu"])
    assert both.get_providers() == ["AlphaExecutionProvider", "CPUExecutionProvider"]
