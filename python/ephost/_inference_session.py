"""InferenceSession, as onnxruntime's: created from a path or the model's bytes, with session options
and providers in registration-priority order; run takes and returns numpy arrays (sequences as lists,
empty optionals as None) and releases the GIL while the model runs."""
import json
import os

from . import _ephost
from ._env import default_env
from ._session_options import SessionOptions

# onnxruntime's name of the CPU provider, accepted for ephost's built-in "cpu" so that code written for
# onnxruntime runs unchanged.
_PROVIDER_ALIASES = {"CPUExecutionProvider": "cpu"}


class NodeArg:
    """An input or output of a model, as onnxruntime.NodeArg: its name, its ONNX type string
    ("tensor(float)", "seq(tensor(int64))", "optional(tensor(float))") and its shape (ints for fixed
    dims, the symbol's name for a symbolic one, None for an unnamed one; None when the rank is
    unknown)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, type, shape):  # noqa: A002  (onnxruntime's attribute name)
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def _provider_requests(providers, provider_options):
    """providers: names, or (name, options dict) pairs as onnxruntime takes them; provider_options: a
    list of dicts parallel to providers."""
    if providers is None:
        if provider_options is not None:
            raise _ephost.InvalidArgument("provider_options given without providers")
        return []
    if isinstance(providers, str):
        raise _ephost.InvalidArgument("providers must be a list of provider names, not a str")
    providers = list(providers)
    if provider_options is not None and len(provider_options) != len(providers):
        raise _ephost.InvalidArgument(
            f"provider_options has {len(provider_options)} entries for {len(providers)} providers")
    requests = []
    for i, entry in enumerate(providers):
        options = {}
        if isinstance(entry, (tuple, list)) and len(entry) == 2:
            entry, options = entry
        if not isinstance(entry, str):
            raise _ephost.InvalidArgument(f"providers[{i}] must be a name or a (name, options) pair, got {entry!r}")
        if provider_options is not None:
            options = {**options, **provider_options[i]}
        pairs = [(str(k), str(v)) for k, v in options.items()]
        requests.append(_ephost.ProviderRequest(_PROVIDER_ALIASES.get(entry, entry), pairs))
    return requests


def _settings(sess_options, providers, provider_options, extra_config=()):
    if sess_options is not None and not isinstance(sess_options, SessionOptions):
        raise _ephost.InvalidArgument(f"sess_options must be an ephost.SessionOptions, got {type(sess_options).__name__}")
    settings = _ephost.SessionSettings()
    settings.config = (sess_options._config_entries() if sess_options else []) + list(extra_config)
    settings.providers = _provider_requests(providers, provider_options)
    return settings


def _model_argument(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return path_or_bytes
    if isinstance(path_or_bytes, (str, os.PathLike)):
        return os.fspath(path_or_bytes)
    raise _ephost.InvalidArgument(
        f"path_or_bytes must be a path or the model's bytes, got {type(path_or_bytes).__name__}")


class InferenceSession:
    """A loaded, partitioned and compiled model, ready to run.

    path_or_bytes     the model file, or its serialized bytes
    sess_options      an ephost.SessionOptions
    providers         provider names in registration-priority order (earlier is asked first), or
                      (name, options) pairs; default: every discovered plugin by its default priority.
                      The built-in "cpu" ("CPUExecutionProvider") takes what nobody claims.
    provider_options  a list of option dicts, one per provider
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        if kwargs:
            raise _ephost.InvalidArgument(f"unknown arguments: {', '.join(sorted(kwargs))}")
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._session = _ephost.Session(default_env(), _model_argument(path_or_bytes),
                                        _settings(sess_options, providers, provider_options))

    def get_inputs(self):
        return [NodeArg(*t) for t in self._session.inputs()]

    def get_outputs(self):
        return [NodeArg(*t) for t in self._session.outputs()]

    def get_session_options(self):
        return self._sess_options

    def get_providers(self):
        """The providers of this session, in registration-priority order (the CPU fallback last)."""
        return [p["name"] for p in self.get_partition_report()["providers"]]

    def get_partition_report(self):
        """Which provider runs each node, fused groups, refused claims and why (a dict)."""
        return json.loads(self._session.partition_report_json())

    def get_ep_context_report(self):
        """What happened to each EPContext node of the model (a list; empty for an ordinary model)."""
        return json.loads(self._session.ep_context_report_json())

    def end_profiling(self):
        """Writes the profile (a Chrome trace) recorded so far and returns its path (needs
        SessionOptions.enable_profiling = True, as onnxruntime)."""
        return self._session.end_profiling()

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model on `input_feed` (input name -> numpy array; a list of arrays for a sequence
        input; None for an empty optional) and returns the outputs named in `output_names` (every
        output when None or empty), in that order. Arrays already C-contiguous and of the declared
        type are not copied. Several threads may run one session at once."""
        if run_options is not None:
            raise _ephost.NotImplemented("run_options are not supported by ephost")
        if not isinstance(input_feed, dict):
            raise _ephost.InvalidArgument(f"input_feed must be a dict of input name -> value, got {type(input_feed).__name__}")
        return self._session.run(list(output_names or []), input_feed)
