"""Every exception class: named after its status code as onnxruntime names them, derived from
ephost.EphostError (a RuntimeError), carrying the library's message; and raised by real failures."""
import os

import numpy as np
import pytest

import ephost
from conftest import binary_model

CLASSES = {
    1: "Fail", 2: "InvalidArgument", 3: "NoSuchFile", 4: "NoModel", 5: "EngineError", 6: "RuntimeException",
    7: "InvalidProtobuf", 8: "ModelLoaded", 9: "NotImplemented", 10: "InvalidGraph", 11: "EPFail",
}
CODES = {
    1: "FAIL", 2: "INVALID_ARGUMENT", 3: "NO_SUCHFILE", 4: "NO_MODEL", 5: "ENGINE_ERROR", 6: "RUNTIME_EXCEPTION",
    7: "INVALID_PROTOBUF", 8: "MODEL_LOADED", 9: "NOT_IMPLEMENTED", 10: "INVALID_GRAPH", 11: "EP_FAIL",
}


@pytest.mark.parametrize("code", sorted(CLASSES))
def test_each_status_code_raises_its_class(code):
    cls = getattr(ephost, CLASSES[code])
    assert issubclass(cls, ephost.EphostError) and issubclass(cls, RuntimeError)
    assert cls.code == CODES[code]
    with pytest.raises(cls) as raised:
        ephost._ephost.raise_status(code, f"message of {code}")
    assert str(raised.value) == f"message of {code}"
    others = [getattr(ephost, n) for c, n in CLASSES.items() if c != code]
    assert not any(isinstance(raised.value, o) for o in others)


def test_no_such_file():
    with pytest.raises(ephost.NoSuchFile, match="/nonexistent/model.onnx"):
        ephost.InferenceSession("/nonexistent/model.onnx")


def test_invalid_protobuf():
    with pytest.raises(ephost.InvalidProtobuf, match="ModelProto"):
        ephost.InferenceSession(b"\x08\x07garbage")


def test_invalid_graph(test_plugins):
    options = ephost.SessionOptions()
    options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    with pytest.raises(ephost.InvalidGraph):
        ephost.InferenceSession(binary_model("Sub"), options, providers=["alpha"])


def test_invalid_argument():
    with pytest.raises(ephost.InvalidArgument, match="provider 'nosuch' is not available"):
        ephost.InferenceSession(binary_model("Add"), providers=["nosuch"])


def test_ep_fail(test_plugins):
    session = ephost.InferenceSession(binary_model("Add"), providers=[("alpha", {"misbehave": "fail_compute"})])
    x = np.ones((1, 3), np.float32)
    with pytest.raises(ephost.EPFail, match="alpha: injected compute failure"):
        session.run(None, {"x": x, "y": x})


def test_run_options_of_another_type_are_refused():
    session = ephost.InferenceSession(binary_model("Add"))
    x = np.ones((1, 3), np.float32)
    with pytest.raises(ephost.InvalidArgument, match="run_options must be an ephost.RunOptions"):
        session.run(None, {"x": x, "y": x}, run_options=object())


def test_not_implemented_is_also_pythons_not_implemented_error():
    options = ephost.SessionOptions()
    with pytest.raises(ephost.NotImplemented, match="provider plugin") as raised:
        options.register_custom_ops_library("libcustom.so")
    assert isinstance(raised.value, NotImplementedError) and isinstance(raised.value, ephost.EphostError)
    assert raised.value.code == "NOT_IMPLEMENTED"


def test_a_plugin_that_cannot_be_loaded_says_why(test_plugin_dir):
    broken = os.path.join(test_plugin_dir, "libephost_broken_bad_version.so")
    with pytest.raises(ephost.EphostError, match="not semver"):
        ephost.register_plugin_library(broken)
    entry = [p for p in ephost.get_plugin_report() if p["path"] == broken]
    assert entry and not entry[0]["loaded"] and "semver" in entry[0]["reason"]


@pytest.mark.parametrize("code,name,code_name", [(100, "Cancelled", "CANCELLED"),
                                                 (101, "DeadlineExceeded", "DEADLINE_EXCEEDED")])
def test_a_stopped_run_raises_a_fail_of_its_own(code, name, code_name):
    cls = getattr(ephost, name)
    assert issubclass(cls, ephost.Fail), "onnxruntime raises Fail for a terminated run: `except Fail` still sees it"
    assert cls.code == code_name
    with pytest.raises(cls, match="stopped"):
        ephost._ephost.raise_status(code, "run stopped")
