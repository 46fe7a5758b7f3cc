"""Discovery from Python: get_available_providers, get_plugin_report, register_plugin_library."""
import os

import pytest

import ephost


def test_registered_plugins_become_available(test_plugins):
    providers = ephost.get_available_providers()
    assert providers[-1] == "CPUExecutionProvider", "onnxruntime's name of the built-in cpu provider"
    assert providers.index("AlphaExecutionProvider") < providers.index("BetaExecutionProvider"), \
        "alpha's default priority (100) is beta's (50)"


def test_plugin_report_describes_each_library(test_plugins, test_plugin_dir):
    report = {p["name"]: p for p in ephost.get_plugin_report() if p["loaded"]}
    alpha = report["alpha"]
    assert alpha["path"] == os.path.join(test_plugin_dir, "libephost_test_alpha.so")
    assert alpha["version"] == "1.0.0" and alpha["context_source_keys"] == ["ALPHA", "AlphaExecutionProvider"]
    assert alpha["abi_version"] >= 1
    assert report["cpu"]["builtin"]


def test_registering_a_missing_library_fails():
    with pytest.raises(ephost.EphostError, match="/nonexistent/libmissing.so"):
        ephost.register_plugin_library("/nonexistent/libmissing.so")


def test_provider_states_say_where_each_provider_runs(test_plugins):
    from onnx import TensorProto, helper
    from conftest import make_model
    import numpy as np
    model = make_model([helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
                       [("x", TensorProto.FLOAT, [2, 3])], [("y", TensorProto.FLOAT, [2, 3])])
    options = ephost.SessionOptions()
    options.add_session_config_entry("session.provider_isolation", "process")
    session = ephost.InferenceSession(model, options, providers=["BetaExecutionProvider"])
    x = np.array([[-1, 2, -3], [4, -5, 6]], dtype=np.float32)
    np.testing.assert_allclose(session.run(None, {"x": x})[0], np.maximum(2 * x, 0))
    states = session.get_provider_states()
    assert [s["provider"] for s in states] == ["beta", "cpu"]
    assert states[0]["state"] == "running" and states[0]["process_id"] > 0 and states[0]["failures"] == 0
    assert states[1] == {"provider": "cpu", "state": "in_process", "failures": 0, "process_id": -1,
                         "last_failure": ""}


def test_provider_state_callback_hears_a_restart(test_plugins):
    import signal
    import time
    from onnx import TensorProto, helper
    from conftest import make_model
    import numpy as np
    model = make_model([helper.make_node("Add", ["x", "x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
                       [("x", TensorProto.FLOAT, [2, 3])], [("y", TensorProto.FLOAT, [2, 3])])
    heard = []
    options = ephost.SessionOptions()
    options.add_session_config_entry("session.provider_isolation", "process")
    options.set_provider_state_callback(heard.append)
    session = ephost.InferenceSession(model, options, providers=["BetaExecutionProvider"])
    x = np.array([[-1, 2, -3], [4, -5, 6]], dtype=np.float32)
    np.testing.assert_allclose(session.run(None, {"x": x})[0], np.maximum(2 * x, 0))
    assert heard == [], "nothing changed yet"
    first = session.get_provider_states()[0]["process_id"]
    os.kill(first, signal.SIGKILL)
    for _ in range(2000):  # until it has ended (its parent, the session, reaps it on its next call)
        if os.waitid(os.P_PID, first, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            break
        time.sleep(0.005)
    np.testing.assert_allclose(session.run(None, {"x": x})[0], np.maximum(2 * x, 0))
    assert [(s["provider"], s["state"], s["failures"]) for s in heard] == [("beta", "restarting", 1),
                                                                         ("beta", "running", 1)], heard
    assert "SIGKILL" in heard[0]["last_failure"] and heard[0]["process_id"] == -1
    assert heard[1]["process_id"] > 0 and heard[1]["process_id"] != first
    assert session.get_provider_states()[0]["process_id"] == heard[1]["process_id"]


def test_provider_state_callback_must_be_callable():
    with pytest.raises(ephost.InvalidArgument, match="callable"):
        ephost.SessionOptions().set_provider_state_callback(42)
