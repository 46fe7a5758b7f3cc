// ephost._ephost: the compiled part of the ephost Python package. A client of libephost's public C API
// (through the header-only C++ wrapper), like any application; the Python API (ephost/__init__.py)
// is built on it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <optional>

#include "ephost/ephost_cxx_api.h"
#include "ephost/ephost_session_options_keys.h"
#include "errors.h"
#include "numpy_values.h"
#include "session.h"
#include "values.h"

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
  keys["KeepInitializers"] = kEphostSessionOptionsKeepInitializers;
  keys["EnableMemPattern"] = kEphostSessionOptionsEnableMemPattern;
  keys["EnableMemReuse"] = kEphostSessionOptionsEnableMemReuse;
  keys["GraphOptimizationLevel"] = kEphostSessionOptionsGraphOptimizationLevel;
  keys["IntraOpNumThreads"] = kEphostSessionOptionsIntraOpNumThreads;
  keys["IntraOpAllowSpinning"] = kEphostSessionOptionsIntraOpAllowSpinning;
  keys["EpSelectionPolicy"] = kEphostSessionOptionsEpSelectionPolicy;
  keys["EnableProfiling"] = kEphostSessionOptionsEnableProfiling;
  keys["ProfileFilePrefix"] = kEphostSessionOptionsProfileFilePrefix;
  keys["CompileTimeoutMs"] = kEphostSessionOptionsCompileTimeoutMs;
  keys["ProviderIsolation"] = kEphostSessionOptionsProviderIsolation;
  keys["FreeDimensionOverridePrefix"] = kEphostSessionOptionsFreeDimensionOverridePrefix;
  keys["FreeDimensionOverrideDenotationPrefix"] = kEphostSessionOptionsFreeDimensionOverrideDenotationPrefix;
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

// Every device of the env's loaded plugins, as dicts (GetDevice).
py::list devices(const Ephost::Env& env) {
  py::list out;
  for (const EphostDeviceReport& d : env.devices()) {
    py::dict entry;
    entry["plugin"] = d.plugin ? d.plugin : "";
    entry["index"] = d.index;
    entry["device_type"] = d.device_type;
    entry["vendor"] = d.vendor ? d.vendor : "";
    entry["name"] = d.name ? d.name : "";
    entry["driver_version"] = d.driver_version ? d.driver_version : "";
    entry["hardware_architecture"] = d.hardware_architecture ? d.hardware_architecture : "";
    entry["memory_bytes"] = d.memory_bytes;
    entry["host_memory_usable"] = d.host_memory_usable != 0;
    out.append(entry);
  }
  return out;
}

DeviceName device_name(const std::string& provider, uint32_t index) { return {provider, index}; }

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
      .def("plugin_report_json", &Ephost::Env::plugin_report_json)
      .def("devices", &devices);
  m.def("set_default_log_level", &Ephost::set_default_log_level, py::arg("level"));

  py::class_<DeviceName>(m, "DeviceName")
      .def(py::init(&device_name), py::arg("provider") = "", py::arg("index") = 0)
      .def_readonly("provider", &DeviceName::provider)
      .def_readonly("index", &DeviceName::index);

  py::class_<Ephost::RunOptions>(m, "RunOptions")
      .def(py::init<>())
      .def("set_terminate", &Ephost::RunOptions::set_terminate, py::arg("terminate"))
      .def("set_tag", &Ephost::RunOptions::set_tag, py::arg("tag"))
      .def(
          "set_timeout_ms",
          [](Ephost::RunOptions& o, int64_t ms) { o.set_timeout(std::chrono::milliseconds(ms)); },
          py::arg("timeout_ms"));

  py::class_<PyValue>(m, "Value")
      .def_static("from_numpy", &PyValue::from_numpy, py::arg("env"), py::arg("array"), py::arg("device"),
                  py::arg("shared") = false)
      .def_static("allocate", &PyValue::allocate, py::arg("env"), py::arg("shape"), py::arg("dtype"),
                  py::arg("device"), py::arg("shared") = false)
      .def("is_shared", &PyValue::is_shared)
      .def("kind", &PyValue::kind)
      .def("shape", &PyValue::shape)
      .def("elem_type", &PyValue::elem_type)
      .def("location", &PyValue::location)
      .def("numpy", &PyValue::numpy)
      .def("update_inplace", &PyValue::update_inplace, py::arg("array"))
      .def("data_ptr", &PyValue::data_ptr);

  py::enum_<EphostValueKind>(m, "ValueKind")
      .value("UNDEFINED", EPHOST_VALUE_UNDEFINED)
      .value("TENSOR", EPHOST_VALUE_TENSOR)
      .value("SEQUENCE", EPHOST_VALUE_SEQUENCE)
      .value("NONE", EPHOST_VALUE_NONE);
  m.def("element_type_name", [](int32_t type) { return std::string(EphostElementTypeName(type)); });
  m.def("element_type_of", [](py::handle dtype) {
    return elem_type_of(py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype)));
  });

  py::class_<ProviderRequest>(m, "ProviderRequest")
      .def(py::init<std::string, std::vector<std::pair<std::string, std::string>>>(), py::arg("name"),
           py::arg("options"))
      .def_readonly("name", &ProviderRequest::name)
      .def_readonly("options", &ProviderRequest::options);
  py::class_<SessionSettings>(m, "SessionSettings")
      .def(py::init<>())
      .def_readwrite("config", &SessionSettings::config)
      .def_readwrite("providers", &SessionSettings::providers)
      .def_readwrite("initializers", &SessionSettings::initializers)
      .def_readwrite("provider_state_callback", &SessionSettings::provider_state_callback);

  py::class_<PySession>(m, "Session")
      .def(py::init<std::shared_ptr<Ephost::Env>, py::object, const SessionSettings&>(), py::arg("env"),
           py::arg("model"), py::arg("settings"))
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("partition_report_json", &PySession::partition_report_json)
      .def("provider_states",
           [](const PySession& s) {
             py::list out;
             for (const auto& p : s.native().provider_states())
               out.append(provider_state_dict(p.provider, p.state, p.failures, p.process_id, p.last_failure));
             return out;
           })
      .def("ep_context_report_json", &PySession::ep_context_report_json)
      .def("end_profiling", &PySession::end_profiling)
      .def("model_metadata_json", &PySession::model_metadata_json)
      .def(
          "run",
          [](const PySession& s, const std::vector<std::string>& output_names, const py::dict& feed) {
            return s.run(output_names, feed, nullptr);
          },
          py::arg("output_names"), py::arg("feed"))
      .def("run_with_options", &PySession::run, py::arg("output_names"), py::arg("feed"), py::arg("run_options"))
      .def("run_with_values", &PySession::run_with_values, py::arg("output_names"), py::arg("input_names"),
           py::arg("inputs"), py::arg("run_options") = nullptr)
      .def("io_binding", [](const PySession& s) { return std::make_unique<PyIoBinding>(s.native()); },
           py::keep_alive<0, 1>());

  py::class_<PyIoBinding>(m, "IoBinding")
      .def("bind_input", &PyIoBinding::bind_input, py::arg("name"), py::arg("value"))
      .def("bind_output", &PyIoBinding::bind_output, py::arg("name"), py::arg("value"))
      .def("bind_output_to_device", &PyIoBinding::bind_output_to_device, py::arg("name"), py::arg("device"))
      .def("run", [](PyIoBinding& b) { b.run(nullptr); })  // without options: no argument to convert
      .def("run_with_options", &PyIoBinding::run, py::arg("run_options"))
      .def("output", &PyIoBinding::output, py::arg("name"))
      .def("clear", &PyIoBinding::clear);
}
