"""The process's env: plugin discovery, done once, shared by every session (as onnxruntime's
process-wide environment). Plugins come from EPHOST_PLUGIN_PATH, then the default plugin folder
beside libephost, plus the libraries registered with register_plugin_library.

Provider names. A provider that corresponds to one of ONNX Runtime's execution providers answers
ONNX Runtime's name: the built-in "cpu" is "CPUExecutionProvider", and a plugin that names an ONNX
Runtime EP among its EPContext source keys (a key ending in "ExecutionProvider", e.g. alpha's
"AlphaExecutionProvider") answers that name. get_available_providers(), get_all_providers(),
InferenceSession.get_providers() and get_ep_devices() answer those names, and ephost's own plugin
name for the other providers. Everywhere a provider is named (providers=[...], device_type=...),
both names are accepted: "CPUExecutionProvider" and "cpu" are the same provider."""
import json
import os
import threading

from . import _ephost

_lock = threading.Lock()
_env = None
_log_level = _ephost.LogLevel.WARNING


def default_env():
    """The env every session of this process uses, created (and its plugins discovered) on first use."""
    global _env
    with _lock:
        if _env is None:
            _env = _ephost.Env(_log_level)
        return _env


def register_plugin_library(path):
    """Loads the provider plugin library at `path` for every session created afterwards. The attempt
    is added to get_plugin_report() whether or not it succeeds; a failure raises the error that says
    why (e.g. NoSuchFile, or Fail with the negotiation's reason)."""
    default_env().register_plugin_library(os.fspath(path))


def get_plugin_report():
    """Every plugin library discovery considered: a list of dicts with its path, name, version,
    source keys, negotiated ABI version, whether it was loaded and, when not, why."""
    return json.loads(default_env().plugin_report_json())


# -- provider names ----------------------------------------------------------------------------------
_BUILTIN_ORT_NAMES = {"cpu": "CPUExecutionProvider"}


def _ort_name_of(plugin):
    """ONNX Runtime's name of a plugin (a plugin report entry), or None when it has none."""
    if plugin.get("name") in _BUILTIN_ORT_NAMES:
        return _BUILTIN_ORT_NAMES[plugin["name"]]
    for key in plugin.get("context_source_keys") or ():
        if key.endswith("ExecutionProvider"):
            return key
    return None


def _name_tables():
    """(ephost name -> public name, any accepted name -> ephost name) over the loaded plugins."""
    public, ephost_names = {}, {}
    for plugin in get_plugin_report():
        if not plugin.get("loaded"):
            continue
        name = plugin["name"]
        ort = _ort_name_of(plugin)
        public[name] = ort or name
        ephost_names[name] = name
        if ort:
            ephost_names[ort] = name
    for name, ort in _BUILTIN_ORT_NAMES.items():
        public.setdefault(name, ort)
        ephost_names.setdefault(ort, name)
    return public, ephost_names


def public_provider_name(ephost_name):
    """The name a provider answers: ONNX Runtime's where it has one, else ephost's."""
    return _name_tables()[0].get(ephost_name, ephost_name)


def ephost_provider_name(name):
    """ephost's name of a provider named either way ("CPUExecutionProvider" -> "cpu"); a device
    suffix ("<name>:<index>") is kept. Unknown names are passed on unchanged, for the session to
    refuse with the list of providers found."""
    base, sep, index = name.partition(":")
    return _name_tables()[1].get(base, base) + sep + index


def get_available_providers():
    """The names of the providers sessions can use, in default priority order (the built-in CPU
    provider last), as onnxruntime.get_available_providers(): ONNX Runtime's names where a provider
    has one (module docstring)."""
    loaded = [p for p in get_plugin_report() if p.get("loaded")]
    loaded.sort(key=lambda p: (p.get("name") == "cpu", -int(p.get("default_priority", 0))))
    return [_ort_name_of(p) or p["name"] for p in loaded]


def get_all_providers():
    """Every provider discovery found, usable or not (onnxruntime.get_all_providers() lists the
    providers a build knows): the available ones first, then the plugins that were skipped (see
    get_plugin_report() for why)."""
    names = get_available_providers()
    for p in get_plugin_report():
        name = _ort_name_of(p) or p.get("name")
        if name and name not in names:
            names.append(name)
    return names


def get_device():
    """"GPU" when a loaded plugin drives a GPU, else "CPU" (as onnxruntime.get_device())."""
    types = {d["device_type"] for d in default_env().devices() if d["plugin"] != "cpu"}
    return "GPU" if int(_ephost_device_type("GPU")) in types else "CPU"


def set_default_logger_severity(level):
    """The minimum severity logged, process-wide: 0 verbose, 1 info, 2 warning (default), 3 error,
    4 fatal (as onnxruntime.set_default_logger_severity)."""
    global _log_level
    if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= 4:
        raise _ephost.InvalidArgument(
            f"set_default_logger_severity takes 0 (verbose) to 4 (fatal), got {level!r}")
    _log_level = _ephost.LogLevel(level)
    _ephost.set_default_log_level(_log_level)


# -- devices -------------------------------------------------------------------------------------------
_DEVICE_TYPE_NAMES = {0: "CPU", 1: "GPU", 2: "NPU", 3: "ACCELERATOR"}
# onnxruntime's device_type names of a device kind (OrtValue, IOBinding): the first device of that kind.
_GENERIC_DEVICE_TYPES = {"gpu": 1, "cuda": 1, "dml": 1, "rocm": 1, "webgpu": 1, "npu": 2, "cann": 2}


def _ephost_device_type(name):
    return {v: k for k, v in _DEVICE_TYPE_NAMES.items()}[name]


def resolve_device(device_type, device_id=0):
    """(device_type, device_id) as onnxruntime takes them -> an _ephost.DeviceName. "cpu": host memory;
    a provider's name (either name, module docstring): its device `device_id`; "cuda"/"gpu"
    ("npu"): the `device_id`-th GPU (NPU) among the loaded plugins' devices."""
    if not isinstance(device_type, str):
        raise _ephost.InvalidArgument(f"device_type must be a str such as 'cpu', got {device_type!r}")
    if isinstance(device_id, bool) or not isinstance(device_id, int) or device_id < 0:
        raise _ephost.InvalidArgument(f"device_id must be an int >= 0, got {device_id!r}")
    lowered = device_type.lower()
    if lowered == "cpu":
        return _ephost.DeviceName()
    devices = default_env().devices()
    described = ", ".join(f"{d['plugin']}:{d['index']} ({_DEVICE_TYPE_NAMES.get(d['device_type'], '?')})"
                          for d in devices) or "none"
    ephost_names = _name_tables()[1]
    if device_type in ephost_names:
        plugin = ephost_names[device_type]
        if plugin == "cpu":
            return _ephost.DeviceName()
        if not any(d["plugin"] == plugin and d["index"] == device_id for d in devices):
            raise _ephost.InvalidArgument(
                f"provider '{device_type}' has no device {device_id}: pick one of the devices found ({described})")
        return _ephost.DeviceName(plugin, device_id)
    if lowered in _GENERIC_DEVICE_TYPES:
        kind = _GENERIC_DEVICE_TYPES[lowered]
        matching = [d for d in devices if d["device_type"] == kind and d["plugin"] != "cpu"]
        if device_id >= len(matching):
            raise _ephost.InvalidArgument(
                f"device_type '{device_type}' device_id {device_id}: the loaded plugins drive "
                f"{len(matching)} {_DEVICE_TYPE_NAMES[kind]} device(s) (devices found: {described}); register "
                f"the plugin of your device (register_execution_provider_library) or name it as device_type")
        return _ephost.DeviceName(matching[device_id]["plugin"], matching[device_id]["index"])
    raise _ephost.InvalidArgument(
        f"unknown device_type '{device_type}': use 'cpu', 'cuda'/'gpu', 'npu' or a provider's name "
        f"(devices found: {described})")


def device_type_name(device):
    """The device_type a value on `device` (an _ephost.DeviceName) answers: 'cpu' for host memory, else
    the plugin's (ephost) name, e.g. 'fakedev'; either is taken back as device_type."""
    return device.provider or "cpu"
