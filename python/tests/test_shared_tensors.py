"""Shared tensors from Python (application API 6): OrtValue(..., shared=True) with a provider in a
provider host process (session.provider_isolation=process). A shared input is read in place and a
shared bound output written in place, so the host copies none of their bytes (the partition report's
providers[].isolation.bytes_copied); outputs the application did not bind, and values passed between
two steps of the same isolated provider, stay in shared memory the host allocated. Results equal the
in-process provider's."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import ephost
from conftest import make_model

ROWS, COLS = 64, 32
BYTES = ROWS * COLS * 4  # one float tensor of the models below: above the 4 KiB where shared outputs begin


def relu_chain():
    """y = Relu(x + x): one fused group of beta's."""
    return make_model([helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
                      [("x", TensorProto.FLOAT, [ROWS, COLS])], [("y", TensorProto.FLOAT, [ROWS, COLS])])


def two_steps():
    """y = (x + x) * (x + x): alpha's Add and Mul, two single-node steps passing `a`."""
    return make_model([helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Mul", ["a", "a"], ["y"])],
                      [("x", TensorProto.FLOAT, [ROWS, COLS])], [("y", TensorProto.FLOAT, [ROWS, COLS])])


def session(model, provider, isolation, **provider_options):
    options = ephost.SessionOptions()
    options.add_session_config_entry("session.provider_isolation", isolation)
    return ephost.InferenceSession(model, options, providers=[(provider, provider_options)])


def counters(sess):
    isolation = sess.get_partition_report()["providers"][0]["isolation"]
    return isolation["bytes_copied"], isolation["bytes_in_place"]


def delta(sess, before):
    copied, in_place = counters(sess)
    return copied - before[0], in_place - before[1]


@pytest.fixture
def x(rng):
    return rng.standard_normal((ROWS, COLS)).astype(np.float32)


def test_a_shared_value_is_host_memory_viewed_in_place(x):
    value = ephost.OrtValue.ortvalue_from_shape_and_type([ROWS, COLS], np.float32, "cpu", shared=True)
    assert value.is_shared() and value.device_name() == "cpu"
    view = value.numpy()
    assert view.ctypes.data == value.data_ptr(), "numpy() views the shared memory, it does not copy it"
    np.testing.assert_array_equal(view, 0)
    view[:] = x
    np.testing.assert_array_equal(value.numpy(), x)
    copy = ephost.OrtValue.ortvalue_from_numpy(x, "cpu", shared=True)
    assert copy.is_shared() and copy.data_ptr() != x.ctypes.data
    np.testing.assert_array_equal(copy.numpy(), x)
    plain = ephost.OrtValue.ortvalue_from_numpy(x)
    assert not plain.is_shared() and plain.data_ptr() == x.ctypes.data


def test_shared_memory_misuse_gets_clear_errors():
    with pytest.raises(ephost.InvalidArgument, match="device_type='cpu'"):
        ephost.OrtValue.ortvalue_from_shape_and_type([2], np.float32, "beta", shared=True)
    with pytest.raises(ephost.InvalidArgument, match="string"):
        ephost.OrtValue.ortvalue_from_numpy(np.array(["a", "b"]), "cpu", shared=True)


def test_shared_input_and_bound_output_cross_without_a_copy(test_plugins, x):
    model = relu_chain()
    want = session(model, "beta", "in_process").run(None, {"x": x})[0]
    np.testing.assert_array_equal(want, np.maximum(2 * x, 0))
    isolated = session(model, "beta", "process")
    np.testing.assert_array_equal(isolated.run(None, {"x": x})[0], want)  # starts the provider host

    shared_x = ephost.OrtValue.ortvalue_from_numpy(x, "cpu", shared=True)
    shared_y = ephost.OrtValue.ortvalue_from_shape_and_type([ROWS, COLS], np.float32, "cpu", shared=True)
    binding = isolated.io_binding()
    binding.bind_ortvalue_input("x", shared_x)
    binding.bind_ortvalue_output("y", shared_y)
    for run in range(3):
        shared_y.numpy()[:] = np.nan  # an output not written shows
        before = counters(isolated)
        isolated.run_with_iobinding(binding)
        assert delta(isolated, before) == (0, 2 * BYTES), f"run {run}: x read and y written in place"
        np.testing.assert_array_equal(shared_y.numpy(), want)
        assert binding.get_outputs()[0].data_ptr() == shared_y.data_ptr(), "the bound tensor is the output"

    # A numpy view of a shared value, given to run, is read in place too.
    before = counters(isolated)
    np.testing.assert_array_equal(isolated.run(None, {"x": shared_x.numpy()})[0], want)
    copied, in_place = delta(isolated, before)
    assert copied == 0 and in_place == 2 * BYTES, (copied, in_place)

    # The same input, not shared: its bytes are copied across.
    before = counters(isolated)
    binding.bind_cpu_input("x", x)
    isolated.run_with_iobinding(binding)
    assert delta(isolated, before) == (BYTES, BYTES)
    np.testing.assert_array_equal(shared_y.numpy(), want)


def test_unbound_outputs_stay_in_shared_memory(test_plugins, x):
    model = relu_chain()
    want = np.maximum(2 * x, 0)
    isolated = session(model, "beta", "process")
    before = counters(isolated)
    np.testing.assert_array_equal(isolated.run(None, {"x": x})[0], want)
    assert delta(isolated, before) == (2 * BYTES, 0), "the first run learns y's size: x in, y out"
    for run in range(3):
        before = counters(isolated)
        [y] = isolated.run_with_ort_values(None, {"x": ephost.OrtValue.ortvalue_from_numpy(x)})
        assert delta(isolated, before) == (BYTES, BYTES), f"run {run}: only x copied, y left in shared memory"
        assert y.is_shared()
        np.testing.assert_array_equal(y.numpy(), want)
        del y  # its memory goes back to the provider's outputs, for the next run

    # Outputs the application keeps take a region each, up to 4; then they are copied again.
    kept = []
    for run in range(5):
        before = counters(isolated)
        kept.append(isolated.run(None, {"x": x + run})[0])
        copied, _ = delta(isolated, before)
        assert copied == (BYTES if run < 4 else 2 * BYTES), (run, copied)
    for run, y in enumerate(kept):
        np.testing.assert_array_equal(y, np.maximum(2 * (x + run), 0), err_msg=f"kept output {run}")

    # ep.<name>.isolation_shared_outputs=0: copied out, as before.
    copying = session(model, "beta", "process", isolation_shared_outputs="0")
    for _ in range(2):
        before = counters(copying)
        np.testing.assert_array_equal(copying.run(None, {"x": x})[0], want)
        assert delta(copying, before) == (2 * BYTES, 0)


def test_a_value_between_two_isolated_steps_stays_in_shared_memory(test_plugins, x):
    model = two_steps()
    want = session(model, "alpha", "in_process").run(None, {"x": x})[0]
    np.testing.assert_array_equal(want, (2 * x) * (2 * x))
    isolated = session(model, "alpha", "process")
    copying = session(model, "alpha", "process", isolation_shared_outputs="0")
    for sess in (isolated, copying):
        np.testing.assert_array_equal(sess.run(None, {"x": x})[0], want)  # learns the sizes
    before = counters(isolated)
    np.testing.assert_array_equal(isolated.run(None, {"x": x})[0], want)
    # x copied in twice (Add reads it twice); a written and read twice in place, y written in place.
    assert delta(isolated, before) == (2 * BYTES, 4 * BYTES)
    before = counters(copying)
    np.testing.assert_array_equal(copying.run(None, {"x": x})[0], want)
    assert delta(copying, before) == (6 * BYTES, 0), "x in twice, a out, a in twice, y out"
