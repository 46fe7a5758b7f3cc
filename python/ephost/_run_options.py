"""RunOptions, as onnxruntime's: options of one or more runs (InferenceSession.run, run_with_ort_values,
run_with_iobinding, run_async). `terminate` stops the runs that use these options: set it from
another thread and each such run stops (between steps, between Loop and Scan iterations, and between
pieces of some long CPU kernels) and raises ephost.Cancelled, a subclass of Fail as
onnxruntime raises, "run terminated by RunOptions.terminate"; a run started while it is set fails at
once. Clear it to run again. `timeout_ms` (an ephost addition: onnxruntime has no run deadline)
gives each run a deadline: past it the run stops the same way and raises ephost.DeadlineExceeded
(also a Fail). Either way the session stays usable."""
from . import _ephost
from ._strict import StrictAttributes


class RunOptions(StrictAttributes):
    """log_severity_level           severity of this run's log messages (-1: the session's; stored:
                                    ephost logs per process, see set_default_logger_severity)
    log_verbosity_level            VLOG level (stored, as for onnxruntime's release builds)
    logid                          a tag naming the run in its errors (onnxruntime's run_tag)
    terminate                      stop the runs using these options (thread-safe)
    timeout_ms                     each run's deadline in milliseconds, from its start (0: none;
                                   ephost addition, thread-safe, read when a run starts)
    only_execute_path_to_fetches   run only the steps the requested outputs need (ephost always
                                   does; True is accepted, False too)
    add_run_config_entry / get_run_config_entry   string entries (stored)"""

    def __init__(self):
        self._native = _ephost.RunOptions()
        self._log_severity_level = -1
        self._log_verbosity_level = 0
        self._logid = ""
        self._terminate = False
        self._timeout_ms = 0
        self._only_execute_path_to_fetches = False
        self._entries = {}

    @property
    def log_severity_level(self):
        return self._log_severity_level

    @log_severity_level.setter
    def log_severity_level(self, level):
        if isinstance(level, bool) or not isinstance(level, int) or not -1 <= level <= 4:
            raise _ephost.InvalidArgument(f"log_severity_level takes -1 (the session's) or 0 to 4, got {level!r}")
        self._log_severity_level = level

    @property
    def log_verbosity_level(self):
        return self._log_verbosity_level

    @log_verbosity_level.setter
    def log_verbosity_level(self, level):
        if isinstance(level, bool) or not isinstance(level, int) or level < 0:
            raise _ephost.InvalidArgument(f"log_verbosity_level takes an int >= 0, got {level!r}")
        self._log_verbosity_level = level

    @property
    def logid(self):
        return self._logid

    @logid.setter
    def logid(self, tag):
        if not isinstance(tag, str):
            raise _ephost.InvalidArgument(f"logid must be a str, got {type(tag).__name__}")
        self._native.set_tag(tag)
        self._logid = tag

    # onnxruntime's C/C++ name of logid.
    run_tag = logid

    @property
    def terminate(self):
        return self._terminate

    @terminate.setter
    def terminate(self, value):
        self._native.set_terminate(bool(value))
        self._terminate = bool(value)

    @property
    def timeout_ms(self):
        return self._timeout_ms

    @timeout_ms.setter
    def timeout_ms(self, value):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _ephost.InvalidArgument(f"timeout_ms takes an int >= 0 (milliseconds, 0: no deadline), got {value!r}")
        self._native.set_timeout_ms(value)
        self._timeout_ms = value

    @property
    def only_execute_path_to_fetches(self):
        return self._only_execute_path_to_fetches

    @only_execute_path_to_fetches.setter
    def only_execute_path_to_fetches(self, value):
        self._only_execute_path_to_fetches = bool(value)

    def add_run_config_entry(self, key, value):
        """Sets run configuration entry `key` to `value` (both str)."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise _ephost.InvalidArgument("add_run_config_entry takes str key and value")
        self._entries[key] = value

    def get_run_config_entry(self, key):
        """The value set for `key`; InvalidArgument when it was never set."""
        try:
            return self._entries[key]
        except KeyError:
            raise _ephost.InvalidArgument(f"run configuration entry '{key}' is not set") from None


def native_run_options(run_options):
    """The _ephost.RunOptions of `run_options` (None: none)."""
    if run_options is None:
        return None
    if not isinstance(run_options, RunOptions):
        raise _ephost.InvalidArgument(f"run_options must be an ephost.RunOptions, got {type(run_options).__name__}")
    return run_options._native
