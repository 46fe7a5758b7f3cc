// ephost._ephost: the compiled part of the ephost Python package. A client of libephost's public C API
// (through the header-only C++ wrapper), like any application; the Python API (ephost/__init__.py)
// is built on it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "errors.h"
#include "numpy_values.h"
#include "session.h"

namespace py = pybind11;
using namespace ephost_python;

namespace {

std::shared_ptr<Ephost::Env> create_env(EphostLogLevel level, const std::optional<std::vector<std::string>>& dirs) {
  return dirs ? std::make_shared<Ephost::Env>(level, *dirs) : std::make_shared<Ephost::Env>(level);
}

// Refuses a configuration entry the library would refuse (a misspelled key of a namespace the host
// owns, a value too long), when it is added rather than when a session is created from it.
void check_config_entry(const std::string& key, const std::string& value) {
  Ephost::SessionOptions().add_config(key, value);
}

// Every key ephost_session_options_keys.h documents, by constant name.
py::dict documented_config_keys() {
  py::dict keys;
  keys["DisableCpuEpFallback"] = kEphostSessionOptionsDisableCpuEpFallback;
  keys["ModelExternalInitializersFileFolderPath"] = kEphostSessionOptionsModelExternalInitializersFileFolderPath;
  keys["EnableMemPattern"] = kEphostSessionOptionsEnableMemPattern;
  keys["EnableMemReuse"] = kEphostSessionOptionsEnableMemReuse;
  keys["GraphOptimizationLevel"] = kEphostSessionOptionsGraphOptimizationLevel;
  keys["IntraOpNumThreads"] = kEphostSessionOptionsIntraOpNumThreads;
  keys["EpSelectionPolicy"] = kEphostSessionOptionsEpSelectionPolicy;
  keys["EnableProfiling"] = kEphostSessionOptionsEnableProfiling;
  keys["ProfileFilePrefix"] = kEphostSessionOptionsProfileFilePrefix;
  keys["DisableEpContextFallback"] = kEphostSessionOptionsDisableEpContextFallback;
  keys["FailOnSuboptimalCompiledModel"] = kEphostSessionOptionsFailOnSuboptimalCompiledModel;
  keys["EpContextSourceModelPath"] = kEphostSessionOptionsEpContextSourceModelPath;
  keys["EpContextRebuild"] = kEphostSessionOptionsEpContextRebuild;
  keys["EpContextEnable"] = kEphostSessionOptionsEpContextEnable;
  keys["EpContextFilePath"] = kEphostSessionOptionsEpContextFilePath;
  keys["EpContextEmbedMode"] = kEphostSessionOptionsEpContextEmbedMode;
  keys["EpContextNodeNamePrefix"] = kEphostSessionOptionsEpContextNodeNamePrefix;
  keys["EpContextModelExternalInitializersFileName"] = kEphostSessionOptionsEpContextModelExternalInitializersFileName;
  keys["EpContextOverwrite"] = kEphostSessionOptionsEpContextOverwrite;
  keys["ShareEpContexts"] = kEphostSessionOptionsShareEpContexts;
  keys["StopShareEpContexts"] = kEphostSessionOptionsStopShareEpContexts;
  return keys;
}

// For tests of the exception classes: raises what a status of `code` with `message` raises.
[[noreturn]] void raise_status(int code, const std::string& message) {
  throw Ephost::Exception(static_cast<EphostStatusCode>(code), message);
}

}  // namespace

PYBIND11_MODULE(_ephost, m) {
  m.doc() = "ephost's compiled core (use the ephost package)";
  register_errors(m);

  m.attr("API_VERSION") = EPHOST_API_VERSION;
  m.def("version", &Ephost::version_string, "The libephost version, e.g. '0.1.0'");
  m.def("check_config_entry", &check_config_entry, py::arg("key"), py::arg("value"));
  m.def("documented_config_keys", &documented_config_keys);
  m.def("raise_status", &raise_status, py::arg("code"), py::arg("message"));
  m.def("input_buffer_address", &input_buffer_address, py::arg("array"), py::arg("elem_type"));

  py::enum_<EphostLogLevel>(m, "LogLevel")
      .value("VERBOSE", EPHOST_LOG_VERBOSE)
      .value("INFO", EPHOST_LOG_INFO)
      .value("WARNING", EPHOST_LOG_WARNING)
      .value("ERROR", EPHOST_LOG_ERROR)
      .value("FATAL", EPHOST_LOG_FATAL);

  py::class_<Ephost::Env, std::shared_ptr<Ephost::Env>>(m, "Env")
      .def(py::init(&create_env), py::arg("log_level") = EPHOST_LOG_WARNING, py::arg("plugin_dirs") = py::none(),
           "Discovers plugins (EPHOST_PLUGIN_PATH and the default folder, or only plugin_dirs)")
      .def("register_plugin_library", &Ephost::Env::register_plugin, py::arg("path"))
      .def("plugin_report_json", &Ephost::Env::plugin_report_json);

  py::class_<ProviderRequest>(m, "ProviderRequest")
      .def(py::init<std::string, std::vector<std::pair<std::string, std::string>>>(), py::arg("name"),
           py::arg("options"));
  py::class_<SessionSettings>(m, "SessionSettings")
      .def(py::init<>())
      .def_readwrite("config", &SessionSettings::config)
      .def_readwrite("providers", &SessionSettings::providers);

  py::class_<PySession>(m, "Session")
      .def(py::init<std::shared_ptr<Ephost::Env>, py::object, const SessionSettings&>(), py::arg("env"),
           py::arg("model"), py::arg("settings"))
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("partition_report_json", &PySession::partition_report_json)
      .def("ep_context_report_json", &PySession::ep_context_report_json)
      .def("end_profiling", &PySession::end_profiling)
      .def("run", &PySession::run, py::arg("output_names"), py::arg("feed"));
}
