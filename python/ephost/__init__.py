"""ephost: run ONNX models on execution providers that are plugins.

The names follow onnxruntime's Python package, so that code written for it switches by changing the
import::

    import ephost as ort
    session = ort.InferenceSession("model.onnx", providers=["example", "cpu"])
    outputs = session.run(None, {"x": x})

Errors raise ephost.EphostError subclasses named after the status codes (InvalidArgument,
NoSuchFile, InvalidGraph, ...), each carrying the library's message; a run stopped by
RunOptions.terminate raises Cancelled, one past RunOptions.timeout_ms DeadlineExceeded (both Fail).
"""
from ._ephost import (  # noqa: F401  (the exception classes, one per status code)
    Cancelled,
    DeadlineExceeded,
    EngineError,
    EphostError,
    EPFail,
    Fail,
    InvalidArgument,
    InvalidGraph,
    InvalidProtobuf,
    ModelLoaded,
    NoModel,
    NoSuchFile,
    NotImplemented,
    RuntimeException,
)
from ._ephost import version as _library_version
from ._env import (
    get_all_providers,
    get_available_providers,
    get_device,
    get_plugin_report,
    register_plugin_library,
    set_default_logger_severity,
)
from ._ep_devices import (
    OrtEpDevice,
    OrtExecutionProviderDevicePolicy,
    OrtHardwareDevice,
    OrtHardwareDeviceType,
    get_ep_devices,
    register_execution_provider_library,
    unregister_execution_provider_library,
)
from ._inference_session import InferenceSession, ModelMetadata, NodeArg
from ._io_binding import IOBinding
from ._model_compiler import ModelCompiler, compile_model
from ._ort_value import OrtValue
from ._run_options import RunOptions
from ._session_options import ExecutionMode, GraphOptimizationLevel, SessionOptions

__version__ = _library_version()


def get_version_string():
    """The libephost version, as onnxruntime.get_version_string()."""
    return __version__


__all__ = [
    "Cancelled",
    "DeadlineExceeded",
    "EngineError",
    "EphostError",
    "EPFail",
    "ExecutionMode",
    "Fail",
    "GraphOptimizationLevel",
    "IOBinding",
    "InferenceSession",
    "InvalidArgument",
    "InvalidGraph",
    "InvalidProtobuf",
    "ModelCompiler",
    "ModelLoaded",
    "ModelMetadata",
    "NoModel",
    "NoSuchFile",
    "NodeArg",
    "NotImplemented",
    "OrtEpDevice",
    "OrtExecutionProviderDevicePolicy",
    "OrtHardwareDevice",
    "OrtHardwareDeviceType",
    "OrtValue",
    "RunOptions",
    "RuntimeException",
    "SessionOptions",
    "compile_model",
    "get_all_providers",
    "get_available_providers",
    "get_device",
    "get_ep_devices",
    "get_plugin_report",
    "get_version_string",
    "register_execution_provider_library",
    "register_plugin_library",
    "set_default_logger_severity",
    "unregister_execution_provider_library",
]
