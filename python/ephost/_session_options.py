"""SessionOptions, as onnxruntime's: attributes where onnxruntime has them, and
add_session_config_entry for every other documented key (ephost_session_options_keys.h), with
onnxruntime's key spellings."""
import enum

from . import _ephost
from ._ep_devices import OrtEpDevice, selection_policy_value
from ._ort_value import native_value
from ._strict import StrictAttributes

_KEYS = _ephost.documented_config_keys()


class GraphOptimizationLevel(enum.IntEnum):
    """As onnxruntime.GraphOptimizationLevel (the values of session.graph_optimization_level)."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """As onnxruntime.ExecutionMode (SessionOptions.execution_mode). ephost runs a graph's steps in
    order and parallelizes inside them (intra_op_num_threads): ORT_PARALLEL is accepted and runs as
    ORT_SEQUENTIAL does."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


def _flag(value):
    return "1" if value else "0"


class SessionOptions(StrictAttributes):
    """Configuration of a session. Attributes (as onnxruntime's; assigning any other raises
    AttributeError naming the closest):

    graph_optimization_level  GraphOptimizationLevel (default ORT_ENABLE_ALL)
    intra_op_num_threads      threads each kernel may use; 0 (default): all cores
    enable_mem_pattern        memory patterns (default True)
    enable_mem_reuse          buffer reuse from lifetime analysis (default True)
    enable_profiling          record a Chrome trace (default False); end_profiling() writes it
    profile_file_prefix       the trace file is "<prefix>_<date>_<time>.json" (default "ephost_profile")
    execution_mode            ExecutionMode (default ORT_SEQUENTIAL; see ExecutionMode)
    inter_op_num_threads, log_severity_level, log_verbosity_level, logid, enable_cpu_mem_arena,
    use_deterministic_compute  taken and kept as onnxruntime's, without effect on ephost (it runs
                              steps in order; logging is per process: set_default_logger_severity)
    optimized_model_filepath  ephost writes no optimized model: setting it raises NotImplemented
                              (ModelCompiler writes a compiled EPContext model)

    Every other key goes through add_session_config_entry (e.g. "session.disable_cpu_ep_fallback",
    "ep.context_enable", "ep.<provider>.<option>"); a misspelled key in a namespace ephost owns
    (session.*, ep.context_*, ep.share_*, ep.stop_share_*) raises InvalidArgument naming the closest
    documented key.
    """

    def __init__(self):
        self._entries = {}
        self._initializers = {}
        self._device_providers = []  # (provider request, options) from add_provider_for_devices
        self._provider_state_callback = None
        self._kept = {"execution_mode": ExecutionMode.ORT_SEQUENTIAL, "inter_op_num_threads": 0,
                      "log_severity_level": 2, "log_verbosity_level": 0, "logid": "",
                      "enable_cpu_mem_arena": True, "use_deterministic_compute": False}

    # -- configuration entries ------------------------------------------------------------------
    def add_session_config_entry(self, key, value):
        """Sets configuration entry `key` to `value` (both str); a later call for the same key wins."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise _ephost.InvalidArgument(
                f"add_session_config_entry takes str key and value, got {type(key).__name__} and "
                f"{type(value).__name__}")
        _ephost.check_config_entry(key, value)
        self._entries[key] = value

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Fixes every graph input dimension named `dim_name` to `dim_value` (an int > 0) when the model
        loads, so the session's shapes are static and providers plan at creation (as onnxruntime's).
        Sets "session.free_dimension_override.<dim_name>"."""
        self._add_free_dimension_override("FreeDimensionOverridePrefix", "add_free_dimension_override_by_name",
                                          dim_name, dim_value)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        """The same for dimensions whose denotation is `dim_denotation` (e.g. "DATA_BATCH")."""
        self._add_free_dimension_override("FreeDimensionOverrideDenotationPrefix",
                                          "add_free_dimension_override_by_denotation", dim_denotation, dim_value)

    def _add_free_dimension_override(self, prefix_key, method, name, value):
        if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise _ephost.InvalidArgument(f"{method} takes a str name and an int > 0, got {name!r} and {value!r}")
        self.add_session_config_entry(_KEYS[prefix_key] + name, str(value))

    def get_session_config_entry(self, key):
        """The value set for `key`; InvalidArgument when it was never set."""
        try:
            return self._entries[key]
        except KeyError:
            raise _ephost.InvalidArgument(f"session configuration entry '{key}' is not set") from None

    def _config_entries(self):
        return list(self._entries.items())

    # -- attributes (each one a documented key) -------------------------------------------------
    @property
    def graph_optimization_level(self):
        return GraphOptimizationLevel(int(self._entries.get(_KEYS["GraphOptimizationLevel"], "99")))

    @graph_optimization_level.setter
    def graph_optimization_level(self, level):
        try:
            level = GraphOptimizationLevel(level)
        except ValueError:
            raise _ephost.InvalidArgument(
                f"graph_optimization_level must be one of {[int(v) for v in GraphOptimizationLevel]}, "
                f"got {level!r}") from None
        self.add_session_config_entry(_KEYS["GraphOptimizationLevel"], str(int(level)))

    @property
    def intra_op_num_threads(self):
        return int(self._entries.get(_KEYS["IntraOpNumThreads"], "0"))

    @intra_op_num_threads.setter
    def intra_op_num_threads(self, count):
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise _ephost.InvalidArgument(f"intra_op_num_threads must be an int >= 0, got {count!r}")
        self.add_session_config_entry(_KEYS["IntraOpNumThreads"], str(count))

    @property
    def enable_mem_pattern(self):
        return self._entries.get(_KEYS["EnableMemPattern"], "1") == "1"

    @enable_mem_pattern.setter
    def enable_mem_pattern(self, enabled):
        self.add_session_config_entry(_KEYS["EnableMemPattern"], _flag(enabled))

    @property
    def enable_mem_reuse(self):
        return self._entries.get(_KEYS["EnableMemReuse"], "1") == "1"

    @enable_mem_reuse.setter
    def enable_mem_reuse(self, enabled):
        self.add_session_config_entry(_KEYS["EnableMemReuse"], _flag(enabled))

    @property
    def enable_profiling(self):
        return self._entries.get(_KEYS["EnableProfiling"], "0") == "1"

    @enable_profiling.setter
    def enable_profiling(self, enabled):
        self.add_session_config_entry(_KEYS["EnableProfiling"], _flag(enabled))

    @property
    def profile_file_prefix(self):
        return self._entries.get(_KEYS["ProfileFilePrefix"], "ephost_profile")

    @profile_file_prefix.setter
    def profile_file_prefix(self, prefix):
        if not isinstance(prefix, str):
            raise _ephost.InvalidArgument(f"profile_file_prefix must be a str, got {type(prefix).__name__}")
        self.add_session_config_entry(_KEYS["ProfileFilePrefix"], prefix)

    @property
    def execution_mode(self):
        return self._kept["execution_mode"]

    @execution_mode.setter
    def execution_mode(self, mode):
        try:
            self._kept["execution_mode"] = ExecutionMode(mode)
        except ValueError:
            raise _ephost.InvalidArgument(
                f"execution_mode must be ExecutionMode.ORT_SEQUENTIAL or ORT_PARALLEL, got {mode!r}") from None

    def _kept_int(name, low, high=None):  # noqa: N805  (a property factory, used in the class body)
        def get(self):
            return self._kept[name]

        def set_(self, value):
            if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
                bound = f"{low} to {high}" if high is not None else f">= {low}"
                raise _ephost.InvalidArgument(f"{name} must be an int {bound}, got {value!r}")
            self._kept[name] = value
        return property(get, set_)

    def _kept_flag(name):  # noqa: N805
        def get(self):
            return self._kept[name]

        def set_(self, value):
            self._kept[name] = bool(value)
        return property(get, set_)

    inter_op_num_threads = _kept_int("inter_op_num_threads", 0)
    log_severity_level = _kept_int("log_severity_level", 0, 4)
    log_verbosity_level = _kept_int("log_verbosity_level", 0)
    enable_cpu_mem_arena = _kept_flag("enable_cpu_mem_arena")
    use_deterministic_compute = _kept_flag("use_deterministic_compute")
    del _kept_int, _kept_flag

    @property
    def logid(self):
        return self._kept["logid"]

    @logid.setter
    def logid(self, value):
        if not isinstance(value, str):
            raise _ephost.InvalidArgument(f"logid must be a str, got {type(value).__name__}")
        self._kept["logid"] = value

    @property
    def optimized_model_filepath(self):
        return ""

    @optimized_model_filepath.setter
    def optimized_model_filepath(self, path):
        if path:
            raise _ephost.NotImplemented(
                "ephost does not write optimized models (optimized_model_filepath): to save compiling "
                "work, write an EPContext model with ephost.ModelCompiler(...).compile_to_file(path)")

    # -- initializers, custom ops, plugin EPs --------------------------------------------------------
    def add_initializer(self, name, ortvalue):
        """Supplies initializer `name` (an OrtValue in host memory) to the sessions created with these
        options: it replaces the model's initializer of that name (same type and shape) or makes the
        graph input `name` a constant. The value is read when a session is created."""
        if not isinstance(name, str):
            raise _ephost.InvalidArgument(f"add_initializer takes a str name, got {type(name).__name__}")
        value = native_value(ortvalue, "add_initializer's value")
        if value.location().provider:
            raise _ephost.InvalidArgument(
                f"add_initializer '{name}': the value lives on device '{value.location().provider}': give a "
                f"host value (OrtValue.ortvalue_from_numpy(array))")
        self._initializers[name] = value

    def register_custom_ops_library(self, library_path):
        """Not available: ephost loads operators from provider plugins, not onnxruntime custom-op
        libraries."""
        raise _ephost.NotImplemented(
            f"register_custom_ops_library('{library_path}'): ephost does not load onnxruntime custom-op "
            f"libraries. Implement the operators in an ephost provider plugin (the plugin SDK, "
            f"sdk/include/ephost/sdk) and load it with ephost.register_plugin_library(path) or "
            f"register_execution_provider_library(name, path)")

    def add_provider_for_devices(self, ep_devices, provider_options=None):
        """Appends the provider of `ep_devices` (from get_ep_devices(), all of one provider) on their
        device, with `provider_options` (str -> str), as onnxruntime 1.22's. ephost runs a provider on
        one device: give one device per call (several calls put one provider on several devices)."""
        devices = list(ep_devices)
        if not devices or not all(isinstance(d, OrtEpDevice) for d in devices):
            raise _ephost.InvalidArgument("add_provider_for_devices takes a non-empty list of ort.get_ep_devices() entries")
        if len({d.ep_name for d in devices}) > 1:
            raise _ephost.InvalidArgument(
                f"add_provider_for_devices: the devices belong to several providers "
                f"({', '.join(sorted({d.ep_name for d in devices}))}): call it once per provider")
        if len(devices) > 1:
            raise _ephost.NotImplemented(
                f"add_provider_for_devices: ephost runs provider '{devices[0].ep_name}' on one device: call it once "
                f"per device (each call adds the provider on that device)")
        options = {str(k): str(v) for k, v in (provider_options or {}).items()}
        self._device_providers.append((devices[0]._provider_request(), options))

    def set_provider_selection_policy(self, policy):
        """How providers are picked when the session names none: an ort.OrtExecutionProviderDevicePolicy
        (see it for how each maps onto ephost's session.ep_selection_policy)."""
        value = selection_policy_value(policy)
        if value:
            self.add_session_config_entry(_KEYS["EpSelectionPolicy"], value)
        else:
            self._entries.pop(_KEYS["EpSelectionPolicy"], None)

    def set_provider_state_callback(self, callback):
        """Calls `callback(state)` whenever a provider of a session created with these options changes
        state (only providers in a provider host process do: session.provider_isolation=process). `state`
        is a dict as InferenceSession.get_provider_states lists them, after the change: "restarting" or
        "fallen_back" after a failure, "running" when a new process took over. It is called on the thread
        of the run (or session creation) that saw the change; an exception it raises is reported as
        unraisable and the run goes on. None removes it. (ephost's own: onnxruntime has no such call.)"""
        if callback is not None and not callable(callback):
            raise _ephost.InvalidArgument(f"callback must be callable or None, got {type(callback).__name__}")
        self._provider_state_callback = callback

    def _provider_requests(self):
        return list(self._device_providers)

    def _initializer_values(self):
        return list(self._initializers.items())
