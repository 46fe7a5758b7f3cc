"""SessionOptions: onnxruntime's attributes, every documented key through add_session_config_entry,
misspelled keys refused at once, and options that change what a session does."""
import os
import re

import numpy as np
import pytest

import ephost
from conftest import binary_model


def documented_keys(source_dir):
    header = open(os.path.join(source_dir, "plugin_api/include/ephost/ephost_session_options_keys.h")).read()
    keys = dict(re.findall(r'static const char\* const kEphostSessionOptions(\w+)\s*=\s*"([^"]*)"', header))
    keys.pop("ProviderOptionPrefix")  # a prefix, not a key
    return keys


def test_the_package_knows_every_documented_key(source_dir):
    assert ephost._ephost.documented_config_keys() == documented_keys(source_dir)


def test_every_documented_key_is_accepted(source_dir):
    options = ephost.SessionOptions()
    for key in documented_keys(source_dir).values():
        if key.endswith("."):
            key += "N"  # a prefix (session.free_dimension_override.<name>)
            options.add_session_config_entry(key, "1")
            assert options.get_session_config_entry(key) == "1"
            continue
        options.add_session_config_entry(key, "0")
        assert options.get_session_config_entry(key) == "0"


def test_attributes_as_onnxruntime_has_them():
    options = ephost.SessionOptions()
    assert options.graph_optimization_level == ephost.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert options.intra_op_num_threads == 0
    assert options.enable_mem_pattern and options.enable_mem_reuse
    options.graph_optimization_level = ephost.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.intra_op_num_threads = 2
    options.enable_mem_pattern = False
    options.enable_mem_reuse = False
    assert options.get_session_config_entry("session.graph_optimization_level") == "1"
    assert options.get_session_config_entry("session.intra_op_num_threads") == "2"
    assert options.get_session_config_entry("session.enable_mem_pattern") == "0"
    assert options.get_session_config_entry("session.enable_mem_reuse") == "0"
    assert options.graph_optimization_level == ephost.GraphOptimizationLevel.ORT_ENABLE_BASIC
    x = np.ones((2, 3), np.float32)
    [z] = ephost.InferenceSession(binary_model("Add"), options).run(None, {"x": x, "y": x})
    np.testing.assert_array_equal(z, x + x)


def test_bad_values_and_misspelled_keys_are_refused_at_once():
    options = ephost.SessionOptions()
    with pytest.raises(ephost.InvalidArgument, match="did you mean 'session.disable_cpu_ep_fallback'"):
        options.add_session_config_entry("session.disable_cpu_ep_fallbak", "1")
    with pytest.raises(ephost.InvalidArgument, match="graph_optimization_level"):
        options.graph_optimization_level = 5
    with pytest.raises(ephost.InvalidArgument, match="intra_op_num_threads"):
        options.intra_op_num_threads = -1
    with pytest.raises(ephost.InvalidArgument, match="not set"):
        options.get_session_config_entry("ep.context_enable")
    options.add_session_config_entry("session.disable_cpu_ep_fallback", "maybe")  # checked with the session
    with pytest.raises(ephost.InvalidArgument, match="maybe"):
        ephost.InferenceSession(binary_model("Add"), options)


def test_disable_cpu_ep_fallback_makes_unclaimed_nodes_an_error(test_plugins):
    options = ephost.SessionOptions()
    options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    with pytest.raises(ephost.InvalidGraph, match="no provider claimed 1 node"):
        ephost.InferenceSession(binary_model("Sub"), options, providers=["alpha"])
    ephost.InferenceSession(binary_model("Add"), options, providers=["alpha"])


def test_profiling_writes_a_chrome_trace_as_onnxruntime(tmp_path):
    import json
    options = ephost.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "prof")
    session = ephost.InferenceSession(binary_model("Add"), options)
    x = np.ones((2, 3), np.float32)
    session.run(None, {"x": x, "y": x})
    path = session.end_profiling()
    assert os.path.basename(path).startswith("prof_") and path.endswith(".json")
    events = json.load(open(path))["traceEvents"]
    assert [e["name"] for e in events if e["cat"] == "session"].count("model run") == 1
    assert any(e["cat"] == "node" and e["args"]["provider"] for e in events)  # alpha may hold Add
    with pytest.raises(ephost.InvalidArgument, match="session.enable_profiling"):
        ephost.InferenceSession(binary_model("Add")).end_profiling()


def test_free_dimension_override_by_name_makes_inputs_static():
    options = ephost.SessionOptions()
    options.add_free_dimension_override_by_name("N", 2)
    assert options.get_session_config_entry("session.free_dimension_override.N") == "2"
    session = ephost.InferenceSession(binary_model("Add"), options)
    assert [i.shape for i in session.get_inputs()] == [[2, 3], [2, 3]]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    [z] = session.run(None, {"x": x, "y": x})
    np.testing.assert_array_equal(z, x + x)
    big = np.ones((4, 3), np.float32)
    with pytest.raises(ephost.InvalidArgument, match=r"session\.free_dimension_override\.N=2"):
        session.run(None, {"x": big, "y": big})
    with pytest.raises(ephost.InvalidArgument, match="int > 0"):
        options.add_free_dimension_override_by_name("N", 0)
    with pytest.raises(ephost.InvalidArgument, match="positive integer"):
        bad = ephost.SessionOptions()
        bad.add_session_config_entry("session.free_dimension_override.N", "x")
        ephost.InferenceSession(binary_model("Add"), bad)
