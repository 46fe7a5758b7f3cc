"""InferenceSession, as onnxruntime's: created from a path or the model's bytes, with session options
and providers in registration-priority order; run takes and returns numpy arrays (sequences as lists,
empty optionals as None) and releases the GIL while the model runs."""
import json
import os
import threading

from . import _ephost
from ._env import default_env, ephost_provider_name, public_provider_name
from ._io_binding import IOBinding
from ._ort_value import OrtValue, native_value
from ._run_options import native_run_options
from ._session_options import SessionOptions


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
        requests.append(_ephost.ProviderRequest(ephost_provider_name(entry), pairs))
    return requests


def _settings(sess_options, providers, provider_options, extra_config=()):
    if sess_options is not None and not isinstance(sess_options, SessionOptions):
        raise _ephost.InvalidArgument(f"sess_options must be an ephost.SessionOptions, got {type(sess_options).__name__}")
    settings = _ephost.SessionSettings()
    settings.config = (sess_options._config_entries() if sess_options else []) + list(extra_config)
    device_providers = [_ephost.ProviderRequest(name, list(options.items()))
                        for name, options in (sess_options._provider_requests() if sess_options else [])]
    settings.providers = device_providers + _provider_requests(providers, provider_options)
    settings.initializers = sess_options._initializer_values() if sess_options else []
    if sess_options is not None and sess_options._provider_state_callback is not None:
        settings.provider_state_callback = sess_options._provider_state_callback
    return settings


def _model_argument(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return path_or_bytes
    if isinstance(path_or_bytes, (str, os.PathLike)):
        return os.fspath(path_or_bytes)
    raise _ephost.InvalidArgument(
        f"path_or_bytes must be a path or the model's bytes, got {type(path_or_bytes).__name__}")


class ModelMetadata:
    """What a model declares about itself, as onnxruntime.ModelMetadata."""

    __slots__ = ("producer_name", "producer_version", "domain", "description", "graph_name",
                 "graph_description", "version", "custom_metadata_map")

    def __init__(self, fields):
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def __repr__(self):
        return (f"ModelMetadata(producer_name={self.producer_name!r}, graph_name={self.graph_name!r}, "
                f"version={self.version!r})")


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
        settings = _settings(sess_options, providers, provider_options)
        self._provider_options = {r.name: dict(r.options) for r in settings.providers}
        self._session = _ephost.Session(default_env(), _model_argument(path_or_bytes), settings)
        self._model_meta = None

    def get_inputs(self):
        return [NodeArg(*t) for t in self._session.inputs()]

    def get_outputs(self):
        return [NodeArg(*t) for t in self._session.outputs()]

    def get_session_options(self):
        return self._sess_options

    def get_providers(self):
        """The providers of this session, in registration-priority order (the CPU fallback last), by
        ONNX Runtime's names where they have one (ephost._env explains the rule)."""
        return [public_provider_name(p["name"]) for p in self.get_partition_report()["providers"]]

    def get_provider_options(self):
        """The options given to each provider of this session: {provider name: {key: value}} (the
        options the session was created with; a provider's defaults are its own)."""
        out = {}
        for p in self.get_partition_report()["providers"]:
            name = p["name"]
            given = self._provider_options.get(name)
            if given is None:  # named with a device, "<plugin>:<index>"
                given = next((o for n, o in self._provider_options.items() if n.split(":")[0] == name), {})
            out[public_provider_name(name)] = dict(given)
        return out

    def get_modelmeta(self):
        """The model's metadata (producer_name, graph_name, domain, description, graph_description,
        version, custom_metadata_map), as onnxruntime's."""
        if self._model_meta is None:
            self._model_meta = ModelMetadata(json.loads(self._session.model_metadata_json()))
        return self._model_meta

    def get_overridable_initializers(self):
        """onnxruntime lists initializers a feed may override; ephost lets a feed override an
        initializer that is also a graph input, and lists none here."""
        return []

    def get_provider_states(self):
        """Where each provider runs and how it is doing now, in get_providers' order: a list of dicts
        with "provider", "state" ("in_process"; or, in a provider host process, "running",
        "restarting" after its process crashed or missed a deadline, "fallen_back" after too many
        failures), "failures", "process_id" (-1 when none runs) and "last_failure"."""
        return self._session.provider_states()

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
        type are not copied. Several threads may run one session at once. `run_options`: an
        ephost.RunOptions (its terminate stops the run)."""
        if not isinstance(input_feed, dict):
            raise _ephost.InvalidArgument(f"input_feed must be a dict of input name -> value, got {type(input_feed).__name__}")
        if run_options is None:  # the common case: no options to convert (measurably cheaper)
            return self._session.run(list(output_names or []), input_feed)
        return self._session.run_with_options(list(output_names or []), input_feed, native_run_options(run_options))

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """run with OrtValues in (host or device) and out: returns a list of OrtValues, in host memory."""
        if not isinstance(input_dict_ort_values, dict):
            raise _ephost.InvalidArgument("input_dict_ort_values must be a dict of input name -> OrtValue")
        names = list(input_dict_ort_values)
        values = [native_value(v, f"input '{n}'") for n, v in input_dict_ort_values.items()]
        results = self._session.run_with_values(list(output_names or []), names, values,
                                                native_run_options(run_options))
        return [OrtValue(v) for v in results]

    def io_binding(self):
        """A new IOBinding of this session's inputs and outputs."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the inputs and outputs `iobinding` binds (read the outputs with its get_outputs()
        or copy_outputs_to_cpu())."""
        if not isinstance(iobinding, IOBinding) or iobinding._session is not self:
            raise _ephost.InvalidArgument("run_with_iobinding takes an IOBinding made by this session's io_binding()")
        if run_options is None:
            iobinding._native.run()
        else:
            iobinding._native.run_with_options(native_run_options(run_options))

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Starts run(output_names, input_feed, run_options) on another thread and returns at once;
        when it ends, calls callback(outputs, user_data, err) on that thread, as onnxruntime: outputs
        is the list of arrays and err "" on success; outputs is [] and err the error's message on
        failure. Set run_options.terminate to stop it."""
        if not callable(callback):
            raise _ephost.InvalidArgument("run_async needs a callable callback(outputs, user_data, err)")
        if not isinstance(input_feed, dict):
            raise _ephost.InvalidArgument(f"input_feed must be a dict of input name -> value, got {type(input_feed).__name__}")
        native = native_run_options(run_options)
        names = list(output_names or [])
        feed = dict(input_feed)

        def work():
            try:
                outputs = self._session.run_with_options(names, feed, native)
            except Exception as e:  # noqa: BLE001  (handed to the callback, as onnxruntime)
                callback([], user_data, str(e))
                return
            callback(outputs, user_data, "")

        threading.Thread(target=work, name="ephost-run-async", daemon=True).start()
