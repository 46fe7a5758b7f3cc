"""SessionOptions, as onnxruntime's: attributes where onnxruntime has them, and
add_session_config_entry for every other documented key (ephost_session_options_keys.h), with
onnxruntime's key spellings."""
import enum

from . import _ephost

_KEYS = _ephost.documented_config_keys()


class GraphOptimizationLevel(enum.IntEnum):
    """As onnxruntime.GraphOptimizationLevel (the values of session.graph_optimization_level)."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


def _flag(value):
    return "1" if value else "0"


class SessionOptions:
    """Configuration of a session. Attributes (as onnxruntime's):

    graph_optimization_level  GraphOptimizationLevel (default ORT_ENABLE_ALL)
    intra_op_num_threads      threads each kernel may use; 0 (default): all cores
    enable_mem_pattern        memory patterns (default True)
    enable_mem_reuse          buffer reuse from lifetime analysis (default True)
    enable_profiling          record a Chrome trace (default False); end_profiling() writes it
    profile_file_prefix       the trace file is "<prefix>_<date>_<time>.json" (default "ephost_profile")

    Every other key goes through add_session_config_entry (e.g. "session.disable_cpu_ep_fallback",
    "ep.context_enable", "ep.<provider>.<option>"); a misspelled key in a namespace ephost owns
    (session.*, ep.context_*, ep.share_*, ep.stop_share_*) raises InvalidArgument naming the closest
    documented key.
    """

    def __init__(self):
        self._entries = {}

    # -- configuration entries ------------------------------------------------------------------
    def add_session_config_entry(self, key, value):
        """Sets configuration entry `key` to `value` (both str); a later call for the same key wins."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise _ephost.InvalidArgument(
                f"add_session_config_entry takes str key and value, got {type(key).__name__} and "
                f"{type(value).__name__}")
        _ephost.check_config_entry(key, value)
        self._entries[key] = value

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
