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
