"""The process's env: plugin discovery, done once, shared by every session (as onnxruntime's
process-wide environment). Plugins come from EPHOST_PLUGIN_PATH, then the default plugin folder
beside libephost, plus the libraries registered with register_plugin_library."""
import json
import os
import threading

from . import _ephost

_lock = threading.Lock()
_env = None


def default_env():
    """The env every session of this process uses, created (and its plugins discovered) on first use."""
    global _env
    with _lock:
        if _env is None:
            _env = _ephost.Env()
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


def get_available_providers():
    """The names of the providers sessions can use, in default priority order (the built-in "cpu"
    last), as onnxruntime.get_available_providers()."""
    loaded = [p for p in get_plugin_report() if p.get("loaded")]
    loaded.sort(key=lambda p: (p.get("name") == "cpu", -int(p.get("default_priority", 0))))
    return [p["name"] for p in loaded]
