"""ONNX Runtime 1.22's plugin-EP API on ephost's plugins and devices (application API 3):

    ort.register_execution_provider_library(name, path)   loads a plugin library (register_plugin_library)
    ort.unregister_execution_provider_library(name)       forgets the registration name
    ort.get_ep_devices()                                  every (provider, device) pair: OrtEpDevice
    SessionOptions.add_provider_for_devices(devices, options)   that provider on that device
    SessionOptions.set_provider_selection_policy(policy)         session.ep_selection_policy

ephost never unloads a plugin library while the process runs (sessions and values may still use it):
unregister_execution_provider_library forgets the name, so that it may be registered again, and the
plugin stays available."""
import enum
import os
import threading

from . import _ephost
from ._env import _DEVICE_TYPE_NAMES, _ort_name_of, default_env, get_plugin_report, register_plugin_library


class OrtHardwareDeviceType(enum.IntEnum):
    """As onnxruntime.OrtHardwareDeviceType."""

    CPU = 0
    GPU = 1
    NPU = 2


class OrtExecutionProviderDevicePolicy(enum.IntEnum):
    """As onnxruntime.OrtExecutionProviderDevicePolicy. ephost's selection policies
    (session.ep_selection_policy) take them: PREFER_CPU/GPU/NPU as they say, MAX_PERFORMANCE prefers
    a GPU, MAX_EFFICIENCY and MIN_OVERALL_POWER an NPU (as onnxruntime's default policies do), DEFAULT
    none (providers by their default priority)."""

    DEFAULT = 0
    PREFER_CPU = 1
    PREFER_NPU = 2
    PREFER_GPU = 3
    MAX_PERFORMANCE = 4
    MAX_EFFICIENCY = 5
    MIN_OVERALL_POWER = 6


_POLICY_VALUES = {
    OrtExecutionProviderDevicePolicy.DEFAULT: "",
    OrtExecutionProviderDevicePolicy.PREFER_CPU: "prefer_cpu",
    OrtExecutionProviderDevicePolicy.PREFER_NPU: "prefer_npu",
    OrtExecutionProviderDevicePolicy.PREFER_GPU: "prefer_gpu",
    OrtExecutionProviderDevicePolicy.MAX_PERFORMANCE: "prefer_gpu",
    OrtExecutionProviderDevicePolicy.MAX_EFFICIENCY: "prefer_npu",
    OrtExecutionProviderDevicePolicy.MIN_OVERALL_POWER: "prefer_npu",
}


def selection_policy_value(policy):
    """The session.ep_selection_policy value of an OrtExecutionProviderDevicePolicy (or of ephost's
    own value, e.g. "max_coverage")."""
    if isinstance(policy, str) and policy in ("", "prefer_cpu", "prefer_gpu", "prefer_npu", "max_coverage"):
        return policy
    try:
        return _POLICY_VALUES[OrtExecutionProviderDevicePolicy(policy)]
    except ValueError:
        raise _ephost.InvalidArgument(
            f"unknown provider selection policy {policy!r}: give an ort.OrtExecutionProviderDevicePolicy "
            f"(e.g. PREFER_GPU) or one of ephost's: 'prefer_cpu', 'prefer_gpu', 'prefer_npu', "
            f"'max_coverage'") from None


class OrtHardwareDevice:
    """A device, as onnxruntime.OrtHardwareDevice: type, vendor, vendor_id (0: unknown), device_id
    (the plugin's index of it) and metadata (name, driver version, architecture, memory)."""

    def __init__(self, report):
        self.type = OrtHardwareDeviceType(min(report["device_type"], 2))
        self.vendor = report["vendor"]
        self.vendor_id = 0
        self.device_id = report["index"]
        self.metadata = {"name": report["name"], "driver_version": report["driver_version"],
                         "hardware_architecture": report["hardware_architecture"],
                         "memory_bytes": str(report["memory_bytes"])}

    def __repr__(self):
        return f"OrtHardwareDevice(type={self.type.name}, vendor={self.vendor!r}, device_id={self.device_id})"


class OrtEpDevice:
    """A provider on one device, as onnxruntime.OrtEpDevice: ep_name (the provider's name, ONNX
    Runtime's where it has one), ep_vendor, ep_metadata (the plugin's version and library, and for an ONNX
    Runtime plugin EP the metadata its factory gave the device), ep_options (an ONNX Runtime plugin EP's
    device options; empty for ephost plugins, which take their options per session) and device."""

    def __init__(self, plugin, device_report):
        self._plugin = plugin["name"]
        self.ep_name = _ort_name_of(plugin) or plugin["name"]
        self.ep_vendor = plugin.get("vendor", "")
        self.ep_metadata = {"version": plugin.get("version", ""), "library_path": plugin.get("path", ""),
                            "ephost_name": plugin["name"]}
        self.ep_options = {}
        # An ONNX Runtime plugin EP's device carries what its factory gave it (CreateEpDevice): its
        # metadata joins the plugin's, its options are its defaults.
        for d in plugin.get("devices", []):
            if d.get("index") == device_report["index"]:
                self.ep_metadata.update(d.get("ep_metadata", {}))
                self.ep_options = dict(d.get("ep_options", {}))
        self.device = OrtHardwareDevice(device_report)

    def _provider_request(self):
        return f"{self._plugin}:{self.device.device_id}"

    def __repr__(self):
        return f"OrtEpDevice(ep_name={self.ep_name!r}, device={self.device!r})"


def get_ep_devices():
    """Every loaded provider on every device it drives (onnxruntime.get_ep_devices()), in default
    priority order; the built-in CPU provider ("CPUExecutionProvider") on the host CPU last."""
    plugins = {p["name"]: p for p in get_plugin_report() if p.get("loaded")}
    reports = list(default_env().devices())
    if not any(r["plugin"] == "cpu" for r in reports) and "cpu" in plugins:
        reports.append({"plugin": "cpu", "index": 0, "device_type": 0, "vendor": plugins["cpu"].get("vendor", ""),
                        "name": "host CPU", "driver_version": "", "memory_bytes": 0,
                        "hardware_architecture": plugins["cpu"].get("hardware_architecture", "")})
    reports.sort(key=lambda r: (r["plugin"] == "cpu", -int(plugins.get(r["plugin"], {}).get("default_priority", 0))))
    return [OrtEpDevice(plugins[r["plugin"]], r) for r in reports if r["plugin"] in plugins]


_registered = {}
_registered_lock = threading.Lock()


def register_execution_provider_library(registration_name, path):
    """Loads the plugin library at `path` under `registration_name` (onnxruntime 1.22's name for
    register_plugin_library): its providers and devices appear in get_available_providers() and
    get_ep_devices()."""
    if not isinstance(registration_name, str) or not registration_name:
        raise _ephost.InvalidArgument("registration_name must be a non-empty str")
    with _registered_lock:
        if registration_name in _registered:
            raise _ephost.InvalidArgument(
                f"an execution provider library is already registered as '{registration_name}' "
                f"({_registered[registration_name]}): unregister it first or pick another name")
        # A library unregistered earlier is still loaded (module docstring): registering it again only
        # gives it the name back.
        loaded = {os.path.realpath(p["path"]) for p in get_plugin_report() if p.get("loaded") and p.get("path")}
        if os.path.realpath(os.fspath(path)) not in loaded:
            register_plugin_library(path)
        _registered[registration_name] = os.fspath(path)


def unregister_execution_provider_library(registration_name):
    """Forgets `registration_name` (module docstring: the library itself stays loaded)."""
    with _registered_lock:
        if registration_name not in _registered:
            known = ", ".join(sorted(_registered)) or "none"
            raise _ephost.InvalidArgument(
                f"no execution provider library is registered as '{registration_name}' (registered: {known})")
        del _registered[registration_name]
