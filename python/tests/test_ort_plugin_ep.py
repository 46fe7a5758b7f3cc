"""An ONNX Runtime plugin EP library (tests/plugins/ort_ep: "ortadd", in C against ONNX Runtime's ABI)
used from Python exactly as onnxruntime 1.22+'s documentation shows: registered with
register_execution_provider_library, its devices from get_ep_devices(), put on a session with
add_provider_for_devices (its options as onnxruntime passes them) or picked by a selection policy, and
unregistered."""
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import ephost as ort
from conftest import make_model


def add_mul_model():
    """z = (x + y) * y on float [2, 4]."""
    return make_model([helper.make_node("Add", ["x", "y"], ["s"], name="add"),
                       helper.make_node("Mul", ["s", "y"], ["z"], name="mul")],
                      [("x", TensorProto.FLOAT, [2, 4]), ("y", TensorProto.FLOAT, [2, 4])],
                      [("z", TensorProto.FLOAT, [2, 4])])


@pytest.fixture(scope="module")
def ortadd(test_plugin_dir):
    path = os.path.join(test_plugin_dir, "ort_ep", "good", "libephost_test_ort_good.so")
    ort.register_execution_provider_library("ortadd_library", path)
    yield path
    ort.unregister_execution_provider_library("ortadd_library")


def inputs():
    x = np.arange(8, dtype=np.float32).reshape(2, 4) - 3
    y = np.full((2, 4), 1.5, dtype=np.float32)
    return {"x": x, "y": y}, (x + y) * y


def test_register_lists_the_plugins_devices(ortadd):
    assert "ortadd" in ort.get_available_providers()
    devices = [d for d in ort.get_ep_devices() if d.ep_name == "ortadd"]
    assert devices, "get_ep_devices() lists no device of the ONNX Runtime plugin EP"
    assert devices[0].device.type == ort.OrtHardwareDeviceType.CPU
    assert devices[0].ep_vendor == "ephost tests"
    assert devices[0].ep_metadata["version"] == "1.2.3"
    assert devices[0].ep_metadata["library_path"] == ortadd
    # What the factory gave the device (CreateEpDevice): its options as ONNX Runtime shows them.
    assert devices[0].ep_options == {"skip_op": ""}
    report = {p["name"]: p for p in ort.get_plugin_report()}["ortadd"]
    assert report["loaded"] and "ONNX Runtime plugin EP (API 30" in report["sdk_version"]


def test_add_provider_for_devices_runs_the_plugin_with_its_options(ortadd):
    device = next(d for d in ort.get_ep_devices() if d.ep_name == "ortadd")
    feeds, expected = inputs()

    so = ort.SessionOptions()
    so.add_provider_for_devices([device], {})
    session = ort.InferenceSession(add_mul_model(), so)
    assert session.get_providers()[0] == "ortadd"
    np.testing.assert_array_equal(session.run(None, feeds)[0], expected)
    assert session.get_partition_report()["nodes_per_provider"] == {"ortadd": 2}

    # Options reach the plugin's CreateEp as "ep.ortadd.<key>" session config entries.
    skip = ort.SessionOptions()
    skip.add_provider_for_devices([device], {"skip_op": "Mul"})
    session = ort.InferenceSession(add_mul_model(), skip)
    np.testing.assert_array_equal(session.run(None, feeds)[0], expected)
    assert session.get_partition_report()["nodes_per_provider"] == {"ortadd": 1, "cpu": 1}


def test_selection_policy_ranks_the_plugins_cpu_device(ortadd):
    feeds, expected = inputs()
    so = ort.SessionOptions()
    so.set_provider_selection_policy(ort.OrtExecutionProviderDevicePolicy.PREFER_CPU)
    assert so.get_session_config_entry("session.ep_selection_policy") == "prefer_cpu"
    session = ort.InferenceSession(add_mul_model(), so)
    np.testing.assert_array_equal(session.run(None, feeds)[0], expected)


def test_unregister_forgets_the_name_and_allows_registering_again(ortadd):
    with pytest.raises(ort.InvalidArgument, match="already registered as 'ortadd_library'"):
        ort.register_execution_provider_library("ortadd_library", ortadd)
    ort.unregister_execution_provider_library("ortadd_library")
    with pytest.raises(ort.InvalidArgument, match="no execution provider library is registered as 'ortadd_library'"):
        ort.unregister_execution_provider_library("ortadd_library")
    ort.register_execution_provider_library("ortadd_library", ortadd)
    assert any(d.ep_name == "ortadd" for d in ort.get_ep_devices())


def test_a_provider_bridge_library_is_refused_saying_why(test_plugin_dir):
    path = os.path.join(test_plugin_dir, "ort_ep", "provider_bridge", "libephost_test_ort_provider_bridge.so")
    with pytest.raises(ort.EphostError, match="provider-bridge"):
        ort.register_execution_provider_library("bridge", path)
    # A refused library leaves its name free.
    with pytest.raises(ort.InvalidArgument, match="no execution provider library is registered as 'bridge'"):
        ort.unregister_execution_provider_library("bridge")


def test_each_factory_of_a_library_has_its_own_devices(test_plugin_dir):
    """A library with two factories ("ortadd", "ortadd2") is two providers: get_ep_devices() shows each
    factory's device under its own ep_name, and picking the second's device runs its EP. In a fresh
    interpreter, so that this process's env (where "ortadd" is registered already) is left as it is."""
    import json
    import subprocess
    import sys

    path = os.path.join(test_plugin_dir, "ort_ep", "two_factories", "libephost_test_ort_two_factories.so")
    script = f"""
import json
import numpy as np
import ephost as ort
import test_ort_plugin_ep as t
ort.register_execution_provider_library("two", {path!r})
mine = [d for d in ort.get_ep_devices() if d.ep_metadata.get("library_path") == {path!r}]
second = next(d for d in mine if d.ep_name == "ortadd2")
so = ort.SessionOptions()
so.add_provider_for_devices([second], {{}})
session = ort.InferenceSession(t.add_mul_model(), so)
feeds, expected = t.inputs()
np.testing.assert_array_equal(session.run(None, feeds)[0], expected)
print(json.dumps({{"devices": [[d.ep_name, d.device.device_id, d.device.type.name] for d in mine],
                  "providers": session.get_providers()}}))
"""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(__file__), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(map(tuple, result["devices"])) == [("ortadd", 0, "CPU"), ("ortadd2", 0, "CPU")]
    assert result["providers"][0] == "ortadd2"
